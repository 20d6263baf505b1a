import AsyncHTTPClient
import CofferPinning
import CofferTestSupport
import CofferTesting
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// Real TLS servers on 127.0.0.1 (NIOSSL, in-process) and real clients: a raw SwiftNIO channel, the
/// probe the CLI uses, and AsyncHTTPClient.
@Suite("Pinning over loopback TLS")
struct LoopbackTLSTests {
    let scene: PinningScene
    init() throws { scene = try PinningScene() }

    private func withServers(_ body: (_ real: Int, _ attacker: Int) async throws -> Void) async throws {
        let real = try await LoopbackTLSServer(chain: scene.servedChain, privateKeyPEM: scene.leaf.privateKey.pemRepresentation)
        let attacker = try await LoopbackTLSServer(chain: scene.attackerChain, privateKeyPEM: scene.attackerLeaf.privateKey.pemRepresentation)
        do {
            try await body(real.port, attacker.port)
        } catch {
            try? await real.shutdown()
            try? await attacker.shutdown()
            throw error
        }
        try await real.shutdown()
        try await attacker.shutdown()
    }

    /// Connects a raw NIO channel through the evaluator's handler; returns the validated chain's length.
    private func handshake(port: Int, evaluator: PinningEvaluator, hostname: String = "localhost") async throws -> Int {
        try await pinnedHandshake(port: port, hostname: hostname, evaluator: evaluator)
    }

    @Test func rawNIOClientAcceptsTheRightPinAndRefusesTheAttacker() async throws {
        let reports = NIOLockedValueBox<[PinningReport]>([])
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin])], reports: reports)
        try await withServers { real, attacker in
            let validated = try await handshake(port: real, evaluator: evaluator)
            #expect(validated == 3)
            await #expect(throws: (any Error).self) { try await handshake(port: attacker, evaluator: evaluator) }
        }
        let verdicts = reports.withLockedValue { $0.map(\.verdict) }
        #expect(verdicts == [.matched(try scene.pin(scene.leaf)), .mismatch])
    }

    @Test func rawNIOClientRejectsAHostnameMismatchEvenWithAMatchingPin() async throws {
        let evaluator = try scene.evaluator([HostPins(host: "elsewhere.test", pins: [scene.pin(scene.leaf), scene.backupPin])])
        try await withServers { real, _ in
            await #expect(throws: (any Error).self) { try await handshake(port: real, evaluator: evaluator, hostname: "elsewhere.test") }
        }
    }

    @Test func probeReportsTheServedChainAndTheVerdict() async throws {
        try await withServers { real, attacker in
            let chain = try await TLSProbe.servedChain(host: "127.0.0.1", port: real, serverName: "localhost")
            #expect(chain.map(\.der) == scene.servedChain)
            #expect(chain.first?.publicKeyPin.base64 == TestPKI.spkiPin(scene.leaf.certificate))
            let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.pki.intermediate), scene.backupPin], positions: .intermediates)])
            let good = try await TLSProbe.check(host: "127.0.0.1", port: real, serverName: "localhost", evaluator: evaluator)
            #expect(good.verdict == .matched(try scene.pin(scene.pki.intermediate)))
            let bad = try await TLSProbe.check(host: "127.0.0.1", port: attacker, serverName: "localhost", evaluator: evaluator)
            #expect(bad.verdict == .mismatch)
        }
        await #expect(throws: PinningError.self) { try await TLSProbe.servedChain(host: "127.0.0.1", port: 1, timeout: .seconds(5)) }
    }

    /// `HTTPClient.Configuration.pinned(by:host:knownIntermediates:)` for `localhost` with a connect timeout for a loaded
    /// two-core host. Until the validation ran on `ValidationExecutor` (a task on the cooperative pool
    /// before), tests elsewhere in the run that waited synchronously for subprocesses held the pool's
    /// threads, and in CI every test of this suite finished 208 to 243 s after it started;
    /// BusyCooperativePoolTests holds that pool on purpose. What is tested here is the verdict.
    private static func pinned(by evaluator: PinningEvaluator, knownIntermediates: [ChainCertificate] = []) throws -> HTTPClient.Configuration {
        var configuration = try HTTPClient.Configuration.pinned(by: evaluator, host: "localhost", knownIntermediates: knownIntermediates)
        configuration.timeout.connect = Self.patience
        return configuration
    }

    private static let patience: TimeAmount = .seconds(60)

    @Test func asyncHTTPClientBuiltWithThePolicy() async throws {
        let reports = NIOLockedValueBox<[PinningReport]>([])
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin])], reports: reports)
        // Two clients sharing the evaluator: the second one's connections find both paths cached.
        let clients = [
            HTTPClient(eventLoopGroupProvider: .singleton, configuration: try Self.pinned(by: evaluator)),
            HTTPClient(eventLoopGroupProvider: .singleton, configuration: try Self.pinned(by: evaluator)),
        ]
        do {
            try await withServers { real, attacker in
                for client in clients {
                    let response = try await client.execute(HTTPClientRequest(url: "https://localhost:\(real)/"), timeout: Self.patience)
                    #expect(response.status == .ok)
                    await #expect(throws: PinningError.pinMismatch) {
                        _ = try await client.execute(HTTPClientRequest(url: "https://localhost:\(attacker)/"), timeout: Self.patience)
                    }
                }
            }
        } catch {
            for client in clients { try await client.shutdown() }
            throw error
        }
        for client in clients { try await client.shutdown() }
        let verdicts = reports.withLockedValue { $0.map(\.verdict) }
        let matched = PinningVerdict.matched(try scene.pin(scene.leaf))
        #expect(verdicts.first == matched)
        #expect(verdicts.filter { $0 == matched }.count == 2)
        #expect(verdicts.filter { $0 == .mismatch }.count >= 2)
    }

    @Test func asyncHTTPClientMatchesIntermediatesItIsGiven() async throws {
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.pki.intermediate), scene.backupPin], positions: .intermediates)])
        let known = [try ChainCertificate(der: scene.pki.intermediate.der)]
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try Self.pinned(by: evaluator, knownIntermediates: known))
        let blind = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try Self.pinned(by: evaluator))
        do {
            try await withServers { real, _ in
                let response = try await client.execute(HTTPClientRequest(url: "https://localhost:\(real)/"), timeout: Self.patience)
                #expect(response.status == .ok)
                // Without the intermediate the path cannot be rebuilt: refused, never accepted.
                await #expect(throws: PinningError.self) {
                    _ = try await blind.execute(HTTPClientRequest(url: "https://localhost:\(real)/"), timeout: Self.patience)
                }
            }
        } catch {
            try await client.shutdown()
            try await blind.shutdown()
            throw error
        }
        try await client.shutdown()
        try await blind.shutdown()
    }
}

/// Connects to `address`:`port` through `evaluator`'s SwiftNIO handler asking for `hostname`, and returns
/// the validated chain's length; throws when the handshake failed.
func pinnedHandshake(port: Int, hostname: String, address: String = "127.0.0.1", evaluator: PinningEvaluator) async throws -> Int {
    let context = try NIOSSLContext(configuration: evaluator.policy.makeTLSConfiguration())
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(try evaluator.makeClientHandler(context: context, serverHostname: hostname))
            }
        }
        .connect(host: address, port: port).get()
    defer { channel.close(promise: nil) }
    // A write completes only after the handshake did (and fails when it failed).
    try await channel.writeAndFlush(ByteBuffer(string: "GET / HTTP/1.1\r\nhost: \(hostname)\r\n\r\n")).get()
    return try await channel.nioSSL_peerValidatedCertificateChain().get()?.count ?? 0
}
