import AsyncHTTPClient
@testable import CofferPinning
import CofferTestSupport
import CofferTesting
import Foundation
import NIOCore
import Testing

/// Issue 42, item 1: a certificate from the trusted CA for **another** name that also carries the
/// connected address (`DNS:other.example, IP:127.0.0.1, IP:::1`), served to a client that asked for
/// `localhost`, pinned to the real leaf's key. NIOSSL accepts it (its IP subjectAltName equals the
/// connected address), and AsyncHTTPClient's pinning chose rules by the leaf's DNS names, found none for
/// `other.example`, and let the request through as unpinned.
@Suite("Pinning: a certificate for another name carrying the connected address")
struct ConnectedAddressTests {
    let scene: ConnectedAddressScene
    init() throws { scene = try ConnectedAddressScene() }

    /// `localhost` pinned to the real key (and a backup), the CA trusted.
    func evaluator() throws -> PinningEvaluator {
        let pins = [try ChainCertificate(der: scene.real.der).publicKeyPin, try Pin(kind: .publicKey, sha256: Array(repeating: 9, count: 32))]
        return PinningEvaluator(policy: try PinningPolicy(hosts: [HostPins(host: "localhost", pins: pins)], trust: .only([scene.pki.root.certificate])))
    }

    /// Whether AsyncHTTPClient with `configuration` gets an answer from `https://localhost:port/`.
    static func answered(port: Int, configuration: HTTPClient.Configuration) async throws -> Bool {
        var configuration = configuration
        configuration.timeout.connect = .seconds(120)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let answered: Bool
        do {
            answered = try await client.execute(HTTPClientRequest(url: "https://localhost:\(port)/"), timeout: .seconds(120)).status == .ok
        } catch is PinningError {
            answered = false
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return answered
    }

    @available(*, deprecated, message: "also tests the deprecated host-less configuration")
    @Test func asyncHTTPClientRefusesItWhereItAcceptsTheRealLeaf() async throws {
        let evaluator = try evaluator()
        try await scene.withServers { impostor, real in
            let bound = try HTTPClient.Configuration.pinned(by: evaluator, host: "localhost")
            #expect(try await !Self.answered(port: impostor, configuration: bound), "pinned(by:host:): the impostor was answered")
            #expect(try await Self.answered(port: real, configuration: bound), "pinned(by:host:): the real leaf")
            // Before issue 42 the host-less configuration answered the impostor (the test failed here).
            #expect(try await !Self.answered(port: impostor, configuration: .pinned(by: evaluator)), "pinned(by:): the impostor was answered")
            #expect(try await !AttackerMatrixTests.nioAccepts(port: impostor, hostname: "localhost", evaluator: evaluator), "SwiftNIO handler")
            let probed = try await TLSProbe.check(host: "127.0.0.1", port: impostor, serverName: "localhost", evaluator: evaluator)
            #expect(!probed.isAccepted, "coffer pin check's probe: \(probed.verdict)")
            #expect(try await AttackerMatrixTests.nioAccepts(port: real, hostname: "localhost", evaluator: evaluator), "the real leaf, SwiftNIO handler")
        }
    }
}
