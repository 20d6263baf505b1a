import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServer
import CofferServerWire
import CofferTestSupport
import CofferTesting
import Foundation
import NIOHTTP1
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOSSL
import Testing

/// The registration server on a real loopback port, driven by AsyncHTTPClient through our signing helper.
@Suite("Registration server")
struct RegistrationServerTests {
    struct Reply {
        let status: Int
        let json: [String: Any]
        /// The body as sent.
        let text: String
        /// The answer's header fields.
        var headers: HTTPHeaders = [:]

        /// The body decoded as `T`: route tests read answers typed, as the clients do.
        func decoded<T: Decodable>(_ type: T.Type = T.self) throws -> T {
            try JSONDecoder().decode(T.self, from: Data(text.utf8))
        }

        /// The body as a problem document; nil when it is not one.
        var problem: Problem? { try? decoded(Problem.self) }
        /// The body as `POST /register`'s answer; nil when it is not one.
        var registration: DeviceRegistration? { try? decoded(DeviceRegistration.self) }
        /// The body as a key record of the admin API; nil when it is not one.
        var keyRecord: AdminKeyRecord? { try? decoded(AdminKeyRecord.self) }
    }

    /// An RFC 9457 problem document as Coffer writes one, every field required.
    struct Problem: Decodable, Equatable {
        let type: String
        let title: String
        let status: Int
        let reason: String
        let detail: String
    }

    /// A store in memory: for the tests of the routes themselves (the SQLite and PostgreSQL suites hold
    /// the stores).
    static func memoryStore() -> any RegistrationStore { InMemoryRegistrationStore() }

    /// Sends a request and reads the JSON reply.
    static func send(_ request: HTTPClientRequest) async throws -> Reply {
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
        return Reply(status: Int(response.status.code), json: json, text: String(decoding: body.readableBytesView, as: UTF8.self), headers: response.headers)
    }

    static func post(_ base: String, _ path: String, json: String) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        return try await send(request)
    }

    /// A signed `POST /register_user` ready to send (and to send again).
    static func signedUserRequest(_ base: String, signer: HTTPMessageSigner, email: String, body override: [UInt8]? = nil) throws -> HTTPClientRequest {
        let url = try #require(URL(string: base))
        var request = HTTPRequest(method: .post, scheme: "http", authority: "\(url.host ?? ""):\(url.port ?? 80)", path: "/register_user")
        request.headerFields[.contentType] = "application/json"
        let body = Array(#"{"email": "\#(email)", "name": "Ada"}"#.utf8)
        try signer.sign(&request, body: body)
        return try HTTPClient.clientRequest(request, body: override ?? body)
    }

    /// Registers `key`'s public half with the server at `base`, signed by the key (proof of possession).
    static func register(_ key: SigningKey, at base: String) async throws -> Reply {
        try await RegistrationProofTests.register(key, at: base)
    }

    /// Runs `body` against a live server over `store`.
    static func withServer<Value: Sendable>(
        store: any RegistrationStore, options: RegistrationServer.Options = RegistrationServer.Options(),
        _ body: @escaping @Sendable (String) async throws -> Value
    ) async throws -> Value {
        var options = options
        // These tests check what /ready answers, not how fast: a machine busy with the other tests may
        // take longer than a probe's second.
        options.readinessTimeout = .seconds(60)
        let server = RegistrationServer(store: store, options: options)
        let app = Application(router: try server.router(), configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)), logger: Logger(label: "test"))
        return try await app.test(.live) { client in
            try await body("http://127.0.0.1:\(try #require(client.port))")
        }
    }

    static func sqliteStore(_ directory: TemporaryDirectory) async throws -> any RegistrationStore {
        try await DatabaseLocation.sqlite(path: directory.path("server.sqlite")).openForTest("test")
    }

    @Test func publicKeyRegistrationAndSignedRequests() async throws {
        let store = Self.memoryStore()
        let key = try SigningKey.generate(.ed25519)
        try await Self.withServer(store: store) { base in
            let registered = try await Self.register(key, at: base)
            #expect(registered.status == 201)
            let registration = try registered.decoded(DeviceRegistration.self)
            #expect(registration.algorithm == "ed25519")
            let keyID = registration.keyId
            let again = try await Self.register(key, at: base)
            #expect(again.status == 200)
            #expect(try again.decoded(DeviceRegistration.self).keyId == keyID)

            let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
            let request = try Self.signedUserRequest(base, signer: signer, email: "ada@example.com")
            let created = try await Self.send(request)
            #expect(created.status == 201)
            let user = try created.decoded(SignedUpUser.self)
            #expect(user.keyId == keyID)
            #expect(user.email == "ada@example.com")
            // Sorted keys, slashes unescaped: the same bytes JSONSerialization wrote before.
            #expect(created.text == #"{"email":"ada@example.com","id":1,"keyId":"\#(keyID)","name":"Ada"}"#)

            let replayed = try await Self.send(request)
            #expect(replayed.status == 401)
            #expect(replayed.problem?.reason == "replayed")
            #expect(replayed.text.hasPrefix(#"{"detail":"#) && replayed.text.hasSuffix(#","reason":"replayed","status":401,"title":"The request's signature was refused","type":"https://coffer.dev/problems/replayed"}"#))

            let unsigned = try await Self.post(base, "/register_user", json: #"{"email": "bob@example.com", "name": "Bob"}"#)
            #expect(unsigned.status == 401)
            #expect(unsigned.problem?.reason == "missing-signature")

            let tampered = try Self.signedUserRequest(base, signer: signer, email: "eve@example.com", body: Array(#"{"email": "eve@evil.example", "name": "Ada"}"#.utf8))
            #expect(try await Self.send(tampered).problem?.reason == "digest-mismatch")

            var notCovering = signer
            notCovering.components = [.method, .targetURI]
            let uncovered = try await Self.send(Self.signedUserRequest(base, signer: notCovering, email: "carol@example.com"))
            #expect(uncovered.status == 401)
            #expect(uncovered.problem?.reason == "component-not-covered")

            let stranger = HTTPMessageSigner(key: try HTTPSigningKey(SigningKey.generate(.ed25519)), keyID: "k_unknown")
            #expect(try await Self.send(Self.signedUserRequest(base, signer: stranger, email: "dan@example.com")).problem?.reason == "unknown-key")

            let impostor = HTTPMessageSigner(key: try HTTPSigningKey(SigningKey.generate(.ed25519)), keyID: keyID)
            #expect(try await Self.send(Self.signedUserRequest(base, signer: impostor, email: "dan@example.com")).problem?.reason == "bad-signature")

            let duplicate = try await Self.send(Self.signedUserRequest(base, signer: signer, email: "ada@example.com"))
            #expect(duplicate.status == 409)
            #expect(duplicate.problem?.reason == "email-exists")

            let health = try await Self.send(HTTPClientRequest(url: base + "/health"))
            #expect(health.status == 200)
            #expect(health.text == #"{"status":"ok"}"#)
        }
        try await store.close()
    }

    /// A database that stops answering: `/ready` says so with 503 (and `Retry-After`), `/health` (liveness)
    /// stays 200, and signed requests fail closed with a 503 problem (never a pass, never a 401 that
    /// blames the client).
    @Test func aDatabaseThatStopsAnsweringIs503() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.sqliteStore(directory)
        let key = try SigningKey.generate(.ed25519)
        try await Self.withServer(store: store) { base in
            let keyID = try #require(try await Self.register(key, at: base).registration?.keyId)
            #expect(try await Self.send(HTTPClientRequest(url: base + "/health")).status == 200)

            try await store.close()
            let ready = try await Self.send(HTTPClientRequest(url: base + "/ready"))
            #expect(ready.status == 503)
            #expect(ready.text == #"{"status":"unavailable"}"#)
            #expect(ready.headers.first(name: "Retry-After") == "1")
            #expect(try await Self.send(HTTPClientRequest(url: base + "/health")).status == 200)

            let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
            let refused = try await Self.send(Self.signedUserRequest(base, signer: signer, email: "ada@example.com"))
            #expect(refused.status == 503)
            #expect(refused.problem?.type == "https://coffer.dev/problems/unavailable")
        }
    }

    /// A signed request whose user cannot be stored gets `503` and leaves nothing behind, not even its
    /// replay record: sent again once the database takes writes, it is accepted (and only then is a
    /// third sending a replay). Before the user and the record were written together, the record was
    /// committed on its own and the second sending was refused as a replay.
    @Test func aRequestThatCouldNotBeStoredCanBeSentAgain() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.sqliteStore(directory)
        let key = try SigningKey.generate(.ed25519)
        try await Self.withServer(store: store) { base in
            let keyID = try #require(try await Self.register(key, at: base).registration?.keyId)
            // Another connection to the same file makes every user insert fail, as a full disk or an
            // I/O error would.
            let other = try DatabaseQueue(path: directory.path("server.sqlite"))
            try await other.write { try $0.execute(sql: "CREATE TRIGGER refuse_users BEFORE INSERT ON coffer_users BEGIN SELECT RAISE(ABORT, 'refused by the test'); END") }
            let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
            let request = try Self.signedUserRequest(base, signer: signer, email: "ada@example.com")
            // The registration's proof of possession has its record already.
            let records = try await other.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM coffer_replay_log") }
            let failed = try await Self.send(request)
            #expect(failed.status == 503, "\(failed.text)")
            #expect(try await other.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM coffer_replay_log") } == records, "no replay record is left")

            try await other.write { try $0.execute(sql: "DROP TRIGGER refuse_users") }
            let again = try await Self.send(request)
            #expect(again.status == 201, "\(again.text)")
            let third = try await Self.send(request)
            #expect(third.status == 401 && third.problem?.reason == "replayed", "\(third.text)")
            try other.close()
        }
    }

    /// A request `/register_user` refuses before storing anything (a bad address) still has its replay
    /// record written, by the middleware after the route answered; one refused for a taken address has
    /// it written with the attempt. Sent again, each is a replay, not a second 400 or 409.
    @Test func refusedRequestsAreRememberedToo() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.sqliteStore(directory)
        let key = try SigningKey.generate(.ed25519)
        try await Self.withServer(store: store) { base in
            let keyID = try #require(try await Self.register(key, at: base).registration?.keyId)
            let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
            #expect(try await Self.send(Self.signedUserRequest(base, signer: signer, email: "ada@example.com")).status == 201)
            for (email, first) in [("not an address", 400), ("ada@example.com", 409)] {
                let request = try Self.signedUserRequest(base, signer: signer, email: email)
                #expect(try await Self.send(request).status == first, "\(email)")
                let again = try await Self.send(request)
                #expect(again.status == 401 && again.problem?.reason == "replayed", "\(email): \(again.text)")
            }
        }
    }

    /// What no route takes is a problem document too: a served path asked with another method is `405`
    /// with `Allow`, any other path `404`. Before, both were a bare `404` with an empty body. The admin
    /// API's paths answer another method `404` like an unknown path: only an admin learns they exist.
    @Test func unmatchedRequestsGetProblemDocuments() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.sqliteStore(directory)
        var options = RegistrationServer.Options()
        options.adminKeys = [try SigningKey.generate(.ed25519).verifyingKey]
        try await Self.withServer(store: store, options: options) { base in
            for (method, path, allow) in [
                ("GET", "/register_user", "POST"), ("DELETE", "/health", "GET"), ("PUT", "/register", "POST"), ("GET", "/encryption-key", "POST"),
            ] {
                var request = HTTPClientRequest(url: base + path)
                request.method = .init(rawValue: method)
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
                let body = try await response.body.collect(upTo: 1 << 16)
                let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
                #expect(response.status.code == 405, "\(method) \(path)")
                #expect(response.headers.first(name: "Allow") == allow, "\(method) \(path)")
                #expect(response.headers.first(name: "Content-Type") == "application/problem+json")
                #expect(json?["reason"] as? String == "method-not-allowed", "\(method) \(path)")
            }
            for path in ["/nothing-here", "/register_user/extra", "/admin/keys/k-123/melt"] {
                let reply = try await Self.send(HTTPClientRequest(url: base + path))
                #expect(reply.status == 404 && reply.problem?.reason == "not-found", "\(path): \(reply.text)")
            }
            for (method, path) in [("GET", "/admin/keys/k-123/disable"), ("DELETE", "/admin/tokens")] {
                var request = HTTPClientRequest(url: base + path)
                request.method = .init(rawValue: method)
                let reply = try await Self.send(request)
                #expect(reply.status == 404 && reply.problem?.reason == "not-found", "\(method) \(path): \(reply.text)")
            }
        }
    }

    /// Of many copies of one signed request sent at once, exactly one is accepted; the others are replays.
    @Test func copiesSentAtOnceAreAcceptedOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.sqliteStore(directory)
        try await Self.withServer(store: store) { base in
            let registered = try await Self.post(base, "/register", json: #"{"algorithm": "hmac-sha256"}"#)
            let keyID = try #require(registered.registration?.keyId)
            let secret = try Base64.decode(try #require(registered.json["secret"] as? String))
            let signer = HTTPMessageSigner(key: .hmacSHA256(secret: try MACKey(bytes: secret)), keyID: keyID)
            let request = try Self.signedUserRequest(base, signer: signer, email: "grace@example.com")
            let replies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        let reply = try await Self.send(request)
                        return "\(reply.status) \(reply.problem?.reason ?? "")"
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(replies.sorted() == ["201 "] + Array(repeating: "401 replayed", count: 11))
        }
        try await store.close()
    }

    @Test(.enabled(if: CommandRunner.isAvailable("openssl"), "needs the openssl command to make a certificate"))
    func servesHTTPSWithTheGivenCertificateAndSignsForHTTPS() async throws {
        let directory = try TemporaryDirectory()
        try await OpenSSLFixtures.selfSignedCertificate(serial: "1", subject: "/CN=localhost", alternativeNames: "DNS:localhost,IP:127.0.0.1", in: directory)
        let store = try await Self.sqliteStore(directory)
        var options = RegistrationServer.Options()
        options.scheme = "https"
        let server = RegistrationServer(store: store, options: options)
        let app = try server.application(host: "127.0.0.1", port: 0, certificatePath: directory.path("cert.pem"), keyPath: directory.path("cert.key"), logger: Logger(label: "test"))
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.path("cert.pem")))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        do {
            try await app.test(.live) { testClient in
                let port = try #require(testClient.port)
                let base = "https://localhost:\(port)"
                let health = try await client.execute(HTTPClientRequest(url: base + "/health"), timeout: .seconds(120))
                #expect(health.status == .ok)

                let key = try SigningKey.generate(.ed25519)
                // The registration is signed by the key it registers, for the https URL clients reach.
                var register = HTTPRequest(method: .post, scheme: "https", authority: "localhost:\(port)", path: "/register")
                register.headerFields[.contentType] = "application/json"
                let proof = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: key.verifyingKey.fingerprint.registeredKeyID)
                let registered = try await client.execute(signing: register, body: Array(RegistrationProofTests.body(key).utf8), with: proof)
                let reply = try await registered.body.collect(upTo: 1 << 16)
                let keyID = try #require((try JSONSerialization.jsonObject(with: Data(reply.readableBytesView)) as? [String: Any])?["keyId"] as? String)

                // The signature covers @target-uri with the https scheme the server was told it serves.
                var request = HTTPRequest(method: .post, scheme: "https", authority: "localhost:\(port)", path: "/register_user")
                request.headerFields[.contentType] = "application/json"
                let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
                let created = try await client.execute(signing: request, body: Array(#"{"email": "tls@example.com", "name": "T"}"#.utf8), with: signer)
                let detail = try await created.body.collect(upTo: 1 << 16)
                #expect(created.status == .created, "\(String(buffer: detail))")

                // Plain HTTP to the TLS port gets no answer.
                await #expect(throws: (any Error).self) {
                    _ = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/health"), timeout: .seconds(10))
                }
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
        try await store.close()
    }

    @Test func sharedSecretRegistrationSendsTheSecretOnce() async throws {
        let store = Self.memoryStore()
        try await Self.withServer(store: store) { base in
            let registered = try await Self.post(base, "/register", json: #"{"algorithm": "hmac-sha256"}"#)
            #expect(registered.status == 201)
            struct SharedSecret: Decodable { let keyId: String, algorithm: String, secret: String }
            let answer = try registered.decoded(SharedSecret.self)
            #expect(answer.algorithm == "hmac-sha256")
            let keyID = answer.keyId
            let secret = try Base64.decode(answer.secret)
            #expect(secret.count == 32)
            let signer = HTTPMessageSigner(key: .hmacSHA256(secret: try MACKey(bytes: secret)), keyID: keyID)
            #expect(try await Self.send(Self.signedUserRequest(base, signer: signer, email: "hmac@example.com")).status == 201)
            // Through the AsyncHTTPClient helper, which signs and sends in one call.
            let url = try #require(URL(string: base))
            var request = HTTPRequest(method: .post, scheme: "http", authority: "\(url.host ?? ""):\(url.port ?? 80)", path: "/register_user")
            request.headerFields[.contentType] = "application/json"
            let response = try await HTTPClient.shared.execute(signing: request, body: Array(#"{"email": "helper@example.com", "name": "H"}"#.utf8), with: signer)
            #expect(response.status == .created)
        }
        try await store.close()
    }

    @Test func badRegistrationsAreRefusedWithReasons() async throws {
        let store = Self.memoryStore()
        let rsaKey = try SigningKey.generate(.rsa2048)
        let rsa = rsaKey.verifyingKey.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
        try await Self.withServer(store: store) { base in
            let cases: [(String, Int, String)] = [
                ("not json", 400, "invalid-request"),
                (#"{"publicKey": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"}"#, 400, "invalid-key"),
                (#"{"algorithm": "md5"}"#, 400, "unsupported-algorithm"),
                (#"{}"#, 400, "invalid-request"),
                (#"{"publicKey": "\#(rsa)"}"#, 400, "unsupported-key"),
            ]
            for (json, status, reason) in cases {
                let reply = try await Self.post(base, "/register", json: json)
                #expect(reply.status == status, "\(json)")
                #expect(reply.problem?.reason == reason, "\(json)")
                #expect(reply.problem?.status == status, "\(json)")
            }
            let withAlgorithm = try await RegistrationProofTests.register(rsaKey, at: base, algorithm: .rsaPSSSHA512)
            #expect(withAlgorithm.status == 201, "\(withAlgorithm.text)")
        }
        try await store.close()
    }

    static let postgresURL = ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"]

    /// Copies of one signed `/register_user` sent at once to two instances on one PostgreSQL database:
    /// the user and its replay record are one statement, so exactly one copy stores the user and every
    /// other is a replay (none an `email-exists`, which would mean a copy got past the replay record).
    @Test(.enabled(if: postgresURL != nil, "set COFFER_TEST_POSTGRES_URL=postgres://… to run against a real PostgreSQL (.ci/run does)"))
    func copiesSentAtOnceToTwoInstancesStoreOneUser() async throws {
        let url = try #require(Self.postgresURL)
        let first = try await DatabaseLocation(url).openForTest("test")
        let second = try await DatabaseLocation(url).openForTest("test")
        let key = try SigningKey.generate(.ed25519)
        let statuses: [Int] = try await Self.withServer(store: first) { firstBase in
            try await Self.withServer(store: second) { secondBase in
                let keyID = try #require(try await Self.register(key, at: firstBase).registration?.keyId)
                let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
                let request = try Self.signedUserRequest(firstBase, signer: signer, email: "pg-\(UUID().uuidString)@example.com")
                let port = try #require(URL(string: firstBase)?.port)
                var copy = request
                copy.url = request.url.replacingOccurrences(of: firstBase, with: secondBase)
                copy.headers.replaceOrAdd(name: "Host", value: "127.0.0.1:\(port)")
                return try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for index in 0..<16 {
                        let sent = index.isMultiple(of: 2) ? request : copy
                        group.addTask {
                            let reply = try await Self.send(sent)
                            return (reply.status, reply.problem?.reason)
                        }
                    }
                    var statuses: [Int] = []
                    for try await (status, reason) in group {
                        statuses.append(status)
                        if status != 201 { #expect(status == 401 && reason == "replayed", "\(status) \(reason ?? "")") }
                    }
                    return statuses
                }
            }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1, "\(statuses)")
        try await first.close()
        try await second.close()
    }

    /// Two server instances on one PostgreSQL database: a key registered at one is known at the other,
    /// and a request accepted by one is a replay at the other.
    @Test(.enabled(if: postgresURL != nil, "set COFFER_TEST_POSTGRES_URL=postgres://… to run against a real PostgreSQL (.ci/run does)"))
    func twoInstancesShareKeysAndTheReplayCache() async throws {
        let url = try #require(Self.postgresURL)
        let first = try await DatabaseLocation(url).openForTest("test")
        let second = try await DatabaseLocation(url).openForTest("test")
        let key = try SigningKey.generate(.p256)
        let email = "pg-\(UUID().uuidString)@example.com"
        let keyID: String = try await Self.withServer(store: first) { base in
            let registered = try await Self.register(key, at: base)
            #expect(registered.status == 201 || registered.status == 200)
            return try #require(registered.registration?.keyId)
        }
        let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
        try await Self.withServer(store: first) { firstBase in
            try await Self.withServer(store: second) { secondBase in
                // Both servers listen on 127.0.0.1; the request names the first one's authority, and is
                // sent to each as it would be behind a load balancer (same Host).
                let request = try Self.signedUserRequest(firstBase, signer: signer, email: email)
                #expect(try await Self.send(request).status == 201)
                var replay = request
                replay.url = request.url.replacingOccurrences(of: firstBase, with: secondBase)
                let port = try #require(URL(string: firstBase)?.port)
                replay.headers.replaceOrAdd(name: "Host", value: "127.0.0.1:\(port)")
                let refused = try await Self.send(replay)
                #expect(refused.status == 401)
                #expect(refused.problem?.reason == "replayed")
            }
        }
        try await first.close()
        try await second.close()
    }
}
