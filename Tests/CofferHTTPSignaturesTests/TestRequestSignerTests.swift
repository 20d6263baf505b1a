import CofferCrypto
import CofferHTTPSignatures
import CofferTesting
import HTTPTypes
import Testing

/// CofferTesting's request signer makes requests a verifier with its `keys` accepts, and only those.
@Suite("Test request signer")
struct TestRequestSignerTests {
    @Test(arguments: [KeyAlgorithm.ed25519, .p256, .rsa2048])
    func signedRequestsVerify(type: KeyAlgorithm) async throws {
        let client = try TestRequestSigner(keyType: type)
        let verifier = HTTPMessageVerifier(keys: client.keys)
        let body = Array(#"{"item": 1}"#.utf8)
        let request = try client.signed(HTTPRequest(method: .post, scheme: "https", authority: "api.test", path: "/orders"), body: body)
        let verified = try await verifier.verify(request, body: body)
        #expect(verified.keyID == "test-key")
        // Another client's signature under the same key id is refused.
        let other = try TestRequestSigner(keyType: type)
        let forged = try other.signed(HTTPRequest(method: .post, scheme: "https", authority: "api.test", path: "/orders"), body: body)
        await #expect(throws: HTTPSignatureError.self) { _ = try await verifier.verify(forged, body: body) }
    }

    @Test func sharedSecretsVerify() async throws {
        let client = try TestRequestSigner.sharedSecret()
        let request = try client.signed(HTTPRequest(method: .get, scheme: "https", authority: "api.test", path: "/me"))
        #expect(try await HTTPMessageVerifier(keys: client.keys).verify(request, body: nil).algorithm == .hmacSHA256)
    }
}
