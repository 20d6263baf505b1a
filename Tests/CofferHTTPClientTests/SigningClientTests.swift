import AsyncHTTPClient
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferHummingbird
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `HTTPClient.execute(signing:)` against a live Hummingbird server that verifies with
/// `HTTPSignatureMiddleware` on a loopback port: what the helper signs is what arrives.
@Suite("Signing HTTP client")
struct SigningClientTests {
    static func withServer(keys: HTTPStaticKeys, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let router = Router(context: HTTPSignatureContext.self)
        // The server knows its clients reach it over plain HTTP on loopback.
        router.add(middleware: HTTPSignatureMiddleware(verifier: HTTPMessageVerifier(keys: keys), scheme: "http"))
        router.post("orders") { request, context -> String in
            var request = request
            let received = try await request.collectBody(upTo: 1 << 20)
            return "\(context.verifiedSignature?.keyID ?? "nobody"):\(String(buffer: received))"
        }
        let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in try await body(try #require(client.port)) }
    }

    @Test(arguments: [KeyAlgorithm.ed25519, .p256, .rsa2048])
    func signedRequestsAreAccepted(type: KeyAlgorithm) async throws {
        let key = try SigningKey.generate(type)
        let signingKey = type == .rsa2048 ? try HTTPSigningKey(key, algorithm: .rsaPSSSHA512) : try HTTPSigningKey(key)
        let signer = HTTPMessageSigner(key: signingKey, keyID: "k")
        let keys = HTTPStaticKeys(["k": try HTTPVerificationKey(key.verifyingKey, algorithm: signingKey.algorithm)])
        try await Self.withServer(keys: keys) { port in
            let request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(port)", path: "/orders")
            let response = try await HTTPClient.shared.execute(signing: request, body: Array("order 1".utf8), with: signer)
            let text = String(buffer: try await response.body.collect(upTo: 1 << 16))
            #expect(response.status == .ok)
            #expect(text == "k:order 1")
        }
    }

    /// An HMAC-SHA256 shared secret through the same helper.
    @Test func sharedSecretRequestsAreAccepted() async throws {
        let secret = try MACKey.generate(byteCount: 32)
        let signer = HTTPMessageSigner(key: .hmacSHA256(secret: secret), keyID: "s")
        try await Self.withServer(keys: HTTPStaticKeys(["s": .hmacSHA256(secret: secret)])) { port in
            let request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(port)", path: "/orders")
            let response = try await HTTPClient.shared.execute(signing: request, body: Array("{}".utf8), with: signer)
            #expect(response.status == .ok)
        }
    }

    /// A signature for another path, or by an unknown key, does not pass through the helper either.
    @Test func whatWasNotSignedIsRefused() async throws {
        let key = try SigningKey.generate(.ed25519)
        let keys = HTTPStaticKeys(["k": try HTTPVerificationKey(key.verifyingKey)])
        try await Self.withServer(keys: keys) { port in
            var request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(port)", path: "/orders")
            let stranger = HTTPMessageSigner(key: try HTTPSigningKey(SigningKey.generate(.ed25519)), keyID: "k")
            let forged = try await HTTPClient.shared.execute(signing: request, body: nil, with: stranger)
            #expect(forged.status == .unauthorized)

            // Signed for /orders, sent to /orders?all: the target URI no longer matches.
            try HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: "k").sign(&request, body: nil)
            request.path = "/orders?all"
            let moved = try await HTTPClient.shared.execute(HTTPClient.clientRequest(request, body: nil), timeout: .seconds(120))
            #expect(moved.status == .unauthorized)
        }
    }

    /// A request without a scheme or authority cannot be sent: a typed error, nothing sent.
    @Test func aRequestWithoutAnAuthorityIsRefused() throws {
        let request = HTTPRequest(method: .get, scheme: "https", authority: nil, path: "/")
        #expect(throws: HTTPSignatureError.missingComponent) {
            _ = try HTTPClient.clientRequest(request, body: nil)
        }
    }

    /// `Host` comes from the URL only: a `Host` field in the request is not sent twice.
    @Test func hostComesFromTheURL() throws {
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.test", path: "/a")
        request.headerFields[HTTPField.Name("Host")!] = "evil.example"
        request.headerFields[.accept] = "application/json"
        let client = try HTTPClient.clientRequest(request, body: nil)
        #expect(client.url == "https://api.example.test/a")
        #expect(client.headers["Host"].isEmpty)
        #expect(client.headers["Accept"] == ["application/json"])
    }
}
