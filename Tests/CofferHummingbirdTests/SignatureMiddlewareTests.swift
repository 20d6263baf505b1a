import CofferCrypto
import CofferHTTPSignatures
import CofferHummingbird
import CofferTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `HTTPSignatureMiddleware` in a real Hummingbird router: what passes, and every way it refuses.
@Suite("Signature middleware")
struct SignatureMiddlewareTests {
    static let authority = "api.example.test"

    /// A key store that cannot answer, as a database that is down.
    struct FailingKeys: HTTPSignatureKeyProvider {
        struct Down: Error, CustomStringConvertible {
            var description: String { "connection refused: postgres://app:hunter2@db.internal/keys" }
        }
        func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey? { throw Down() }
    }

    /// A client whose requests the server knows, from CofferTesting's ``TestRequestSigner``.
    struct Fixture {
        let client: TestRequestSigner
        var keys: HTTPStaticKeys { client.keys }

        init() throws { client = try TestRequestSigner(keyID: "client-1") }
        init(client: TestRequestSigner) { self.client = client }

        /// A signed `POST /orders` for `body`: its header fields as the client sends them.
        func signedFields(body: [UInt8], scheme: String = "https") throws -> HTTPFields {
            var request = HTTPRequest(method: .post, scheme: scheme, authority: SignatureMiddlewareTests.authority, path: "/orders")
            request.headerFields[.contentType] = "application/json"
            return try client.signed(request, body: body).headerFields
        }
    }

    /// A router with the middleware in front of `POST /orders`, which answers with the verified key id.
    static func application(
        keys: any HTTPSignatureKeyProvider, replayCache: (any HTTPSignatureReplayCache)? = InMemoryReplayCache(), maximumBodySize: Int = 1 << 20,
        scheme: String = "https"
    ) -> some ApplicationProtocol {
        let router = Router(context: HTTPSignatureContext.self)
        // Freshness is the verifier's to test (SignAndVerifyTests). Here a day's maximum age keeps a
        // request signed before a long pause from expiring: on a loaded machine a test can wait longer
        // than the default five minutes between signing and its last send, and a replay then reads as
        // `expired` (seen in a CI run of 332 s).
        var policy = HTTPSignaturePolicy()
        policy.maximumAge = 86_400
        let verifier = HTTPMessageVerifier(policy: policy, keys: keys, replayCache: replayCache)
        router.add(middleware: HTTPSignatureMiddleware(verifier: verifier, scheme: scheme, authority: authority, maximumBodySize: maximumBodySize))
        router.post("orders") { request, context -> String in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            return "\(context.verifiedSignature?.keyID ?? "nobody") sent \(body.readableBytes) bytes"
        }
        return Application(router: router)
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
    }

    @Test func aSignedRequestReachesTheRouteWithItsKeyID() async throws {
        let fixture = try Fixture()
        let body = Array(#"{"item": 1}"#.utf8)
        let fields = try fixture.signedFields(body: body)
        try await Self.application(keys: fixture.keys).test(.router) { client in
            try await client.execute(uri: "/orders", method: .post, headers: fields, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "client-1 sent \(body.count) bytes")
            }
            // The same request again is a replay.
            try await client.execute(uri: "/orders", method: .post, headers: fields, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .unauthorized)
                let problem = try Self.json(response)
                #expect(problem["type"] as? String == "https://coffer.dev/problems/replayed")
            }
        }
    }

    @Test func refusalsAreProblemDetailsOfOneScheme() async throws {
        let fixture = try Fixture()
        let body = Array(#"{"item": 1}"#.utf8)
        try await Self.application(keys: fixture.keys).test(.router) { client in
            try await client.execute(uri: "/orders", method: .post, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.headers[.wwwAuthenticate] == "Signature")
                let problem = try Self.json(response)
                #expect(problem["reason"] as? String == "missing-signature")
                #expect(problem["type"] as? String == ProblemDetails.typePrefix + "missing-signature")
                #expect(problem["status"] as? Int == 401)
            }
            // A body changed after signing: the digest no longer matches.
            let fields = try fixture.signedFields(body: body)
            try await client.execute(uri: "/orders", method: .post, headers: fields, body: ByteBuffer(string: #"{"item": 9}"#)) { response in
                #expect(response.status == .unauthorized)
                let problem = try Self.json(response)
                #expect(problem["type"] as? String == ProblemDetails.typePrefix + "digest-mismatch")
            }
        }
    }

    /// A key store that counts its lookups: each check of a signature looks its key up once.
    final class CountingKeys: HTTPSignatureKeyProvider, @unchecked Sendable {
        let keys: HTTPStaticKeys
        private let lock = NSLock()
        private var count = 0
        init(_ keys: HTTPStaticKeys) { self.keys = keys }
        var lookups: Int { lock.withLock { count } }
        func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey? {
            lock.withLock { count += 1 }
            return try await keys.verificationKey(forKeyID: keyID)
        }
    }

    /// A request signed for `http://` reaching a server that expects `https://` (a server behind a
    /// TLS-terminating proxy, or a client with the wrong base URL) is refused as before, `bad-signature`,
    /// and the problem's detail says that the scheme is what differs. The check that finds it runs only
    /// after the refusal, writes no replay record (the same request is accepted, once, where `http` is
    /// expected), and says nothing about a signature that verifies under neither scheme.
    @Test func aSignatureForTheOtherSchemeIsRefusedAndTheAnswerSaysSo() async throws {
        let fixture = try Fixture()
        let body = Array(#"{"item": 1}"#.utf8)
        let signedForHTTP = try fixture.signedFields(body: body, scheme: "http")
        let cache = InMemoryReplayCache()
        let keys = CountingKeys(fixture.keys)
        try await Self.application(keys: keys, replayCache: cache).test(.router) { client in
            try await client.execute(uri: "/orders", method: .post, headers: signedForHTTP, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Signature")
                let problem = try Self.json(response)
                #expect(problem["reason"] as? String == "bad-signature")
                let detail = problem["detail"] as? String ?? ""
                #expect(detail.contains("one it carries verifies as a request to http://"), "\(detail)")
                // No signature or key is named: with several, the first to fail need not be the one
                // that verifies (the outside attack found the hint crediting the wrong one).
                #expect(!detail.contains("'sig1'") && !detail.contains("client-1"), "\(detail)")
                #expect(detail.contains("scheme"), "\(detail)")
            }
            // A request signed for https costs one key lookup and nothing more.
            let before = keys.lookups
            try await client.execute(uri: "/orders", method: .post, headers: try fixture.signedFields(body: body), body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .ok)
            }
            #expect(keys.lookups == before + 1)
            // A signature by another key under the same key id verifies under neither scheme: no hint.
            let impostor = Fixture(client: try TestRequestSigner(keyID: "client-1"))
            for scheme in ["http", "https"] {
                let fields = try impostor.signedFields(body: body, scheme: scheme)
                try await client.execute(uri: "/orders", method: .post, headers: fields, body: ByteBuffer(bytes: body)) { response in
                    #expect(response.status == .unauthorized)
                    let problem = try Self.json(response)
                    #expect(problem["reason"] as? String == "bad-signature")
                    #expect((problem["detail"] as? String)?.contains("would verify") == false, "\(problem)")
                }
            }
        }
        // The refusal wrote no replay record: where http is expected, the request passes once.
        try await Self.application(keys: fixture.keys, replayCache: cache, scheme: "http").test(.router) { client in
            try await client.execute(uri: "/orders", method: .post, headers: signedForHTTP, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/orders", method: .post, headers: signedForHTTP, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .unauthorized)
                let problem = try Self.json(response)
                #expect(problem["reason"] as? String == "replayed")
            }
        }
    }

    /// A body over the limit is refused with 413 before anything else, and the route never runs.
    @Test func aBodyOverTheLimitIs413() async throws {
        let fixture = try Fixture()
        let body = [UInt8](repeating: 0x61, count: 65)
        let fields = try fixture.signedFields(body: body)
        try await Self.application(keys: fixture.keys, maximumBodySize: 64).test(.router) { client in
            try await client.execute(uri: "/orders", method: .post, headers: fields, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .contentTooLarge)
                let problem = try Self.json(response)
                #expect(problem["type"] as? String == ProblemDetails.typePrefix + "body-too-large")
                #expect(problem["status"] as? Int == 413)
                #expect((problem["detail"] as? String)?.contains("64 bytes") == true)
            }
            // At the limit, it passes.
            let fitting = [UInt8](repeating: 0x61, count: 64)
            try await client.execute(uri: "/orders", method: .post, headers: try fixture.signedFields(body: fitting), body: ByteBuffer(bytes: fitting)) { response in
                #expect(response.status == .ok)
            }
        }
    }

    /// A key store that fails is 503, and its error (here holding a password) is not shown.
    @Test func aFailingKeyStoreIs503AndShowsNothingOfIt() async throws {
        let fixture = try Fixture()
        let body = Array("{}".utf8)
        let fields = try fixture.signedFields(body: body)
        try await Self.application(keys: FailingKeys()).test(.router) { client in
            try await client.execute(uri: "/orders", method: .post, headers: fields, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.wwwAuthenticate] == nil)
                let text = String(buffer: response.body)
                #expect(!text.contains("hunter2") && !text.contains("postgres"))
                let problem = try Self.json(response)
                #expect(problem["type"] as? String == ProblemDetails.typePrefix + "unavailable")
            }
        }
    }

    /// A replay cache that refuses new records fails closed: 503, never a pass.
    @Test func aFullReplayCacheIs503() async throws {
        let fixture = try Fixture()
        let body = Array("{}".utf8)
        let fields = try fixture.signedFields(body: body)
        try await Self.application(keys: fixture.keys, replayCache: InMemoryReplayCache(capacity: 0)).test(.router) { client in
            try await client.execute(uri: "/orders", method: .post, headers: fields, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .serviceUnavailable)
                let problem = try Self.json(response)
                #expect(problem["reason"] as? String == "unavailable")
            }
        }
    }

    /// The problem body's fields and order are fixed: one scheme for every module.
    @Test func problemDetailsBodyIsFixed() {
        let problem = ProblemDetails(status: .tooManyRequests, reason: "rate-limited", detail: "try again in 3 s")
        #expect(String(decoding: problem.body, as: UTF8.self) == #"{"detail":"try again in 3 s","reason":"rate-limited","status":429,"title":"Too Many Requests","type":"https://coffer.dev/problems/rate-limited"}"#)
        #expect(problem.response().headers[.contentType] == "application/problem+json")
    }
}
