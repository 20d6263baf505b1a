// RFC 9421 in two halves: the client signs a request and its body; the server verifies it against a
// policy, with keys found by keyid and replays refused.
import CofferCrypto
import CofferHTTPSignatures
import HTTPTypes

// snippet.hide
let body = Array(#"{"item": 1}"#.utf8)
// snippet.show
// Client: its private key, bound to an HTTP signature algorithm (Ed25519 implies its own).
let privateKey = try SigningKey.generate(.ed25519)
let signer = HTTPMessageSigner(key: try HTTPSigningKey(privateKey), keyID: "client-1")
var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/orders")
try signer.sign(&request, body: body)

// Server: the public key the client registered, under its keyid.
let publicKey = privateKey.verifyingKey
let verifier = HTTPMessageVerifier(keys: HTTPStaticKeys(["client-1": try HTTPVerificationKey(publicKey)]))
let verified = try await verifier.verify(request, body: body)
// snippet.hide
guard verified.keyID == "client-1" else { fatalError("not verified") }
do {
    _ = try await verifier.verify(request, body: body)
    fatalError("a replay passed")
} catch {
    print("again:", error.code)
}
