// A client that signs its requests with the device's key and sends them with AsyncHTTPClient, in one
// call: the signature covers the method, the URL and the body's digest, and no redirect is followed.
// snippet.hide
import CofferHummingbird
import Hummingbird
import Logging
import NIOCore
// snippet.show
import AsyncHTTPClient
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import HTTPTypes

/// Places an order, signed by the device: with the API in production by default, or a server in development.
func placeOrder(_ order: [UInt8], signer: HTTPMessageSigner, scheme: String = "https", authority: String = "api.example.com") async throws -> HTTPClientResponse {
    let request = HTTPRequest(method: .post, scheme: scheme, authority: authority, path: "/orders")
    return try await HTTPClient.shared.execute(signing: request, body: order, with: signer)
}

let deviceKey = try SigningKey.generate(.p256)       // made once and kept in the keychain; the server knows its public half
let signer = HTTPMessageSigner(key: try HTTPSigningKey(deviceKey), keyID: "device-7")
// snippet.hide
let router = Router(context: HTTPSignatureContext.self)
let verifier = HTTPMessageVerifier(keys: HTTPStaticKeys(["device-7": try HTTPVerificationKey(deviceKey.verifyingKey)]))
router.add(middleware: HTTPSignatureMiddleware(verifier: verifier, scheme: "http"))
router.post("orders") { request, context in "order from \(context.verifiedSignature?.keyID ?? "")" }
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
let response = try await placeOrder(Array(#"{"item": 1}"#.utf8), signer: signer, scheme: "http", authority: "127.0.0.1:\(port)")
let answer = String(buffer: try await response.body.collect(upTo: 1 << 16))
print(answer)
serving.cancel()
_ = await serving.result
guard response.status == .ok, answer == "order from device-7" else { fatalError("the sample's claims do not hold") }
