// README: signed requests (RFC 9421), client and server.
import CofferCrypto
import CofferHTTPSignatures
import CofferHummingbird
import HTTPTypes
import Hummingbird

// Client: a key made once and kept (in the keychain), bound to an algorithm for HTTP; the server learns its public half.
let deviceKey = try SigningKey.generate(.ed25519)
let appKey = try HTTPSigningKey(deviceKey)         // ed25519, ecdsa, rsa (naming PSS or v1.5); or .hmacSHA256(secret:)
let signer = HTTPMessageSigner(key: appKey, keyID: "client-1")
let body = Array(#"{"email": "ada@example.com"}"#.utf8)
var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register_user")
try signer.sign(&request, body: body)            // Content-Digest, Signature-Input, Signature
// or, with AsyncHTTPClient (import CofferHTTPClient):
// let response = try await HTTPClient.shared.execute(signing: request, body: body, with: signer)

// Server: one policy, keys by keyid, replays refused.
let myKeys = HTTPStaticKeys(["client-1": try HTTPVerificationKey(deviceKey.verifyingKey)])   // or your key store
let verifier = HTTPMessageVerifier(policy: HTTPSignaturePolicy(requiring: [.method, .targetURI, .field("content-digest")]), keys: myKeys)
let router = Router(context: HTTPSignatureContext.self)
router.group("api").add(middleware: HTTPSignatureMiddleware<HTTPSignatureContext>(verifier: verifier))
// snippet.hide
print(try await verifier.verify(request, body: body).keyID)
