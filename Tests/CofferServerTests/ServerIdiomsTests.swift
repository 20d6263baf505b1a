import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import CofferHummingbird
import CofferServer
import CofferServerWire
import CofferTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Metrics
import NIOCore
import Testing

/// The server in Hummingbird's idioms (issue 44): problems thrown as `HTTPResponseError`s, one strict
/// body reader, metrics made once, one clock every route reads, answers typed on both sides.
@Suite("Server idioms")
struct ServerIdiomsTests {
    typealias Server = RegistrationServerTests

    /// A problem a handler throws is answered with the very bytes of the problem's own response:
    /// Hummingbird answers it as an `HTTPResponseError`.
    @Test func aThrownProblemIsAnsweredAsAReturnedOne() async throws {
        let problem = ProblemDetails(status: .conflict, reason: "email-exists", detail: "already \"registered\" / é \\ tab\tend")
        let router = Router()
        router.get("returned") { _, _ -> Response in problem.response() }
        router.get("thrown") { _, _ -> Response in throw problem }
        try await Application(router: router).test(.router) { client in
            let returned = try await client.execute(uri: "/returned", method: .get)
            let thrown = try await client.execute(uri: "/thrown", method: .get)
            #expect(thrown.status == .conflict && returned.status == .conflict)
            #expect(thrown.headers[.contentType] == "application/problem+json")
            #expect(Array(thrown.body.readableBytesView) == problem.body)
            #expect(thrown.body == returned.body)
        }
    }

    /// Counts how many counters and timers are made, by label and dimensions.
    final class CountingFactory: MetricsFactory, @unchecked Sendable {
        private let lock = NSLock()
        private var made: [String: Int] = [:]

        private func note(_ label: String, _ dimensions: [(String, String)]) {
            lock.withLock { made[([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " "), default: 0] += 1 }
        }

        /// How many times the metric was made.
        func count(_ label: String, _ dimensions: [(String, String)]) -> Int {
            lock.withLock { made[([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " ")] ?? 0 }
        }

        func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
            note(label, dimensions)
            return NOOPMetricsHandler.instance
        }

        func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { NOOPMetricsHandler.instance }

        func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
            note(label, dimensions)
            return NOOPMetricsHandler.instance
        }

        func destroyCounter(_ handler: any CounterHandler) {}
        func destroyRecorder(_ handler: any RecorderHandler) {}
        func destroyTimer(_ handler: any TimerHandler) {}
    }

    /// Each counter and timer is made once, however many requests count in it (as Hummingbird's
    /// `MetricsMiddleware` keeps its own), under the names and labels the operations tests read.
    @Test func metricsAreMadeOncePerLabel() async throws {
        let factory = CountingFactory()
        var options = RegistrationServer.Options()
        options.metricsFactory = factory
        options.registrationsPerMinute = 1
        options.clock = .held(atSeconds: 1_790_000_000)
        // What is counted, not how fast /ready answers on a machine busy with other tests.
        options.readinessTimeout = .seconds(60)
        let router = try RegistrationServer(store: InMemoryRegistrationStore(), options: options).router()
        try await Application(router: router).test(.router) { client in
            for _ in 0..<5 { #expect(try await client.execute(uri: "/health", method: .get).status == .ok) }
            for _ in 0..<5 { #expect(try await client.execute(uri: "/ready", method: .get).status == .ok) }
            for _ in 0..<3 {
                _ = try await client.execute(uri: "/register", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"algorithm": "hmac-sha256"}"#))
            }
        }
        #expect(factory.count("coffer_requests_total", [("route", "/health"), ("status", "200")]) == 1)
        #expect(factory.count("coffer_store_seconds", [("operation", "ping")]) == 1)
        #expect(factory.count("coffer_requests_total", [("route", "/register"), ("status", "429")]) == 1, "two refusals, one counter")
        #expect(factory.count("coffer_rate_limited_total", [("limit", "registration")]) == 1)
    }

    /// Every route reads the server's clock: held still, the times it records are the clock's.
    @Test func theRoutesReadTheServersClock() async throws {
        let held: Int64 = 1_790_000_000
        let store = InMemoryRegistrationStore()
        var options = RegistrationServer.Options()
        options.clock = .held(atSeconds: held)
        options.masterKey = try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32))
        try await Server.withServer(store: store, options: options) { base in
            let identity = RecipientPrivateKey.generateX25519()
            let signer = try await DataKeyTests.device(at: base, identity: identity)
            let device = try #require(try await store.key(id: signer.keyID))
            #expect(device.createdAt == held, "the registration's time")
            _ = try await DataKeyClient(server: base, signer: signer, identity: identity).fetch()
            #expect(try await store.dataKey(owner: signer.keyID, version: 1)?.createdAt == held, "the data key's time")
            #expect(try await store.key(id: signer.keyID)?.lastUsedAt == held - held % 60, "the use, to the minute")
            let created = try await Server.send(Server.signedUserRequest(base, signer: signer, email: "ada@example.com"))
            #expect(created.status == 201)
            let user = try #require(try await store.users(email: "ada@example.com", limit: 1).first)
            #expect(user.createdAt == held, "the user's time")
        }
        try await store.close()
    }

    /// One strict reader for every body: the same problems on a public route and on signed ones, for
    /// a body too large, sent as another type, not an object, with a field the route does not take, or
    /// a field of the wrong type; nothing is stored for any of them.
    @Test func everyRouteReadsItsBodyStrictly() async throws {
        let store = InMemoryRegistrationStore()
        var options = RegistrationServer.Options()
        options.masterKey = try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32))
        options.registrationsPerMinute = nil
        try await Server.withServer(store: store, options: options) { base in
            let identity = RecipientPrivateKey.generateX25519()
            let signer = try await DataKeyTests.device(at: base, identity: identity)
            let url = try #require(URL(string: base))
            /// `body` to `path`: signed by the device unless the path is `/register`.
            func send(_ path: String, _ body: String, contentType: String = "application/json") async throws -> Server.Reply {
                guard path != "/register" else {
                    var request = HTTPClientRequest(url: base + path)
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: contentType)
                    request.body = .bytes(ByteBuffer(string: body))
                    return try await Server.send(request)
                }
                var request = HTTPRequest(method: .post, scheme: "http", authority: "\(url.host ?? ""):\(url.port ?? 80)", path: path)
                request.headerFields[.contentType] = contentType
                try signer.sign(&request, body: Array(body.utf8))
                return try await Server.send(try HTTPClient.clientRequest(request, body: Array(body.utf8)))
            }
            // A field given twice is refused, whichever copy a parser would keep (JSON's escapes
            // spell the same name too): a proxy or log that reads the other copy never disagrees.
            let routes: [(path: String, limit: Int, wrongType: String, repeated: [String])] = [
                ("/register", 64 * 1024, #"{"algorithm": 7}"#, [#"{"algorithm": "ed25519", "algorithm": "hmac-sha256"}"#]),
                (
                    "/register_user", 64 * 1024, #"{"email": "a@example.com", "name": 7}"#,
                    [#"{"email": "a@example.com", "name": "A", "email": "b@example.com"}"#, #"{"email": "a@example.com", "name": "A", "em\u0061il": "b@example.com"}"#]
                ),
                ("/encryption-key", 4096, #"{"encryptionKey": ["x"]}"#, [#"{"encryptionKey": "x", "encryptionKey": "y"}"#]),
                ("/data-keys", 4096, #"{"version": "one"}"#, [#"{"version": 1, "version": "one"}"#]),
            ]
            for route in routes {
                for body in route.repeated {
                    let reply = try await send(route.path, body)
                    let problem = try #require(reply.problem, "\(route.path) \(body): \(reply.text.prefix(200))")
                    #expect(reply.status == 400 && problem.reason == "invalid-request" && problem.detail.contains("more than once"), "\(route.path) \(body): \(reply.text.prefix(200))")
                }
                let cases: [(body: String, contentType: String, status: Int, reason: String)] = [
                    (#"{"x": ""#.padding(toLength: route.limit + 10, withPad: "a", startingAt: 0) + #""}"#, "application/json", 413, "body-too-large"),
                    (#"{}"#, "text/plain", 415, "unsupported-media-type"),
                    ("[1, 2]", "application/json", 400, "invalid-request"),
                    (#"{"admin": true}"#, "application/json", 400, "unknown-field"),
                    (route.wrongType, "application/json", 400, "invalid-request"),
                ]
                for refused in cases {
                    let reply = try await send(route.path, refused.body, contentType: refused.contentType)
                    let problem = try #require(reply.problem, "\(route.path) \(refused.reason): \(reply.text.prefix(200))")
                    #expect(reply.status == refused.status && problem.status == refused.status, "\(route.path) \(refused.reason)")
                    #expect(problem.reason == refused.reason && problem.type == ProblemDetails.typePrefix + refused.reason, "\(route.path) \(reply.text.prefix(200))")
                }
            }
            #expect(try await store.users(email: nil, limit: 10).isEmpty)
            #expect(try await store.keys(limit: 10).count == 1, "the device alone")
            #expect(try await store.dataKey(owner: signer.keyID, version: nil) == nil)
        }
        try await store.close()
    }

    /// The admin API's answers decode into the wire types the clients read, `state` and `kind` typed.
    @Test func theAdminAnswersAreTheClientsTypes() async throws {
        let admin = try SigningKey.generate(.ed25519)
        let store = InMemoryRegistrationStore()
        try await Server.withServer(store: store, options: AllowListTests.options(admin: admin, registration: .open)) { base in
            let device = try SigningKey.generate(.p256)
            let registered = try await Server.register(device, at: base)
            let keyID = try registered.decoded(DeviceRegistration.self).keyId
            let client = try AdminClient(server: base, key: admin)
            #expect(try await client.keys().map(\.state) == [KeyState.active])
            let disabled = try await client.apply(.disable, toKey: keyID)
            #expect(disabled.state == .disabled && disabled.keyId == keyID)
            let events = try await client.events(ofKey: keyID)
            #expect(events.map(\.kind) == [KeyEventKind.state, .registered])
            #expect(events.first?.detail == "disabled" && events.first?.actor.hasPrefix("admin:") == true)
            let issued = try await client.createToken(uses: 2, expiresIn: 3600, platform: "ios")
            #expect(try await client.tokens().map(\.tokenId) == [issued.tokenId])
            try await client.revokeToken(id: issued.tokenId)
            #expect(try await client.tokens().first?.revoked == true)
        }
        try await store.close()
    }
}
