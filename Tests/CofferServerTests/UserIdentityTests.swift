import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServer
import CofferTestSupport
import CofferTesting
import Foundation
import GRDB
import HTTPTypes
import Testing

/// A user is an identity the backend vouches for (issue 42): signing up an address first gains nothing,
/// addresses compare as people read them, and names and addresses hold no control or bidi characters.
/// On SQLite and, when configured, PostgreSQL.
@Suite("Users the backend vouches for")
struct UserIdentityTests {
    typealias Server = RegistrationServerTests
    typealias AllowList = AllowListTests
    typealias Backend = AllowListTests.Backend

    /// A signed `POST /register_user` with `json` as its body.
    static func signUp(_ base: String, json: String, signer: HTTPMessageSigner) async throws -> Server.Reply {
        let url = try #require(URL(string: base))
        var request = HTTPRequest(method: .post, scheme: "http", authority: "\(url.host ?? ""):\(url.port ?? 80)", path: "/register_user")
        request.headerFields[.contentType] = "application/json"
        try signer.sign(&request, body: Array(json.utf8))
        return try await Server.send(HTTPClient.clientRequest(request, body: Array(json.utf8)))
    }

    /// A device registered with an encryption key (proving possession), and its signer.
    static func device(at base: String, identity: RecipientPrivateKey) async throws -> HTTPMessageSigner {
        let key = try SigningKey.generate(.ed25519)
        let registered = try await RegistrationProofTests.register(key, at: base, encryption: identity.publicKey)
        let keyID = try #require(registered.registration?.keyId, "\(registered.text)")
        return HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
    }

    /// The issue's reproduction: with per-user data keys, an attacker signed up the victim's address
    /// first; when the backend later linked the victim's device to the user with that address, both
    /// devices got the same data key. Now signing up makes no device a member: the attacker's device
    /// gets no user's key, the victim's device (linked by the admin) gets its own.
    @Test(arguments: Backend.allCases)
    func signingUpSomeoneElsesAddressFirstGainsNothing(backend: Backend) async throws {
        try await DataKeyTests.withTwoInstances(backend, scope: .user) { instances in
            let (one, two, admin) = (instances.one, instances.two, instances.admin)
            let address = "victim-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let attackerIdentity = RecipientPrivateKey.generateX25519()
            let attacker = try await Self.device(at: one, identity: attackerIdentity)
            let signedUp = try await Self.signUp(one, json: #"{"email": "\#(address)", "name": "Victim"}"#, signer: attacker)
            #expect(signedUp.status == 201, "\(signedUp.text)")
            let userID = try #require(signedUp.json["id"] as? Int)

            // The victim's device: its own sign-up finds the address taken (in any case).
            let victimIdentity = RecipientPrivateKey.generateX25519()
            let victim = try await Self.device(at: two, identity: victimIdentity)
            let taken = try await Self.signUp(two, json: #"{"email": "\#(address.uppercased())", "name": "Victim"}"#, signer: victim)
            #expect(taken.status == 409 && taken.problem?.reason == "email-exists", "\(taken.text)")

            // The backend, after its own sign-in, links the victim's device to the user with that address.
            let linked = try await AllowList.admin(.post, one, "/admin/keys/\(victim.keyID)/user", json: #"{"userId": \#(userID), "email": "\#(address)"}"#, as: admin)
            #expect(linked.status == 200, "\(linked.text)")

            let victimKey = try await DataKeyClient(server: two, signer: victim, identity: victimIdentity).fetch()
            let attackerClient = try DataKeyClient(server: one, signer: attacker, identity: attackerIdentity)
            let refusal = await DataKeyTests.refusal { () async throws(ServerClientError) in try await attackerClient.fetch() }
            #expect(refusal == "no-user", "the device that signed the address up first is no member of its user")
            #expect(victimKey.version == 1)
        }
    }

    /// Addresses are stored normalized (NFC, domain lowercased) and compared case-insensitively.
    @Test(arguments: Backend.allCases)
    func addressesThatDifferOnlyInCaseAreOneUser(backend: Backend) async throws {
        try await DataKeyTests.withTwoInstances(backend) { instances in
            let signer = try await Self.device(at: instances.one, identity: .generateX25519())
            let local = "Case-\(UUID().uuidString.prefix(8))"
            let created = try await Self.signUp(instances.one, json: #"{"email": "\#(local)@Example.COM", "name": "Case"}"#, signer: signer)
            #expect(created.status == 201 && created.json["email"] as? String == "\(local)@example.com", "\(created.text)")
            for spelling in ["\(local.lowercased())@example.com", "\(local.uppercased())@EXAMPLE.com"] {
                let again = try await Self.signUp(instances.two, json: #"{"email": "\#(spelling)", "name": "Case"}"#, signer: signer)
                #expect(again.status == 409 && again.problem?.reason == "email-exists", "\(spelling): \(again.text)")
            }
            // "e" followed by a combining acute accent is the same address as the precomposed "é".
            let decomposed = try await Self.signUp(instances.one, json: #"{"email": "jos\u0065\u0301-\#(local)@example.com", "name": "José"}"#, signer: signer)
            #expect(decomposed.status == 201 && decomposed.json["email"] as? String == "jos\u{E9}-\(local)@example.com", "\(decomposed.text)")
            let precomposed = try await Self.signUp(instances.two, json: #"{"email": "jos\u00e9-\#(local)@example.com", "name": "José"}"#, signer: signer)
            #expect(precomposed.status == 409, "\(precomposed.text)")
        }
    }

    /// Addresses that reach one mailbox are one user, on every store: default case folding (`ß`/`SS`),
    /// the domain's Unicode and `xn--` spellings, fullwidth forms and a trailing dot; the admin API finds
    /// the user by any of them. (`Straße@` and `STRASSE@`, or `bücher.example` and its `xn--` form, were
    /// two users.)
    @Test(arguments: Backend.allCases)
    func addressesThatReachOneMailboxAreOneUser(backend: Backend) async throws {
        try await DataKeyTests.withTwoInstances(backend) { instances in
            let signer = try await Self.device(at: instances.one, identity: .generateX25519())
            let tag = UUID().uuidString.prefix(8).lowercased()
            let created = try await Self.signUp(instances.one, json: #"{"email": "Stra\u00dfe-\#(tag)@b\u00fccher.example", "name": "Ada"}"#, signer: signer)
            #expect(created.status == 201, "\(created.text)")
            for spelling in ["STRASSE-\(tag)@xn--bcher-kva.example", "strasse-\(tag)@B\u{DC}CHER.example.", "Strasse-\(tag)@\u{FF42}\u{FC}cher.example"] {
                let again = try await Self.signUp(instances.two, json: #"{"email": "\#(spelling)", "name": "Ada"}"#, signer: signer)
                #expect(again.status == 409 && again.problem?.reason == "email-exists", "\(spelling): \(again.text)")
            }
            let found = try await AllowList.admin(.get, instances.two, "/admin/users?email=STRASSE-\(tag)@XN--BCHER-KVA.EXAMPLE", as: instances.admin)
            #expect((found.json["users"] as? [[String: Any]])?.count == 1, "\(found.text)")
        }
    }

    /// Migration 8 makes every stored user's comparison key again, oldest first: two users an earlier
    /// release stored as two addresses that now compare equal both stay, the older keeping the key; a
    /// new sign-up of the address is refused, and each key's sign-up count starts at its users.
    @Test func migrationEightFoldsTheAddressesStoredBefore() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("server.sqlite")
        let store = try await DatabaseLocation.sqlite(path: path).openForTest()
        _ = try await store.registerKey(RegisteredKey(keyID: "k_m8", algorithm: .ed25519, publicKey: "AAAA", secret: nil, createdAt: 1), spending: nil)
        try await store.close()
        // The database as the previous release left it: schema 7, no sign-up count, keys lowercased.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO coffer_users (email, email_key, name, key_id, created_at)
                VALUES ('Straße@example.com', 'straße@example.com', 'A', 'k_m8', 1), ('STRASSE@example.com', 'strasse@example.com', 'B', 'k_m8', 2)
                """)
            try db.execute(sql: "DELETE FROM coffer_schema WHERE version >= 8")
            try db.execute(sql: "ALTER TABLE coffer_keys DROP COLUMN sign_ups")
            try db.execute(sql: "ALTER TABLE coffer_keys DROP COLUMN record_tag")
            try db.execute(sql: "ALTER TABLE coffer_users DROP COLUMN record_tag")
            try db.execute(sql: "ALTER TABLE coffer_keys DROP COLUMN user_binding")
        }
        try queue.close()
        let migrated = try await DatabaseLocation.sqlite(path: path).openForTest()
        #expect(try await migrated.users(email: nil, limit: 10).map(\.name) == ["A", "B"], "no user is lost")
        #expect(try await migrated.users(email: "strasse@EXAMPLE.com", limit: 10).map(\.name) == ["A"])
        #expect(try await migrated.insertUser(email: "strasse@example.com", name: "C", keyID: "k_m8", createdAt: 3) == nil)
        let counted = try await migrated.insertUser(email: "new@example.com", name: "D", keyID: "k_m8", createdAt: 4, recordingFirstUse: nil, signUpsPerKey: 3)
        #expect(counted != .limited, "two users counted, and the refused sign-up above went around the count")
        #expect(try await migrated.insertUser(email: "new2@example.com", name: "E", keyID: "k_m8", createdAt: 5, recordingFirstUse: nil, signUpsPerKey: 3) == .limited)
        try await migrated.close()
    }

    /// Names and addresses with a control character (NUL included: PostgreSQL refused it with an error
    /// the server answered 503), a format character (bidi overrides, zero-width) or a line separator are
    /// `400 invalid-request`, on both stores, and nothing is stored.
    @Test(arguments: Backend.allCases)
    func controlAndFormatCharactersAreRefused(backend: Backend) async throws {
        try await DataKeyTests.withTwoInstances(backend) { instances in
            let signer = try await Self.device(at: instances.one, identity: .generateX25519())
            let hostile = [#"\u0000"#, #"\n"#, #"\t"#, #"\u202e"#, #"\u2066"#, #"\u200b"#, #"\u2028"#, #"\u007f"#, #"\u0085"#, #"\u3164"#, #"\ufffe"#, #"\ue000"#]
            for character in hostile {
                let tag = UUID().uuidString.prefix(8).lowercased()
                let badName = try await Self.signUp(instances.one, json: #"{"email": "n\#(tag)@example.com", "name": "Ad\#(character)a"}"#, signer: signer)
                #expect(badName.status == 400 && badName.problem?.reason == "invalid-request", "name with \(character): \(badName.text)")
                let badEmail = try await Self.signUp(instances.two, json: #"{"email": "e\#(tag)\#(character)@example.com", "name": "Ada"}"#, signer: signer)
                #expect(badEmail.status == 400 && badEmail.problem?.reason == "invalid-request", "email with \(character): \(badEmail.text)")
                let stored = try await AllowList.admin(.get, instances.one, "/admin/users?email=n\(tag)@example.com", as: instances.admin)
                #expect(stored.status == 200 && (stored.json["users"] as? [Any])?.isEmpty == true, "\(stored.text)")
            }
        }
    }

    /// `POST /register_user` answers `409 sign-up-limit` once the signing key signed up its limit of users
    /// (300 users of one key made the admin listing 19 MB; nothing bounded them).
    @Test func aKeyPastItsSignUpLimitIsToldSo() async throws {
        var options = AllowListTests.options(admin: try SigningKey.generate(.ed25519), registration: .open)
        options.signUpsPerKey = 2
        try await Server.withServer(store: Server.memoryStore(), options: options) { base in
            let key = try SigningKey.generate(.ed25519)
            #expect(try await RegistrationProofTests.register(key, at: base).status == 201)
            let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: RegistrationProofTests.registeredKeyID(key))
            var answers: [String] = []
            for index in 0..<3 {
                let reply = try await Server.send(Server.signedUserRequest(base, signer: signer, email: "s\(index)@example.com"))
                answers.append("\(reply.status) \(reply.problem?.reason ?? "")")
            }
            #expect(answers == ["201 ", "201 ", "409 sign-up-limit"])
        }
    }
}
