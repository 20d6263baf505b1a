import AsyncHTTPClient
@testable import CofferPinning
import CofferTestSupport
import CofferTesting
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// Mis-issued certificates against every pinning path (issues 20 and 42). Both roots are trusted; the
/// attacker holds leaves from either: for the pinned host from a second trusted root, with its common
/// name only, as a wildcard, for another name that carries the connected address, or for an address
/// only. Real loopback TLS servers; the paths are the SwiftNIO handler, the CLI's probe, AsyncHTTPClient
/// bound to the host asked for (through a CONNECT proxy for a DNS name, so that it asks for that name
/// like a real client), and the decision behind URLSession's delegate. `coffer request --pin` is held to
/// the same rows in `RequestCommandTests`. Only the real leaf passes where the host is pinned.
@Suite("Pinning attacker matrix")
struct AttackerMatrixTests {
    static let pinnedHost = "api.example.test"

    /// Who issued a leaf served for the pinned DNS name, and what names it carries.
    enum Leaf: String, CaseIterable, CustomTestStringConvertible {
        /// The real server: the pinned key, a DNS subjectAltName.
        case real
        /// The attacker, from the second trusted CA, with a DNS subjectAltName for the pinned host.
        case secondRoot
        /// The attacker's leaf naming the pinned host in its common name only (no subjectAltName).
        case commonNameOnly
        /// The attacker's leaf for `*.example.test`.
        case wildcard
        /// The attacker's leaf for another name that carries the connected addresses
        /// (`DNS:other.example.test, IP:127.0.0.1, IP:::1`), which NIOSSL accepts for any name asked for.
        case otherNameWithAddress
        /// The attacker's leaf naming only the connected address.
        case addressOnly
        var testDescription: String { rawValue }
    }

    /// A pinned IP literal, and the loopback address its server listens on.
    enum Address: String, CaseIterable, CustomTestStringConvertible {
        case v4 = "127.0.0.1"
        case v6 = "[::1]"
        var testDescription: String { rawValue }
        /// The address to bind to.
        var bind: String { self == .v4 ? "127.0.0.1" : "::1" }
    }

    final class Scene: Sendable {
        let real: TestPKI
        let attacker: TestPKI
        let realLeaf: TestPKI.Issued
        let realAddressLeaves: [Address: TestPKI.Issued]

        init() throws {
            real = try TestPKI(name: "Real")
            attacker = try TestPKI(name: "Second trusted")
            realLeaf = try real.issueServerCertificate(commonName: AttackerMatrixTests.pinnedHost, alternativeNames: [AttackerMatrixTests.pinnedHost])
            realAddressLeaves = [
                .v4: try real.issueServerCertificate(commonName: "real by address", alternativeNames: ["127.0.0.1"]),
                .v6: try real.issueServerCertificate(commonName: "real by address", alternativeNames: ["::1"]),
            ]
        }

        /// The leaf `leaf` for the pinned DNS name, and who issued it.
        func issued(_ leaf: Leaf) throws -> (TestPKI.Issued, TestPKI) {
            let host = AttackerMatrixTests.pinnedHost
            return switch leaf {
            case .real: (realLeaf, real)
            case .secondRoot: (try attacker.issueServerCertificate(commonName: host, alternativeNames: [host]), attacker)
            case .commonNameOnly: (try attacker.issueServerCertificate(commonName: host, alternativeNames: nil), attacker)
            case .wildcard: (try attacker.issueServerCertificate(commonName: "*.example.test", alternativeNames: ["*.example.test"]), attacker)
            case .otherNameWithAddress: (try attacker.issueServerCertificate(commonName: "other.example.test", alternativeNames: ["other.example.test", "127.0.0.1", "::1"]), attacker)
            case .addressOnly: (try attacker.issueServerCertificate(commonName: "attacker by address", alternativeNames: ["127.0.0.1", "::1"]), attacker)
            }
        }

        /// The leaf `leaf` served for a pinned address: the real one's own address leaf, the attacker's as for the DNS name.
        func issued(_ leaf: Leaf, for address: Address) throws -> (TestPKI.Issued, TestPKI) {
            guard leaf == .real, let own = realAddressLeaves[address] else { return try issued(leaf) }
            return (own, real)
        }

        func chain(_ issued: TestPKI.Issued, of pki: TestPKI) -> [[UInt8]] { [issued.der, pki.intermediate.der] }

        func pin(_ issued: TestPKI.Issued) throws -> Pin { try ChainCertificate(der: issued.der).publicKeyPin }
        var backup: Pin { get throws { try Pin(kind: .publicKey, sha256: Array(repeating: 9, count: 32)) } }

        /// Both roots trusted; `api.example.test`, `127.0.0.1` and `[::1]` pinned to the real keys.
        func evaluator(enforcement: HostPins.Enforcement = .enforce) throws -> PinningEvaluator {
            var rules = [try HostPins(host: AttackerMatrixTests.pinnedHost, pins: [pin(realLeaf), backup], enforcement: enforcement)]
            for (address, leaf) in realAddressLeaves {
                rules.append(try HostPins(host: address.rawValue, pins: [pin(leaf), backup], enforcement: enforcement))
            }
            return PinningEvaluator(policy: try PinningPolicy(hosts: rules, trust: .only([real.root.certificate, attacker.root.certificate])))
        }
    }

    let scene: Scene
    init() throws { scene = try Scene() }

    static func serve<Result>(_ chain: [[UInt8]], key: TestPKI.Issued, on address: String = "127.0.0.1", _ body: (Int) async throws -> Result) async throws -> Result {
        let server = try await LoopbackTLSServer(chain: chain, privateKeyPEM: key.privateKey.pemRepresentation, host: address)
        do {
            let result = try await body(server.port)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// The SwiftNIO handler to `address`:`port` asking for `hostname`: true when the handshake succeeded.
    static func nioAccepts(port: Int, hostname: String, address: String = "127.0.0.1", evaluator: PinningEvaluator) async throws -> Bool {
        (try? await pinnedHandshake(port: port, hostname: hostname, address: address, evaluator: evaluator)) != nil
    }

    /// AsyncHTTPClient with `configuration` asking for `https://host/`: through a CONNECT proxy to `port`
    /// for a DNS name, straight to the address and `port` for an IP literal. True when the request was
    /// answered; a refusal must be the ``PinningError``.
    static func asyncHTTPClientAccepts(port: Int, host: String, configuration: HTTPClient.Configuration) async throws -> Bool {
        var configuration = configuration
        configuration.timeout.connect = .seconds(120)
        var proxy: LoopbackConnectProxy?
        let url: String
        if PinningEvaluator.isIPAddress(host) {
            url = "https://\(host):\(port)/"
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

    /// AsyncHTTPClient bound to `host` (``HTTPClient/Configuration/pinned(by:host:knownIntermediates:)``).
    static func boundClientAccepts(port: Int, host: String, evaluator: PinningEvaluator) async throws -> Bool {
        try await asyncHTTPClientAccepts(port: port, host: host, configuration: .pinned(by: evaluator, host: host))
    }

    /// Every path, asking for `host` at `address`:`port`: what each one decided.
    static func verdicts(port: Int, host: String, address: String, served: [ChainCertificate], evaluator: PinningEvaluator) async throws -> [String: Bool] {
        let probed = try await TLSProbe.check(host: address, port: port, serverName: host, evaluator: evaluator)
        return [
            "SwiftNIO handler": try await nioAccepts(port: port, hostname: host, address: address, evaluator: evaluator),
            "coffer pin check's probe": probed.isAccepted,
            "AsyncHTTPClient bound to the host": try await boundClientAccepts(port: port, host: host, evaluator: evaluator),
            "URLSession's decision": evaluator.evaluateSystemValidated(chain: served, trusted: true, failure: nil, hostname: host).isAccepted,
        ]
    }

    /// The pinned DNS name: only the real leaf passes, on every path.
    @Test(arguments: Leaf.allCases)
    func onlyTheRealKeyPassesForThePinnedHost(leaf: Leaf) async throws {
        let (issued, pki) = try scene.issued(leaf)
        let evaluator = try scene.evaluator()
        let served = try (scene.chain(issued, of: pki) + [pki.root.der]).map { try ChainCertificate(der: $0) }
        try await Self.serve(scene.chain(issued, of: pki), key: issued) { (port: Int) async throws -> Void in
            let verdicts = try await Self.verdicts(port: port, host: Self.pinnedHost, address: "127.0.0.1", served: served, evaluator: evaluator)
            for (path, accepted) in verdicts.sorted(by: { $0.key < $1.key }) {
                #expect(accepted == (leaf == .real), "\(path), \(leaf)")
            }
        }
    }

    /// A pinned IPv4 or IPv6 literal: only the real leaf for that address passes, on every path; the
    /// attacker's leaf naming the address (alone, or beside another name) fails its pins.
    @Test(arguments: Address.allCases, [Leaf.real, .addressOnly, .otherNameWithAddress])
    func onlyTheRealKeyPassesForAPinnedAddress(address: Address, leaf: Leaf) async throws {
        let (issued, pki) = try scene.issued(leaf, for: address)
        let evaluator = try scene.evaluator()
        let served = try (scene.chain(issued, of: pki) + [pki.root.der]).map { try ChainCertificate(der: $0) }
        try await Self.serve(scene.chain(issued, of: pki), key: issued, on: address.bind) { (port: Int) async throws -> Void in
            let verdicts = try await Self.verdicts(port: port, host: address.rawValue, address: address.bind, served: served, evaluator: evaluator)
            for (path, accepted) in verdicts.sorted(by: { $0.key < $1.key }) {
                #expect(accepted == (leaf == .real), "\(path), \(address), \(leaf)")
            }
        }
    }

    /// Under report-only rules an attacker's leaf that validates for the pinned host gets through (and
    /// is reported), so the rows above fail by their pins; a leaf for another name does not validate
    /// for the pinned host at all, whatever the rules.
    @Test(arguments: [Leaf.secondRoot, .otherNameWithAddress])
    func underReportOnlyRulesOnlyValidationRefuses(leaf: Leaf) async throws {
        let (issued, pki) = try scene.issued(leaf)
        let evaluator = try scene.evaluator(enforcement: .reportOnly)
        try await Self.serve(scene.chain(issued, of: pki), key: issued) { (port: Int) async throws -> Void in
            let accepted = try await Self.boundClientAccepts(port: port, host: Self.pinnedHost, evaluator: evaluator)
            #expect(accepted == (leaf == .secondRoot), "\(leaf)")
        }
    }

    /// The host-less configuration cannot know the host asked for: with a policy that enforces a rule it
    /// refuses every connection, the real leaf's too, rather than choose rules by the leaf's names (it let
    /// the leaf for another name through before issue 42). With report-only rules it only validates,
    /// as BoringSSL does.
    @available(*, deprecated, message: "tests the deprecated host-less configuration")
    @Test(arguments: [Leaf.real, .otherNameWithAddress])
    func theHostlessConfigurationRefusesEverything(leaf: Leaf) async throws {
        let (issued, pki) = try scene.issued(leaf)
        let enforcing = try HTTPClient.Configuration.pinned(by: scene.evaluator())
        let reportOnly = try HTTPClient.Configuration.pinned(by: scene.evaluator(enforcement: .reportOnly))
        try await Self.serve(scene.chain(issued, of: pki), key: issued) { (port: Int) async throws -> Void in
            #expect(try await !Self.asyncHTTPClientAccepts(port: port, host: Self.pinnedHost, configuration: enforcing), "\(leaf)")
            #expect(try await Self.asyncHTTPClientAccepts(port: port, host: Self.pinnedHost, configuration: reportOnly), "\(leaf), report-only")
        }
    }

    /// A host no rule covers stays reachable under normal validation, on every path.
    @Test func anUnpinnedHostStaysReachable() async throws {
        let other = try scene.attacker.issueServerCertificate(commonName: "other.example.test", alternativeNames: ["other.example.test"])
        let evaluator = try scene.evaluator()
        try await Self.serve(scene.chain(other, of: scene.attacker), key: other) { (port: Int) async throws -> Void in
            #expect(try await Self.nioAccepts(port: port, hostname: "other.example.test", evaluator: evaluator))
            #expect(try await Self.boundClientAccepts(port: port, host: "other.example.test", evaluator: evaluator))
        }
    }

    /// A client bound to the pinned host refuses a server that does not prove to be that host, whatever
    /// host the request named: sent to an unpinned host with a valid certificate, it refuses before the
    /// request is sent.
    @Test func aClientBoundToOneHostRefusesAnother() async throws {
        let other = try scene.real.issueServerCertificate(commonName: "other.example.test", alternativeNames: ["other.example.test"])
        let bound = try HTTPClient.Configuration.pinned(by: scene.evaluator(), host: Self.pinnedHost)
        try await Self.serve(scene.chain(other, of: scene.real), key: other) { (port: Int) async throws -> Void in
            #expect(try await !Self.asyncHTTPClientAccepts(port: port, host: "other.example.test", configuration: bound))
        }
    }

    /// A pinned host over plain http has no certificate to check: a client bound to it refuses the
    /// connection before the request is sent (a downgrade is not a way around the pins).
    @Test func aPinnedHostOverPlainHTTPIsRefused() async throws {
        let server = try await LoopbackHTTPServer { _ in .init(status: 200) }
        let bound = try HTTPClient.Configuration.pinned(by: scene.evaluator(), host: "127.0.0.1")
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: bound)
        await #expect(throws: PinningError.pinMismatch) {
            _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"), timeout: .seconds(120))
        }
        try await client.shutdown()
        try await server.shutdown()
        #expect(server.received.isEmpty)
    }

    /// A bound client does not follow a redirect (its new host would be checked under the bound host's
    /// rule): the 3xx comes back, and the other origin receives nothing.
    @Test func aBoundClientReturnsARedirect() async throws {
        let target = try await LoopbackHTTPServer { _ in .init(status: 200) }
        let redirecting = try await LoopbackHTTPServer { _ in .redirect(302, to: "http://localhost:\(target.port)/") }
        // 127.0.0.1 has no rule here: plain http to it is allowed.
        let unpinnedAddress = PinningEvaluator(policy: try PinningPolicy(hosts: [HostPins(host: Self.pinnedHost, pins: [scene.pin(scene.realLeaf), scene.backup])]))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try .pinned(by: unpinnedAddress, host: "127.0.0.1"))
        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(redirecting.port)/"), timeout: .seconds(120))
        try await client.shutdown()
        try await redirecting.shutdown()
        try await target.shutdown()
        #expect(response.status.code == 302)
        #expect(target.received.isEmpty)
    }
}
