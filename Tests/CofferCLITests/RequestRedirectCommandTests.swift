import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Issue 42, item 7: `coffer request` does not follow a redirect. It says where the server pointed
/// (status and `Location`, on standard error) and exits 1; the other origin receives nothing — for a
/// signed request, not its signature fields and not its body.
@Suite("coffer request and redirects")
struct RequestRedirectCommandTests {
    @Test func aSignedRequestIsNotFollowedToAnotherOrigin() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["key", "generate", "-t", "ed25519", "-o", "device.key", "--public", "device.pub"], in: folder).status == 0)
        let target = try await LoopbackHTTPServer { _ in .init(status: 200, body: Array("took it".utf8)) }
        let location = "http://127.0.0.1:\(target.port)/orders"
        let redirecting = try await LoopbackHTTPServer { _ in .redirect(307, to: location) }
        defer {
            Task { try? await redirecting.shutdown() }
            Task { try? await target.shutdown() }
        }
        let signed = try await coffer(
            ["request", "-k", "device.key", "--keyid", "device", "-X", "POST", "-d", #"{"order":"secret"}"#, "http://127.0.0.1:\(redirecting.port)/orders"],
            in: folder
        )
        #expect(target.received.isEmpty, "the other origin received: \(target.received.map { "\($0.method) \($0.fields.map(\.name))" })")
        #expect(redirecting.received.count == 1 && redirecting.received.first?.value(of: "signature-input") != nil)
        #expect(signed.status == 1, "\(signed.standardError)")
        #expect(signed.standardError.contains("HTTP 307") && signed.standardError.contains(location), "\(signed.standardError)")

        let unsigned = try await coffer(["request", "http://127.0.0.1:\(redirecting.port)/health"], in: folder)
        #expect(unsigned.status == 1 && unsigned.standardError.contains(location), "\(unsigned.standardError)")
        #expect(target.received.isEmpty)
    }
}
