import AsyncHTTPClient
@testable import CofferPinning
import CofferTestSupport
import CofferTesting
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// Mis-issued certificates against every pinning path (issue 20): a second trusted CA issues the
/// attacker a leaf for the pinned host with a DNS subjectAltName, with its common name only, with an IP
/// subjectAltName only, or as a wildcard. Real loopback TLS servers; the SwiftNIO handler and the CLI's
/// probe (which know the host asked for) and AsyncHTTPClient (which does not), the latter through a
/// CONNECT proxy so that it asks for `api.example.test` like a real client. Before the fix, AsyncHTTPClient accepted the
/// common-name-only and IP-only leaves (no DNS name selected a rule: `notPinned`).
@Suite("Pinning attacker matrix")
struct AttackerMatrixTests {
    static let pinnedHost = "api.example.test"

    /// Who issued a leaf, and what names it carries.
    enum Leaf: String, CaseIterable, CustomTestStringConvertible {
        /// The real server: the pinned key, a DNS subjectAltName.
        case real
        /// The attacker, from the second trusted CA, with a DNS subjectAltName for the pinned host.
        case secondRoot
        /// The attacker's leaf naming the pinned host in its common name only (no subjectAltName).
        case commonNameOnly
        /// The attacker's leaf for `*.example.test`.
        case wildcard
        var testDescription: String { rawValue }
    }

    final class Scene: Sendable {
        let real: TestPKI
        let attacker: TestPKI
        let realLeaf: TestPKI.Issued
        let realIPLeaf: TestPKI.Issued

        init() throws {
            real = try TestPKI(name: "Real")
            attacker = try TestPKI(name: "Second trusted")
            realLeaf = try real.issueServerCertificate(commonName: AttackerMatrixTests.pinnedHost, alternativeNames: [AttackerMatrixTests.pinnedHost])
            realIPLeaf = try real.issueServerCertificate(commonName: "real by address", alternativeNames: ["127.0.0.1"])
        }

        func issued(_ leaf: Leaf) throws -> TestPKI.Issued {
            let host = AttackerMatrixTests.pinnedHost
            switch leaf {
            case .real: return realLeaf
            case .secondRoot: return try attacker.issueServerCertificate(commonName: host, alternativeNames: [host])
            case .commonNameOnly: return try attacker.issueServerCertificate(commonName: host, alternativeNames: nil)
            case .wildcard: return try attacker.issueServerCertificate(commonName: "*.example.test", alternativeNames: ["*.example.test"])
            }
        }

        func chain(_ issued: TestPKI.Issued, of pki: TestPKI) -> [[UInt8]] { [issued.der, pki.intermediate.der] }

        func pin(_ issued: TestPKI.Issued) throws -> Pin { try ChainCertificate(der: issued.der).publicKeyPin }
        var backup: Pin { get throws { try Pin(kind: .publicKey, sha256: Array(repeating: 9, count: 32)) } }

        /// Both roots trusted; `api.example.test` pinned to the real key, and optionally `127.0.0.1` too.
        func evaluator(pinningAddress: Bool = false) throws -> PinningEvaluator {
            var rules = [try HostPins(host: AttackerMatrixTests.pinnedHost, pins: [pin(realLeaf), backup])]
            if pinningAddress { rules.append(try HostPins(host: "127.0.0.1", pins: [pin(realIPLeaf), backup])) }
            return PinningEvaluator(policy: try PinningPolicy(hosts: rules, trust: .only([real.root.certificate, attacker.root.certificate])))
        }
    }

    let scene: Scene
    init() throws { scene = try Scene() }

    static func serve<Result>(_ chain: [[UInt8]], key: TestPKI.Issued, _ body: (Int) async throws -> Result) async throws -> Result {
        let server = try await LoopbackTLSServer(chain: chain, privateKeyPEM: key.privateKey.pemRepresentation)
        do {
            let result = try await body(server.port)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// The SwiftNIO handler to 127.0.0.1:`port` asking for `hostname`: true when the handshake succeeded.
    static func nioAccepts(port: Int, hostname: String, evaluator: PinningEvaluator) async throws -> Bool {
        (try? await pinnedHandshake(port: port, hostname: hostname, evaluator: evaluator)) != nil
    }

    /// AsyncHTTPClient with `pinned(by:)` asking for `https://host/`: through a CONNECT proxy to `port`
    /// for a DNS name, straight to 127.0.0.1:`port` for an address. True when the request succeeded;
    /// a refusal must be the ``PinningError``.
    static func asyncHTTPClientAccepts(port: Int, host: String, evaluator: PinningEvaluator) async throws -> Bool {
        var configuration = try HTTPClient.Configuration.pinned(by: evaluator)
        configuration.timeout.connect = .seconds(120)
        var proxy: LoopbackConnectProxy?
        let url: String
        if host == "127.0.0.1" {
            url = "https://127.0.0.1:\(port)/"
        } else {
            let tunnel = try await LoopbackConnectProxy(upstreamPort: port)
            configuration.proxy = .server(host: "127.0.0.1", port: tunnel.port)
            proxy = tunnel
            url = "https://\(host)/"
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var accepted = false
        var failure: (any Error)?
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(120))
            accepted = response.status == .ok
        } catch let error as PinningError {
            #expect(error.code == .pinMismatch || error.code == .chainNotTrusted, "\(error)")
        } catch {
            failure = error
        }
        try await client.shutdown()
        try await proxy?.shutdown()
        if let failure { throw failure }
        if let proxy { #expect(proxy.requestedAuthorities == ["\(host):443"], "the client asked for the pinned host") }
        return accepted
    }

    /// Only the real server passes, on both paths.
    @Test(arguments: Leaf.allCases)
    func onlyTheRealKeyPassesForThePinnedHost(leaf: Leaf) async throws {
        let issued = try scene.issued(leaf)
        let pki = leaf == .real ? scene.real : scene.attacker
        let evaluator = try scene.evaluator()
        let expected = leaf == .real
        try await Self.serve(scene.chain(issued, of: pki), key: issued) { (port: Int) async throws -> Void in
            #expect(try await Self.nioAccepts(port: port, hostname: Self.pinnedHost, evaluator: evaluator) == expected, "SwiftNIO handler, \(leaf)")
            let probed = try await TLSProbe.check(host: "127.0.0.1", port: port, serverName: Self.pinnedHost, evaluator: evaluator)
            #expect(probed.isAccepted == expected, "coffer pin check's probe, \(leaf): \(probed.verdict)")
            #expect(try await Self.asyncHTTPClientAccepts(port: port, host: Self.pinnedHost, evaluator: evaluator) == expected, "AsyncHTTPClient, \(leaf)")
        }
    }

    /// A leaf naming only an IP address, from the second CA, asked for by address. The SwiftNIO handler
    /// knows 127.0.0.1 has no rule: normal validation, accepted. AsyncHTTPClient cannot know the host:
    /// the leaf could stand for the pinned host, so it is refused — unless an IP-literal rule selects it,
    /// which then decides by its pins.
    @Test func anIPOnlyLeafIsRefusedWhereTheHostIsUnknownUnlessAnIPRuleSelectsIt() async throws {
        let attackerIP = try scene.attacker.issueServerCertificate(commonName: "attacker by address", alternativeNames: ["127.0.0.1"])
        let plain = try scene.evaluator()
        let withAddress = try scene.evaluator(pinningAddress: true)
        try await Self.serve(scene.chain(attackerIP, of: scene.attacker), key: attackerIP) { (port: Int) async throws -> Void in
            #expect(try await Self.nioAccepts(port: port, hostname: "127.0.0.1", evaluator: plain), "the client asked for an unpinned address")
            #expect(try await !Self.asyncHTTPClientAccepts(port: port, host: "127.0.0.1", evaluator: plain))
            #expect(try await !Self.nioAccepts(port: port, hostname: "127.0.0.1", evaluator: withAddress))
            #expect(try await !Self.asyncHTTPClientAccepts(port: port, host: "127.0.0.1", evaluator: withAddress))
        }
        try await Self.serve(scene.chain(scene.realIPLeaf, of: scene.real), key: scene.realIPLeaf) { (port: Int) async throws -> Void in
            #expect(try await Self.nioAccepts(port: port, hostname: "127.0.0.1", evaluator: withAddress))
            #expect(try await Self.asyncHTTPClientAccepts(port: port, host: "127.0.0.1", evaluator: withAddress), "an IP rule whose pins match")
        }
    }

    /// A host no rule covers stays reachable under normal validation, on both paths.
    @Test func anUnpinnedHostStaysReachable() async throws {
        let other = try scene.attacker.issueServerCertificate(commonName: "other.example.test", alternativeNames: ["other.example.test"])
        let evaluator = try scene.evaluator()
        try await Self.serve(scene.chain(other, of: scene.attacker), key: other) { (port: Int) async throws -> Void in
            #expect(try await Self.nioAccepts(port: port, hostname: "other.example.test", evaluator: evaluator))
            #expect(try await Self.asyncHTTPClientAccepts(port: port, host: "other.example.test", evaluator: evaluator))
        }
    }

    /// The decision behind URLSession's delegate (Security.framework validates; Linux cannot run the
    /// delegate itself): the host it was asked for decides, for every leaf of the matrix.
    @Test(arguments: Leaf.allCases)
    func theSystemValidatedPathDecidesByTheRequestedHost(leaf: Leaf) async throws {
        let issued = try scene.issued(leaf)
        let pki = leaf == .real ? scene.real : scene.attacker
        let chain = try (scene.chain(issued, of: pki) + [pki.root.der]).map { try ChainCertificate(der: $0) }
        let report = try scene.evaluator().evaluateSystemValidated(chain: chain, trusted: true, failure: nil, hostname: Self.pinnedHost)
        #expect(report.isAccepted == (leaf == .real), "\(leaf): \(report.verdict)")
    }
}
