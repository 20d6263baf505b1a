// What TLS pinning through Coffer costs per handshake, against BoringSSL's own verification.
//
//   cd Benchmarks && swift run -c release pinning-handshakes [--rounds 10] [--per-round 100]
//
// A NIOSSL server on 127.0.0.1 serves leaf + intermediate (P-256, from `TestPKI`); a SwiftNIO client
// connects, completes a full TLS handshake and closes, in four configurations:
//
//   boringssl         BoringSSL's verification (`.fullVerification`, the test root the only anchor)
//   coffer            Coffer's evaluator, no pins (swift-certificates validation in BoringSSL's place)
//   coffer-pinned     Coffer's evaluator with the host pinned (validation, then the pins), its validation
//                     cache on: every handshake after the first to this server finds the chain validated
//   coffer-cold       the same with the cache off: every handshake validates (a first contact)
//
// The configurations take turns in rounds (the order rotating), so that drift on a noisy machine
// hits all of them alike; each reports the median and p90 over all its handshakes, and the added cost
// is the median over rounds of (configuration's round median − BoringSSL's round median).
// Then the evaluator alone (served DER chain to verdict, no connection), with and without the cache.
import CofferPinning
import CofferTesting
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

struct Options {
    var rounds = 10
    var perRound = 100

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--rounds": rounds = try Self.count(iterator.next(), for: argument)
            case "--per-round": perRound = try Self.count(iterator.next(), for: argument)
            default: throw UsageError(text: "unknown argument '\(argument)'; usage: pinning-handshakes [--rounds N] [--per-round N]")
            }
        }
    }

    private static func count(_ text: String?, for option: String) throws -> Int {
        guard let text, let value = Int(text), value > 0 else { throw UsageError(text: "\(option) needs a positive whole number") }
        return value
    }
}

struct UsageError: Error, CustomStringConvertible { let text: String; var description: String { text } }
struct HandshakeFailed: Error, CustomStringConvertible { let description: String }

/// A client configuration: a NIOSSL context and, for Coffer's, the evaluator that replaces BoringSSL's verification.
struct Configuration: Sendable {
    let name: String
    let context: NIOSSLContext
    let evaluator: PinningEvaluator?
}

/// One connection: TCP connect, full TLS handshake, close. Returns the handshake's wall time in µs.
func handshake(_ configuration: Configuration, port: Int) async throws -> Double {
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    let completion = loop.makePromise(of: Void.self)
    let start = ContinuousClock.now
    let channel: any Channel
    do {
        channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try configuration.evaluator?.makeClientHandler(context: configuration.context, serverHostname: "localhost")
                        ?? NIOSSLClientHandler(context: configuration.context, serverHostname: "localhost")
                    try channel.pipeline.syncOperations.addHandler(tls)
                    try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(completion))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
    } catch {
        completion.fail(error)
        throw error
    }
    do {
        try await completion.futureResult.get()
    } catch {
        try? await channel.close()
        throw HandshakeFailed(description: "\(configuration.name): \(error)")
    }
    let elapsed = ContinuousClock.now - start
    try await channel.close()
    return microseconds(elapsed)
}

/// Completes a promise when the TLS handshake completed; fails it when the channel failed or closed first.
final class HandshakeWaiter: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private let completion: EventLoopPromise<Void>
    init(_ completion: EventLoopPromise<Void>) { self.completion = completion }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { completion.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        completion.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        completion.fail(HandshakeFailed(description: "the connection closed before the handshake completed"))
        context.fireChannelInactive()
    }
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func format(_ value: Double) -> String { String(format: "%8.1f", value) }

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}

let pki = try TestPKI(name: "Benchmark")
let leaf = try pki.issueServerCertificate(for: ["localhost"])
let servedChain = [leaf.der, pki.intermediate.der]
let server = try await LoopbackTLSServer(chain: servedChain, privateKeyPEM: leaf.privateKey.pemRepresentation)

let trust = PinningPolicy.Trust.only([pki.root.certificate])
let unpinnedPolicy = try PinningPolicy(hosts: [], trust: trust)
let backupPin = try Pin(kind: .publicKey, sha256: Array(repeating: 7, count: 32))
let pinnedPolicy = try PinningPolicy(hosts: [try HostPins(host: "localhost", pins: [try ChainCertificate(der: leaf.der).publicKeyPin, backupPin])], trust: trust)
let pinned = PinningEvaluator(policy: pinnedPolicy)
let cold = PinningEvaluator(policy: pinnedPolicy, validationCacheLifetime: .zero)
let configurations = [
    Configuration(name: "boringssl", context: try NIOSSLContext(configuration: unpinnedPolicy.makeTLSConfiguration()), evaluator: nil),
    Configuration(name: "coffer", context: try NIOSSLContext(configuration: unpinnedPolicy.makeTLSConfiguration()), evaluator: PinningEvaluator(policy: unpinnedPolicy)),
    Configuration(name: "coffer-pinned", context: try NIOSSLContext(configuration: pinnedPolicy.makeTLSConfiguration()), evaluator: pinned),
    Configuration(name: "coffer-cold", context: try NIOSSLContext(configuration: pinnedPolicy.makeTLSConfiguration()), evaluator: cold),
]

// The evaluator must accept the right chain, or the figures mean nothing.
let check = await pinned.evaluate(servedChain: servedChain, hostname: "localhost")
guard check.isAccepted, case .matched = check.verdict else {
    FileHandle.standardError.write(Data("the pinned evaluator did not accept the served chain: \(check.verdict)\n".utf8))
    exit(1)
}

print("\(options.rounds) rounds × \(options.perRound) handshakes per configuration, 127.0.0.1:\(server.port), P-256 leaf + intermediate")
for configuration in configurations {
    for _ in 0..<50 { _ = try await handshake(configuration, port: server.port) }
}
var samples: [String: [Double]] = [:]
var roundMedians: [String: [Double]] = [:]
for round in 0..<options.rounds {
    let order = (0..<configurations.count).map { configurations[($0 + round) % configurations.count] }
    for configuration in order {
        var times: [Double] = []
        times.reserveCapacity(options.perRound)
        for _ in 0..<options.perRound { times.append(try await handshake(configuration, port: server.port)) }
        samples[configuration.name, default: []] += times
        roundMedians[configuration.name, default: []].append(percentile(times, 0.5))
    }
}
try await server.shutdown()

let baseline = roundMedians["boringssl"] ?? []
print("")
print("configuration     handshakes   median µs    p90 µs   added µs (median of round differences)")
for configuration in configurations {
    let all = samples[configuration.name] ?? []
    let medians = roundMedians[configuration.name] ?? []
    let added = configuration.evaluator == nil ? "" : format(percentile(zip(medians, baseline).map { $0 - $1 }, 0.5))
    print(
        configuration.name.padding(toLength: 16, withPad: " ", startingAt: 0)
            + String(format: "%11d", all.count) + "   " + format(percentile(all, 0.5)) + "  " + format(percentile(all, 0.9)) + "   " + added
    )
}

print("")
print("evaluator alone (served DER chain to verdict)   median µs    p90 µs")
for (name, evaluator) in [("cached", pinned), ("no cache", cold)] {
    var times: [Double] = []
    for _ in 0..<1_000 {
        let start = ContinuousClock.now
        let outcome = await evaluator.evaluate(servedChain: servedChain, hostname: "localhost")
        times.append(microseconds(ContinuousClock.now - start))
        guard outcome.isAccepted else { exit(1) }
    }
    print(name.padding(toLength: 45, withPad: " ", startingAt: 0) + "   " + format(percentile(times, 0.5)) + "  " + format(percentile(times, 0.9)))
}
