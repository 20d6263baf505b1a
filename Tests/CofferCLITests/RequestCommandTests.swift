import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// `coffer request --ca FILE --pin PIN` (issue 20), curl's `--cacert` and `--pinnedpubkey`, against a real
/// loopback TLS server with a generated chain.
@Suite("coffer request over pinned TLS")
struct RequestCommandTests {
    @Test func pinsHoldForTheRealKeyAndFailForAnyOther() async throws {
        let folder = try TemporaryDirectory()
        let pki = try TestPKI(name: "Request")
        let leaf = try pki.issueServerCertificate(for: ["localhost"])
        try folder.write(pki.root.pem, to: "root.pem")
        let server = try await LoopbackTLSServer(chain: [leaf.der, pki.intermediate.der], privateKeyPEM: leaf.privateKey.pemRepresentation)
        defer { Task { try? await server.shutdown() } }
        let url = "https://localhost:\(server.port)/"
        let pin = TestPKI.spkiPin(leaf.certificate)
        let other = Data(repeating: 7, count: 32).base64EncodedString()

        let trusted = try await coffer("request", "--ca", "root.pem", url, in: folder)
        #expect(trusted.status == 0 && trusted.output == "ok", "\(trusted.standardError)")
        let pinned = try await coffer("request", "--ca", "root.pem", "--pin", pin, "--pin", other, url, in: folder)
        #expect(pinned.status == 0 && pinned.output == "ok", "\(pinned.standardError)")
        let mismatch = try await coffer("request", "--ca", "root.pem", "--pin", other, url, in: folder)
        #expect(mismatch.status == 1, "\(mismatch.standardError)")
        #expect(mismatch.output.isEmpty, "no request was sent")
        #expect(mismatch.standardError.hasPrefix("coffer: error: no pin of the policy for localhost matched"), "\(mismatch.standardError)")
        let untrusted = try await coffer("request", "--pin", pin, url, in: folder)
        #expect(untrusted.status != 0, "a pin never rescues a chain the system roots do not trust: \(untrusted.standardError)")
        // Said as what happened, with the flag that helps (issue 23), not as NIOSSL's dump.
        #expect(untrusted.standardError.contains("is not trusted") && untrusted.standardError.contains("--ca ROOT.pem"), "\(untrusted.standardError)")
        let refused = try await coffer("request", "http://127.0.0.1:1/", in: folder)
        #expect(refused.status == 2 && refused.standardError.contains("refused the connection"), "\(refused.standardError)")
        let plain = try await coffer("request", "--pin", pin, "http://localhost:\(server.port)/", in: folder)
        #expect(plain.status == 2 && plain.standardError.contains("--ca and --pin apply to https URLs"))
    }

    /// Issue 42, item 1, as reported: a certificate from the trusted CA for another name that carries
    /// the connected address (`DNS:other.example, IP:127.0.0.1, IP:::1`) does not pass `--pin` for the
    /// host asked for; the real leaf does.
    @Test func aCertificateForAnotherNameCarryingTheAddressFailsThePin() async throws {
        let folder = try TemporaryDirectory()
        let scene = try ConnectedAddressScene()
        try folder.write(scene.pki.root.pem, to: "ca.pem")
        let pin = TestPKI.spkiPin(scene.real.certificate)
        try await scene.withServers { impostor, real in
            let refused = try await coffer("request", "https://localhost:\(impostor)", "--ca", "ca.pem", "--pin", pin, in: folder)
            #expect(refused.status == 1, "the impostor was answered: \(refused.output) \(refused.standardError)")
            #expect(refused.output.isEmpty, "no request was sent")
            let accepted = try await coffer("request", "https://localhost:\(real)", "--ca", "ca.pem", "--pin", pin, in: folder)
            #expect(accepted.status == 0 && accepted.output == "ok", "\(accepted.standardError)")
        }
    }

    /// The attacker matrix (`AttackerMatrixTests`) through `coffer request --pin`: two trusted roots
    /// (`--ca` holds both), the host asked for pinned to the real key; the attacker's leaf for the name
    /// from the second root, with the common name only, for another name carrying the address, for the
    /// address only; a pinned IPv4 and IPv6 literal. Only the real leaf is answered.
    @Test(arguments: [
        ("localhost", "real"), ("localhost", "second root"), ("localhost", "common name only"),
        ("localhost", "other name with address"), ("localhost", "address only"),
        ("127.0.0.1", "real"), ("127.0.0.1", "address only"), ("127.0.0.1", "other name with address"),
        ("[::1]", "real"), ("[::1]", "address only"), ("[::1]", "other name with address"),
    ])
    func onlyTheRealKeyIsAnswered(host: String, leaf: String) async throws {
        let folder = try TemporaryDirectory()
        let real = try TestPKI(name: "Real")
        let attacker = try TestPKI(name: "Second trusted")
        try folder.write(real.root.pem + "\n" + attacker.root.pem + "\n", to: "roots.pem")
        let name = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let realLeaf = try real.issueServerCertificate(for: [name])
        let (issued, pki) = switch leaf {
        case "real": (realLeaf, real)
        case "second root": (try attacker.issueServerCertificate(for: [name]), attacker)
        case "common name only": (try attacker.issueServerCertificate(commonName: name, alternativeNames: nil), attacker)
        case "other name with address": (try attacker.issueServerCertificate(commonName: "other.example", alternativeNames: ["other.example", "127.0.0.1", "::1"]), attacker)
        default: (try attacker.issueServerCertificate(commonName: "by address", alternativeNames: ["127.0.0.1", "::1"]), attacker)
        }
        let server = try await LoopbackTLSServer(
            chain: [issued.der, pki.intermediate.der], privateKeyPEM: issued.privateKey.pemRepresentation, host: host == "[::1]" ? "::1" : "127.0.0.1"
        )
        defer { Task { try? await server.shutdown() } }
        let result = try await coffer("request", "https://\(host):\(server.port)/", "--ca", "roots.pem", "--pin", TestPKI.spkiPin(realLeaf.certificate), in: folder)
        if leaf == "real" {
            #expect(result.status == 0 && result.output == "ok", "\(host), \(leaf): \(result.standardError)")
        } else {
            #expect(result.status == 1 && result.output.isEmpty, "\(host), \(leaf): \(result.status) \(result.standardError)")
        }
    }
}
