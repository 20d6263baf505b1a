// README: signed requests (RFC 9421), client and server.
// snippet.hide
import CofferTesting
// snippet.show
import CofferHTTPSignatures
import CofferHummingbird
import HTTPTypes
import Hummingbird

// snippet.hide
let appKey = try TestRequestSigner().signer.key
let keyID = "client-1"
let myKeys = HTTPStaticKeys([keyID: appKey.verificationKey])
let body = Array(#"{"email": "ada@example.com"}"#.utf8)
let router = Router(context: HTTPSignatureContext.self)
// snippet.show
let signer = HTTPMessageSigner(key: appKey, keyID: keyID)          // ed25519, ecdsa, rsa, hmac
var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register_user")
try signer.sign(&request, body: body)            // Content-Digest, Signature-Input, Signature
// or, with AsyncHTTPClient (import CofferHTTPClient):
// let response = try await HTTPClient.shared.execute(signing: request, body: body, with: signer)

// Server: one policy, keys by keyid, replays refused.
let verifier = HTTPMessageVerifier(policy: HTTPSignaturePolicy(requiring: [.method, .targetURI, .field("content-digest")]), keys: myKeys)
router.group("api").add(middleware: HTTPSignatureMiddleware<HTTPSignatureContext>(verifier: verifier))
// snippet.hide
print(try await verifier.verify(request, body: body).keyID)
