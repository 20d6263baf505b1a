import AsyncHTTPClient
import CofferPinning
import CofferTestSupport
import CofferTesting
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// A pinned connection's first chain validation must not need a free thread of Swift's cooperative
/// pool: an application that holds them all (waiting synchronously for a subprocess, a lock or a
/// semaphore) would otherwise stall every pinned handshake until its connect timeout, as this package's
/// own test run did in CI (every LoopbackTLSTests test finishing 208 to 243 s after it started).
@Suite("Pinned handshakes while the cooperative pool is held")
struct BusyCooperativePoolTests {
    let scene: PinningScene
    init() throws { scene = try PinningScene() }

    /// Both clients' handshakes run while every thread of the cooperative pool is held; each is waited
    /// for synchronously, and given up on (a failure) after a minute rather than hanging the run.
    @Test func handshakesFinishWhileEveryCooperativeThreadIsHeld() async throws {
        let server = try await LoopbackTLSServer(chain: scene.servedChain, privateKeyPEM: scene.leaf.privateKey.pemRepresentation)
        let rules = [try HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin])]
        // One evaluator each, so that neither finds the other's validation cached.
        let raw = try scene.evaluator(rules)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try .pinned(by: scene.evaluator(rules), host: "localhost"))
        let port = server.port

        let (handshake, request) = try await CooperativePool.whileHeld {
            let handshake = Self.wait(for: try Self.rawHandshake(port: port, evaluator: raw))
            let request = Self.wait(for: client.execute(request: try HTTPClient.Request(url: "https://localhost:\(port)/")).map(\.status))
            return (handshake, request)
        }
        try await client.shutdown()
        try await server.shutdown()

        #expect(try handshake.get() == 3, "the raw SwiftNIO handshake's validated chain")
        #expect(try request.get() == .ok, "AsyncHTTPClient's pinned request")
    }

    /// Waits for `future` without a cooperative thread, up to a minute.
    private static func wait<Value: Sendable>(for future: EventLoopFuture<Value>) -> Result<Value, any Error> {
        let done = DispatchSemaphore(value: 0)
        let outcome = NIOLockedValueBox<Result<Value, any Error>?>(nil)
        future.whenComplete { result in
            outcome.withLockedValue { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success, let result = outcome.withLockedValue({ $0 }) else {
            return .failure(StillWaiting())
        }
        return result
    }

    /// A TLS handshake through `evaluator`'s SwiftNIO handler, as futures on the event loop; its value is
    /// the validated chain's length.
    private static func rawHandshake(port: Int, evaluator: PinningEvaluator) throws -> EventLoopFuture<Int> {
        let context = try NIOSSLContext(configuration: evaluator.policy.makeTLSConfiguration())
        return ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try evaluator.makeClientHandler(context: context, serverHostname: "localhost"))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .flatMap { channel in
                channel.writeAndFlush(ByteBuffer(string: "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"))
                    .flatMap { channel.nioSSL_peerValidatedCertificateChain() }
                    .map { $0?.count ?? 0 }
                    .always { _ in channel.close(promise: nil) }
            }
    }

    struct StillWaiting: Error, CustomStringConvertible {
        var description: String { "still waiting after a minute with every cooperative thread held" }
    }
}

/// Swift's cooperative pool held: one thread per active processor (the pool's width on Linux), the
/// caller's among them.
enum CooperativePool {
    /// Runs `body` synchronously on the caller's cooperative thread once tasks hold every other thread
    /// of the pool, then lets them go.
    static func whileHeld<Result: Sendable>(_ body: @Sendable () throws -> Result) async throws -> Result {
        let others = ProcessInfo.processInfo.activeProcessorCount - 1
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holders = (0..<others).map { _ in
            Task.detached {
                started.signal()
                release.wait()
            }
        }
        defer {
            for _ in holders { release.signal() }
        }
        return try holdingCallersThread(started: started, count: others, body)
    }

    /// Synchronous, so that the caller's thread stays held while the others start and `body` runs.
    private static func holdingCallersThread<Result>(started: DispatchSemaphore, count: Int, _ body: () throws -> Result) throws -> Result {
        for _ in 0..<count { started.wait() }
        return try body()
    }
}
