// A test of your own server's signature check with CofferTesting: a throwaway client key, requests it
// signs, and the keys your server under test verifies with.
import CofferHTTPSignatures
import CofferTesting
import HTTPTypes
import Testing

@Test func ordersNeedASignature() async throws {
    let client = try TestRequestSigner()
    let verifier = HTTPMessageVerifier(keys: client.keys)          // the server under test uses these keys
    let request = try client.signed(HTTPRequest(method: .post, scheme: "https", authority: "api.test", path: "/orders"))
    #expect(try await verifier.verify(request, body: nil).keyID == client.keyID)
}
// snippet.hide
// Outside `swift test`, the test is an ordinary function; a failed expectation is reported as it runs.
try await ordersNeedASignature()
