import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServer
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Testing

/// The allow-list (issue 22): admins disable, enable and revoke keys and issue registration tokens; a
/// changed key is refused by every instance once its record is re-read; tokens work exactly as often
/// as they say; bad requests change nothing. On SQLite and, when configured, on PostgreSQL with two
/// server instances sharing the database.
@Suite("Allow-list and admin API")
struct AllowListTests {
    /// Where a route test keeps its records: in memory (``InMemoryRegistrationStore``, the routes alone),
    /// or in a database (the routes and the store together).
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case memory, sqlite, postgres
        var testDescription: String { rawValue }
    }

    typealias Server = RegistrationServerTests

    /// Two stores over one database (two instances' views), or nil when PostgreSQL is not configured.
    static func stores(_ backend: Backend, in folder: TemporaryDirectory) async throws -> (any RegistrationStore, any RegistrationStore)? {
        switch backend {
        case .memory:
            // Two instances over one database: one store both see.
            let store = InMemoryRegistrationStore()
            return (store, store)
        case .sqlite:
            let location = DatabaseLocation.sqlite(path: folder.path("server.sqlite"))
            return (try await location.openForTest("a"), try await location.openForTest("b"))
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"] else { return nil }
            let location = try DatabaseLocation(url)
            return (try await location.openForTest("a"), try await location.openForTest("b"))
        }
    }

    static func options(admin: SigningKey, registration: RegistrationMode? = nil) -> RegistrationServer.Options {
        var options = RegistrationServer.Options()
        options.adminKeys = [admin.verifyingKey]
        options.registration = registration
        // Every request re-reads the key record, so the tests need no clock; StoreKeyProviderTests
        // holds the half-second default to its word with an injected clock.
        options.keyRecordMaximumAge = .zero
        options.registrationsPerMinute = nil
        return options
    }

    /// A request signed by `key` under `keyID`, covering method, target URI and content digest.
    static func signed(
        _ method: HTTPRequest.Method, _ base: String, _ path: String, json: String = "", key: SigningKey, keyID: String, algorithm: HTTPSignatureAlgorithm? = nil
    ) throws -> HTTPClientRequest {
        let url = try #require(URL(string: base))
        var request = HTTPRequest(method: method, scheme: "http", authority: "\(url.host ?? ""):\(url.port ?? 80)", path: path)
        if !json.isEmpty { request.headerFields[.contentType] = "application/json" }
        let signer = HTTPMessageSigner(key: try HTTPSigningKey(key, algorithm: algorithm), keyID: keyID)
        try signer.sign(&request, body: Array(json.utf8))
        return try HTTPClient.clientRequest(request, body: Array(json.utf8))
    }

    static func admin(_ method: HTTPRequest.Method, _ base: String, _ path: String, json: String = "", as admin: SigningKey) async throws -> Server.Reply {
        try await Server.send(signed(method, base, path, json: json, key: admin, keyID: admin.verifyingKey.fingerprint.keyID))
    }

    static func userRequest(_ base: String, key: SigningKey, keyID: String) async throws -> Server.Reply {
        let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
        return try await Server.send(Server.signedUserRequest(base, signer: signer, email: "u\(UUID().uuidString.prefix(12))@example.com"))
    }

    static func issueToken(_ base: String, admin: SigningKey, json: String) async throws -> String {
        let issued = try await Self.admin(.post, base, "/admin/tokens", json: json, as: admin)
        #expect(issued.status == 201, "\(issued.text)")
        return try #require(issued.json["token"] as? String)
    }

    static func register(_ key: SigningKey, at base: String, token: String?, platform: String? = nil) async throws -> Server.Reply {
        try await RegistrationProofTests.register(key, at: base, token: token, platform: platform)
    }

    @Test(arguments: Backend.allCases)
    func aKeyChangedThroughOneInstanceIsRefusedByTheOther(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        guard let (first, second) = try await Self.stores(backend, in: folder) else { return }
        defer { Task { try? await first.close(); try? await second.close() } }
        let adminKey = try SigningKey.generate(.ed25519)
        let app = try SigningKey.generate(.p256)
        let options = Self.options(admin: adminKey, registration: .open)
        try await Server.withServer(store: first, options: options) { one in
            try await Server.withServer(store: second, options: options) { two in
                let keyID = try #require(try await Server.register(app, at: one).registration?.keyId)
                #expect(try await Self.userRequest(two, key: app, keyID: keyID).status == 201)

                let listed = try await Self.admin(.get, one, "/admin/keys", as: adminKey)
                #expect(listed.status == 200)
                let keys = try #require(listed.json["keys"] as? [[String: Any]])
                let entry = try #require(keys.first { $0["keyId"] as? String == keyID })
                #expect(entry["state"] as? String == "active")
                #expect(entry["lastUsedAt"] as? Int != nil, "the accepted request was recorded")
                #expect(!listed.text.contains("secret"), "a listing never shows a secret")

                let disabled = try await Self.admin(.post, one, "/admin/keys/\(keyID)/disable", as: adminKey)
                #expect(disabled.keyRecord?.state == .disabled)
                let refused = try await Self.userRequest(two, key: app, keyID: keyID)
                #expect(refused.status == 401)
                #expect(refused.problem?.reason == "key-revoked")

                #expect(try await Self.admin(.post, two, "/admin/keys/\(keyID)/enable", as: adminKey).keyRecord?.state == .active)
                #expect(try await Self.userRequest(one, key: app, keyID: keyID).status == 201)

                #expect(try await Self.admin(.post, two, "/admin/keys/\(keyID)/revoke", as: adminKey).keyRecord?.state == .revoked)
                #expect(try await Self.userRequest(one, key: app, keyID: keyID).problem?.reason == "key-revoked")
                let again = try await Self.admin(.post, one, "/admin/keys/\(keyID)/enable", as: adminKey)
                #expect(again.status == 409 && again.problem?.reason == "key-revoked", "revocation is final")
                #expect(try await Self.userRequest(two, key: app, keyID: keyID).problem?.reason == "key-revoked")
                #expect(try await Self.admin(.post, one, "/admin/keys/k_nope/disable", as: adminKey).problem?.reason == "unknown-key")
            }
        }
    }

    @Test func onlyAdminKeysReachTheAdminAPI() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let adminKey = try SigningKey.generate(.ed25519)
        try await Server.withServer(store: store, options: Self.options(admin: adminKey, registration: .open)) { base in
            let app = try SigningKey.generate(.ed25519)
            let keyID = try #require(try await Server.register(app, at: base).registration?.keyId)
            // A registered app key, signing correctly, is not an admin: to it there is no admin API.
            let byApp = try await Server.send(Self.signed(.get, base, "/admin/keys", key: app, keyID: keyID))
            #expect(byApp.status == 404 && byApp.problem?.reason == "not-found")
            let unsigned = try await Server.send(HTTPClientRequest(url: base + "/admin/keys"))
            #expect(unsigned.status == 404)
            // An app key that claims the admin's keyid fails the signature, and is told nothing more.
            let impostor = try await Server.send(Self.signed(.post, base, "/admin/keys/\(keyID)/revoke", key: app, keyID: adminKey.verifyingKey.fingerprint.keyID))
            #expect(impostor.status == 404 && impostor.problem?.reason == "not-found")
            #expect(try await store.key(id: keyID)?.state == .active, "nothing changed")
        }
    }

    @Test(arguments: Backend.allCases)
    func tokensWorkExactlyAsOftenAsTheySay(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        guard let (first, second) = try await Self.stores(backend, in: folder) else { return }
        defer { Task { try? await first.close(); try? await second.close() } }
        let adminKey = try SigningKey.generate(.ed25519)
        let options = Self.options(admin: adminKey)
        #expect(options.effectiveRegistration == .token, "an admin key makes token registration the default")
        try await Server.withServer(store: first, options: options) { one in
            try await Server.withServer(store: second, options: options) { two in
                let missing = try await Self.register(SigningKey.generate(.ed25519), at: one, token: nil)
                #expect(missing.status == 403 && missing.problem?.reason == "token-required")

                let token = try await Self.issueToken(one, admin: adminKey, json: #"{"uses": 2}"#)
                // Bad input spends nothing: an unknown field, then a key that is not one.
                let unknown = try await Server.post(one, "/register", json: #"{"token": "\#(token)", "publicKey": "x", "admin": true}"#)
                #expect(unknown.status == 400 && unknown.problem?.reason == "unknown-field")
                let badKey = try await Server.post(two, "/register", json: #"{"token": "\#(token)", "publicKey": "not a key"}"#)
                #expect(badKey.status == 400)

                #expect(try await Self.register(SigningKey.generate(.ed25519), at: one, token: token).status == 201)
                #expect(try await Self.register(SigningKey.generate(.p256), at: two, token: token).status == 201)
                let third = try await Self.register(SigningKey.generate(.ed25519), at: one, token: token)
                #expect(third.status == 403 && third.problem?.reason == "invalid-token", "two uses, not three")

                let listed = try await Self.admin(.get, two, "/admin/tokens", as: adminKey)
                #expect(!listed.text.contains(token), "the token itself is shown once, when issued")

                let ios = try await Self.issueToken(two, admin: adminKey, json: #"{"platform": "ios"}"#)
                #expect(try await Self.register(SigningKey.generate(.ed25519), at: one, token: ios, platform: "android").problem?.reason == "invalid-token")
                #expect(try await Self.register(SigningKey.generate(.ed25519), at: one, token: ios).problem?.reason == "invalid-token")
                #expect(try await Self.register(SigningKey.generate(.ed25519), at: one, token: ios, platform: "ios").status == 201)

                let revokedToken = try await Self.issueToken(one, admin: adminKey, json: "{}")
                let tokens = try #require(try await Self.admin(.get, one, "/admin/tokens", as: adminKey).json["tokens"] as? [[String: Any]])
                let newest = try #require(tokens.first { ($0["usesLeft"] as? Int) == 1 && ($0["platform"] == nil || $0["platform"] is NSNull) })
                let tokenID = try #require(newest["tokenId"] as? String)
                #expect(try await Self.admin(.post, two, "/admin/tokens/\(tokenID)/revoke", as: adminKey).status == 200)
                #expect(try await Self.register(SigningKey.generate(.ed25519), at: one, token: revokedToken).problem?.reason == "invalid-token")

                let badRequest = try await Self.admin(.post, one, "/admin/tokens", json: #"{"uses": 0}"#, as: adminKey)
                #expect(badRequest.status == 400)
                let extra = try await Self.admin(.post, one, "/admin/tokens", json: #"{"uses": 1, "forever": true}"#, as: adminKey)
                #expect(extra.problem?.reason == "unknown-field")
            }
        }
    }

    @Test func anExpiredTokenIsRefused() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let token = RegistrationToken(tokenID: "t_old", uses: 5, usesLeft: 5, expiresAt: 1_000, platform: nil, revoked: false, createdAt: 1)
        try await store.insertToken(token, secretHash: DigestAlgorithm.sha256.hash("rt_old").hex)
        #expect(try await store.consumeToken(secretHash: DigestAlgorithm.sha256.hash("rt_old").hex, platform: nil, now: 999) != nil)
        #expect(try await store.consumeToken(secretHash: DigestAlgorithm.sha256.hash("rt_old").hex, platform: nil, now: 1_000) == nil)
        #expect(try await store.tokens(limit: 10).first?.usesLeft == 4)
    }

    @Test func closedRegistrationRegistersNobody() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let adminKey = try SigningKey.generate(.ed25519)
        try await Server.withServer(store: store, options: Self.options(admin: adminKey, registration: .closed)) { base in
            let refused = try await Self.register(SigningKey.generate(.ed25519), at: base, token: nil)
            #expect(refused.status == 403 && refused.problem?.reason == "registration-closed")
            #expect(try await store.keys(limit: 10).isEmpty)
        }
    }

    /// The half-second promise, with an injected clock: a record is reused while younger than the
    /// maximum age and read again after it, so a revocation anywhere is seen within that age.
    @Test func keyRecordsAreTrustedForTheirMaximumAgeOnly() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let key = try SigningKey.generate(.ed25519)
        let record = RegisteredKey(keyID: RegistrationProofTests.registeredKeyID(key), algorithm: .ed25519, publicKey: Base64.encode(key.verifyingKey.derRepresentation), secret: nil, createdAt: 1)
        _ = try await store.registerKey(record, spending: nil)
        let start = ContinuousClock.now
        let elapsed = LockedValue(Duration.zero)
        let provider = StoreKeyProvider(store: store, clock: { start + elapsed.value })
        #expect(provider.maximumAge == .milliseconds(500))
        #expect(try await provider.verificationKey(forKeyID: record.keyID) != nil)
        _ = try await store.setState(.revoked, ofKey: record.keyID, actor: "test", at: 0)
        elapsed.value = .milliseconds(499)
        #expect(try await provider.verificationKey(forKeyID: record.keyID) != nil, "still the cached record")
        elapsed.value = .milliseconds(500)
        await #expect(throws: HTTPSignatureError.keyRevoked) { try await provider.verificationKey(forKeyID: record.keyID) }
    }

    @Test func aDatabaseFromBeforeMigrationsIsMigratedOnce() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("old.sqlite")
        // The schema Coffer created before migrations were numbered, with a key in it.
        let sqlite = try await CommandRunner.run("sqlite3", [path, """
            CREATE TABLE coffer_keys (key_id TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT, secret TEXT, created_at INTEGER NOT NULL);
            CREATE TABLE coffer_users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL, key_id TEXT NOT NULL REFERENCES coffer_keys(key_id), created_at INTEGER NOT NULL);
            CREATE TABLE coffer_replay (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
            INSERT INTO coffer_keys VALUES ('h_old', 'hmac-sha256', NULL, 'AAAA', 7);
            """])
        guard sqlite.status == 0 else { return }  // no sqlite3 CLI here: covered by the stores' own runs
        let store = try await DatabaseLocation.sqlite(path: path).openForTest("test")
        try await store.migrate()
        let key = try #require(try await store.key(id: "h_old"))
        #expect(key.state == .active && key.createdAt == 7)
        let versions = try await CommandRunner.run("sqlite3", [path, "SELECT group_concat(version) FROM coffer_schema"])
        let recorded = versions.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        #expect(recorded.count >= 2 && recorded == Array(1...recorded.count), "each migration recorded once, in order: \(recorded)")
        try await store.migrate()
        let again = try await CommandRunner.run("sqlite3", [path, "SELECT count(*) FROM coffer_schema"])
        #expect(Int(again.output.trimmingCharacters(in: .whitespacesAndNewlines)) == recorded.count, "migrating again changes nothing")
        try await store.close()
    }
}

extension AllowListTests {
    /// Instances starting together each run the migrations: every migration is applied exactly once.
    @Test(arguments: Backend.allCases)
    func instancesStartingAtOnceMigrateOnce(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        let location: DatabaseLocation
        switch backend {
        case .memory: return  // nothing to migrate
        case .sqlite: location = .sqlite(path: folder.path("fresh.sqlite"))
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"] else { return }
            location = try DatabaseLocation(url)
        }
        let versions = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let store = try await location.openForTest("start")
                    let version = try await store.schemaVersion()
                    try await store.close()
                    return version
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(Set(versions).count == 1 && versions[0] >= 3, "\(versions)")
        if backend == .sqlite {
            let counted = try await CommandRunner.run("sqlite3", [folder.path("fresh.sqlite"), "SELECT count(*) = count(DISTINCT version) FROM coffer_schema"])
            #expect(counted.status != 0 || counted.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        }
    }
}

extension AllowListTests {
    /// Bad input gets a documented problem and changes nothing.
    @Test func badBodiesAreProblemsAndWriteNothing() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        try await Server.withServer(store: store) { base in
            func post(_ json: String, contentType: String?) async throws -> Server.Reply {
                var request = HTTPClientRequest(url: base + "/register")
                request.method = .POST
                if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
                request.body = .bytes(ByteBuffer(string: json))
                return try await Server.send(request)
            }
            let hmac = #"{"algorithm": "hmac-sha256"}"#
            let cases: [(String, String?, Int, String)] = [
                (hmac, "text/plain", 415, "unsupported-media-type"),
                (hmac, nil, 415, "unsupported-media-type"),
                (#"{"algorithm": "#, "application/json", 400, "invalid-request"),
                (#"["hmac-sha256"]"#, "application/json", 400, "invalid-request"),
                (#"{"algorithm": "hmac-sha256", "admin": true}"#, "application/json", 400, "unknown-field"),
                (#"{"algorithm": 7}"#, "application/json", 400, "invalid-request"),
                (#"{"publicKey": "\#(String(repeating: "A", count: 70_000))"}"#, "application/json", 413, "body-too-large"),
            ]
            for (json, type, status, reason) in cases {
                let reply = try await post(json, contentType: type)
                #expect(reply.status == status && reply.problem?.reason == reason, "\(json.prefix(40)) \(type ?? "none"): \(reply.status) \(reply.text.prefix(200))")
            }
            #expect(try await store.keys(limit: 10).isEmpty, "nothing written")
            #expect(try await post(hmac, contentType: "application/json; charset=utf-8").status == 201)
        }
    }
}

/// A value shared with a `@Sendable` clock closure.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
