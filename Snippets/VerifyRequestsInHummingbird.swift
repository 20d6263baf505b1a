// A Hummingbird route behind the signature middleware, on a server behind a TLS-terminating proxy:
// clients sign the public scheme and authority (https://api.example.com), which the connection from
// the proxy does not carry, so the middleware is told them.
// snippet.hide
import AsyncHTTPClient
import CofferHTTPClient
import CofferTesting
import HTTPTypes
import Logging
import NIOCore
// snippet.show
import CofferHTTPSignatures
import CofferHummingbird
import Hummingbird

// snippet.hide
let client = try TestRequestSigner(keyID: "client-1")
let clientPublicKey = client.verificationKey
// snippet.show
let verifier = HTTPMessageVerifier(keys: HTTPStaticKeys(["client-1": clientPublicKey]))
let router = Router(context: HTTPSignatureContext.self)
router.group("api")
    .add(middleware: HTTPSignatureMiddleware(verifier: verifier, scheme: "https", authority: "api.example.com"))
    .post("orders") { request, context in "signed by \(context.verifiedSignature?.keyID ?? "")" }
// snippet.hide
let (ports, listening) = AsyncStream.makeStream(of: Int.self)
var quiet = Logger(label: "snippet")
quiet.logLevel = .critical
let app = Application(
    router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { listening.yield($0.localAddress?.port ?? 0) }, logger: quiet
)
let serving = Task { try await app.run() }
var port = 0
for await bound in ports { port = bound; break }

/// Sends a request signed for `scheme`://api.example.com to the server, as the proxy forwards it.
func send(signedFor scheme: String, by client: TestRequestSigner, to port: Int) async throws -> (HTTPResponse.Status, String) {
    let body = Array(#"{"item": 1}"#.utf8)
    let signed = try client.signed(HTTPRequest(method: .post, scheme: scheme, authority: "api.example.com", path: "/api/orders"), body: body)
    var forwarded = try HTTPClient.clientRequest(signed, body: body)
    forwarded.url = "http://127.0.0.1:\(port)/api/orders"
    let response = try await HTTPClient.shared.execute(forwarded, timeout: .seconds(30))
    return (HTTPResponse.Status(code: Int(response.status.code)), String(buffer: try await response.body.collect(upTo: 1 << 16)))
}
let (status, text) = try await send(signedFor: "https", by: client, to: port)
print(status, text)
let (refused, problem) = try await send(signedFor: "http", by: client, to: port)
print(refused, problem)
serving.cancel()
_ = await serving.result
guard status == .ok, text == "signed by client-1", refused == .unauthorized, problem.contains("verifies as a request to http://") else {
    fatalError("the sample's claims do not hold")
}
