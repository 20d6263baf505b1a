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
}
