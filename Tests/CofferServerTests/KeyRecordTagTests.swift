import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
@testable import CofferServer
import CofferServerWire
import CofferTestSupport
import CofferTesting
import Foundation
import GRDB
import Logging
import Testing

/// Authenticated key records (docs/SERVER.md, "Authenticated key records"): what someone who can write
/// the database, and does not hold the master keys, can no longer do. Each test changes rows as such a
/// writer would (GRDB on the SQLite file, `psql` on PostgreSQL) and asks the server for what the change
/// was meant to get.
@Suite(.serialized)
struct KeyRecordTagTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    typealias Server = RegistrationServerTests
    typealias AllowList = AllowListTests

    /// A database, and a way to run SQL on it from outside the server. PostgreSQL runs only when
    /// `COFFER_TEST_POSTGRES_URL` is set.
    static func withDatabase(
        _ backend: Backend, _ body: @escaping @Sendable (DatabaseLocation, @escaping @Sendable (String) async throws -> Void) async throws -> Void
    ) async throws {
        switch backend {
        case .sqlite:
            let folder = try TemporaryDirectory()
            let path = folder.path("server.sqlite")
            try await body(.sqlite(path: path)) { statement in
                let queue = try DatabaseQueue(path: path)
                try await queue.write { db in try db.execute(sql: statement) }
                try queue.close()
            }
        case .postgres:
            _ = try await ScratchPostgres.withDatabase { url in
                try await body(try DatabaseLocation(url)) { statement in try await ScratchPostgres.execute(statement, on: url) }
            }
        }
    }

    /// A server that reads key records from the store on every request (no cache to wait out).
    static func options(admin: SigningKey, keyring: ServerMasterKeyring?) -> RegistrationServer.Options {
        var options = AllowList.options(admin: admin, registration: .open)
        options.masterKeys = keyring
        options.keyRecordMaximumAge = .zero
        return options
    }

    static func keyring() throws -> ServerMasterKeyring {
        try ServerMasterKeyring([try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32))])
    }

    /// A victim device that has fetched its data key, and an attacker's device, both registered at `base`.
    struct Parties {
        let victim: HTTPMessageSigner
        let victimIdentity: RecipientPrivateKey
        let attackerKey: SigningKey
        let attackerIdentity: RecipientPrivateKey
        let attackerID: String
    }

    static func parties(at base: String) async throws -> Parties {
        let victimIdentity = RecipientPrivateKey.generateX25519()
        let victim = try await DataKeyTests.device(at: base, identity: victimIdentity)
        _ = try await DataKeyClient(server: base, signer: victim, identity: victimIdentity).fetch()
        let attackerKey = try SigningKey.generate(.ed25519)
        let attackerIdentity = RecipientPrivateKey.generateX25519()
        let registered = try await RegistrationProofTests.register(attackerKey, at: base, encryption: attackerIdentity.publicKey)
        return Parties(
            victim: victim, victimIdentity: victimIdentity, attackerKey: attackerKey, attackerIdentity: attackerIdentity,
            attackerID: try #require(registered.registration?.keyId)
        )
    }

    /// The reproduction: the victim's row given the attacker's public key and encryption key (one
    /// `UPDATE`), and a fetch signed by the attacker under the victim's key id. Before, it returned the
    /// victim's data key sealed to the attacker. Now the record no longer matches its tag (and its key
    /// id no longer names its public key): `503`, nothing handed out.
    @Test(arguments: Backend.allCases)
    func aRowSwappedToAnotherKeyHandsOutNoDataKey(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: try Self.keyring())) { base in
                let parties = try await Self.parties(at: base)
                let (victim, attackerID) = (parties.victim, parties.attackerID)
                try await tamper("""
                    UPDATE coffer_keys SET public_key = (SELECT public_key FROM coffer_keys WHERE key_id = '\(attackerID)'),
                        encryption_key = (SELECT encryption_key FROM coffer_keys WHERE key_id = '\(attackerID)')
                    WHERE key_id = '\(victim.keyID)'
                    """)
                let forged = HTTPMessageSigner(key: try HTTPSigningKey(parties.attackerKey), keyID: victim.keyID)
                let client = try DataKeyClient(server: base, signer: forged, identity: parties.attackerIdentity)
                let refused = await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() }
                #expect(refused == "unavailable", "the swapped row must hand out nothing")
            }
            try await store.close()
        }
    }

    /// Without master keys there is no tag, but a `k_` key id is the fingerprint of its public key: a
    /// row given another public key under the victim's id verifies nothing.
    @Test(arguments: Backend.allCases)
    func withoutAKeyringAnIdStillNamesItsPublicKey(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: nil)) { base in
                let victim = try SigningKey.generate(.ed25519)
                let victimID = try #require(try await RegistrationProofTests.register(victim, at: base).registration?.keyId)
                let attacker = try SigningKey.generate(.ed25519)
                try await tamper("UPDATE coffer_keys SET public_key = '\(Base64.encode(attacker.verifyingKey.derRepresentation))' WHERE key_id = '\(victimID)'")
                let reply = try await AllowList.userRequest(base, key: attacker, keyID: victimID)
                #expect(reply.status == 503, "\(reply.status) \(reply.text)")
            }
            try await store.close()
        }
    }

    /// A wrapped HMAC secret replaced by a secret in clear the attacker knows: it used to verify (even
    /// after a rewrap that reported none in clear left). Now refused, and rewrap leaves it refused.
    @Test(arguments: Backend.allCases)
    func aSecretPutInClearDoesNotVerify(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let keyring = try Self.keyring()
            try await Server.withServer(store: store, options: Self.options(admin: try SigningKey.generate(.ed25519), keyring: keyring)) { base in
                let reply = try await Server.post(base, "/register", json: #"{"algorithm": "hmac-sha256"}"#)
                let keyID = try #require(reply.registration?.keyId)
                let chosen = try SecureRandom.bytes(count: 32)
                try await tamper("UPDATE coffer_keys SET secret = '\(Base64.encode(chosen))' WHERE key_id = '\(keyID)'")
                let signer = HTTPMessageSigner(key: .hmacSHA256(secret: try MACKey(bytes: chosen)), keyID: keyID)
                let email = "c\(UUID().uuidString.prefix(12))@example.com"
                #expect(try await Server.send(Server.signedUserRequest(base, signer: signer, email: email)).status == 503)

                let summary = try await MasterKeyRewrap(store: store, keyring: keyring).run()
                #expect(summary.unopenable == ["(tag does not match)": 1] && summary.secretsFromClear == 0, "\(summary)")
                let again = try await Server.send(Server.signedUserRequest(base, signer: signer, email: "d" + email))
                #expect(again.status == 503, "the rewrap blessed nothing: \(again.text)")
            }
            try await store.close()
        }
    }

    /// An admin's change of a record changed outside Coffer is refused, and the record keeps its old
    /// tag: a change never tags what it did not check.
    @Test(arguments: Backend.allCases)
    func aChangeOfATamperedRecordIsRefused(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: try Self.keyring())) { base in
                let parties = try await Self.parties(at: base)
                let (device, attackerID) = (parties.victim, parties.attackerID)
                try await tamper("""
                    UPDATE coffer_keys SET encryption_key = (SELECT encryption_key FROM coffer_keys WHERE key_id = '\(attackerID)') WHERE key_id = '\(device.keyID)'
                    """)
                let before = try #require(try await store.key(id: device.keyID))
                let disabled = try await AllowList.admin(.post, base, "/admin/keys/\(device.keyID)/disable", as: admin)
                #expect(disabled.status == 503, "\(disabled.status) \(disabled.text)")
                let after = try #require(try await store.key(id: device.keyID))
                #expect(after.tag == before.tag && after.state == .active)
            }
            try await store.close()
        }
    }

    /// A row inserted without a tag (a registration the server never made) is refused; rewrap leaves it
    /// so unless told that an earlier release wrote it.
    @Test(arguments: Backend.allCases)
    func aRowWithoutATagIsRefusedUntilTaggedOnPurpose(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let keyring = try Self.keyring()
            try await Server.withServer(store: store, options: Self.options(admin: try SigningKey.generate(.ed25519), keyring: keyring)) { base in
                // A first registration records the keyring.
                _ = try await RegistrationProofTests.register(try SigningKey.generate(.ed25519), at: base)
                let forged = try SigningKey.generate(.ed25519)
                let forgedID = RegistrationProofTests.registeredKeyID(forged)
                try await tamper("""
                    INSERT INTO coffer_keys (key_id, algorithm, public_key, created_at) VALUES ('\(forgedID)', 'ed25519', '\(Base64.encode(forged.verifyingKey.derRepresentation))', 1)
                    """)
                #expect(try await AllowList.userRequest(base, key: forged, keyID: forgedID).status == 503)

                let left = try await MasterKeyRewrap(store: store, keyring: keyring).run()
                #expect(left.untagged == 1 && left.records == 0, "\(left)")
                #expect(try await AllowList.userRequest(base, key: forged, keyID: forgedID).status == 503)
                let tagged = try await MasterKeyRewrap(store: store, keyring: keyring).run(taggingUntagged: true)
                #expect(tagged.records == 1 && tagged.recordsFromUntagged == 1, "\(tagged)")
                #expect(try await AllowList.userRequest(base, key: forged, keyID: forgedID).status == 201)
            }
            try await store.close()
        }
    }

    /// A database as the previous release left it (no tags, a keyring recorded), or one a writer rolled
    /// back to look so (the migration that adds tags undone): an instance holding the keys applies the
    /// migration and tags nothing, every record is refused, and only the operator's rewrap with
    /// `taggingUntagged`, which names each record it takes as it is, brings them back.
    @Test(arguments: Backend.allCases)
    func anUpgradeTagsNothingUntilTheOperatorSaysSo(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let keyring = try Self.keyring()
            let admin = try SigningKey.generate(.ed25519)
            let identity = RecipientPrivateKey.generateX25519()
            let store = try await location.openForTest()
            let device: HTTPMessageSigner = try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: keyring)) { base in
                let device = try await DataKeyTests.device(at: base, identity: identity)
                _ = try await UserIdentityTests.signUp(base, json: #"{"email": "ada@example.com", "name": "Ada"}"#, signer: device)
                return device
            }
            let first: DataKeyClient.DataKey = try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: keyring)) { base in
                try await DataKeyClient(server: base, signer: device, identity: identity).fetch()
            }
            try await store.close()
            for statement in [
                "UPDATE coffer_keys SET record_tag = NULL", "DELETE FROM coffer_schema WHERE version = \(RegistrationSQL.keyRecordTagMigration)",
                "ALTER TABLE coffer_keys DROP COLUMN record_tag", "ALTER TABLE coffer_users DROP COLUMN record_tag",
                "ALTER TABLE coffer_keys DROP COLUMN user_binding",
            ] {
                try await tamper(statement)
            }

            let upgraded = try await location.openForTest()
            #expect(try await upgraded.schemaVersion() == RegistrationSQL.keyRecordTagMigration)
            try await Server.withServer(store: upgraded, options: Self.options(admin: admin, keyring: keyring)) { base in
                let client = try DataKeyClient(server: base, signer: device, identity: identity)
                #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() } == "unavailable")
                #expect(try await AllowList.admin(.get, base, "/admin/users?email=ada@example.com", as: admin).status == 503)
                let tagged = try await MasterKeyRewrap(store: upgraded, keyring: keyring).run(taggingUntagged: true)
                #expect(tagged.untaggedRecordIDs == ["user 1 (ada@example.com, signed up by \(device.keyID))", device.keyID], "\(tagged)")
                #expect(try await AllowList.admin(.get, base, "/admin/users?email=ada@example.com", as: admin).status == 200)
                let fetched = try await client.fetch()
                #expect(fetched.dataKeyID == first.dataKeyID && DataKeyTests.bytes(fetched.key) == DataKeyTests.bytes(first.key))
            }
            try await upgraded.close()
        }
    }

    /// A database made to look as though it never had a keyring (the keyring's rows deleted, every tag
    /// cleared, the data keys moved aside), then a request that makes the running instance record a
    /// keyring again (`GET /ready`): nothing is tagged, and the writer's changes stay refused once the
    /// data keys are back.
    @Test(arguments: Backend.allCases)
    func aDatabaseMadeToLookNewBlessesNothing(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: try Self.keyring())) { base in
                let parties = try await Self.parties(at: base)
                let (victim, victimIdentity, attackerID) = (parties.victim, parties.victimIdentity, parties.attackerID)
                for statement in [
                    "UPDATE coffer_keys SET encryption_key = (SELECT encryption_key FROM coffer_keys WHERE key_id = '\(attackerID)') WHERE key_id = '\(victim.keyID)'",
                    "CREATE TABLE stash AS SELECT * FROM coffer_data_keys", "DELETE FROM coffer_data_keys", "DELETE FROM coffer_master_keyring",
                    "UPDATE coffer_keys SET record_tag = NULL",
                ] {
                    try await tamper(statement)
                }
                _ = try await Server.send(HTTPClientRequest(url: base + "/ready"))
                #expect(try await store.masterKeyring().isEmpty, "a probe records nothing")
                for statement in ["INSERT INTO coffer_data_keys SELECT * FROM stash", "DROP TABLE stash"] { try await tamper(statement) }
                #expect(try await store.key(id: victim.keyID)?.tag == nil, "nothing was tagged")
                let client = try DataKeyClient(server: base, signer: victim, identity: victimIdentity)
                #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() } == "unavailable")
            }
            try await store.close()
        }
    }

    /// A value of another type in any column of a key record (one the tag does not cover included), or
    /// an algorithm this release does not know: the request naming the key is answered `503`, and the
    /// server goes on answering (it crashed on GRDB's fatal error, printing the row, secret included).
    @Test(arguments: Backend.allCases)
    func aRecordOfAnotherShapeIsRefusedWithoutACrash(backend: Backend) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            try await Server.withServer(store: store, options: Self.options(admin: try SigningKey.generate(.ed25519), keyring: nil)) { base in
                let changes = backend == .sqlite
                    ? ["last_used_at = 'x'", "user_id = 'u'", "created_at = 'then'", "created_at = created_at + 0.5", "algorithm = 'Ed25519'", "public_key = x'00'"]
                    : ["algorithm = 'Ed25519'", "algorithm = ''"]
                for change in changes {
                    let key = try SigningKey.generate(.ed25519)
                    let keyID = try #require(try await RegistrationProofTests.register(key, at: base).registration?.keyId)
                    try await tamper("UPDATE coffer_keys SET \(change) WHERE key_id = '\(keyID)'")
                    let reply = try await AllowList.userRequest(base, key: key, keyID: keyID)
                    #expect(reply.status == 503, "\(change): \(reply.status) \(reply.text)")
                }
                let healthy = try SigningKey.generate(.ed25519)
                let healthyID = try #require(try await RegistrationProofTests.register(healthy, at: base).registration?.keyId)
                #expect(try await AllowList.userRequest(base, key: healthy, keyID: healthyID).status == 201, "still serving")
            }
            try await store.close()
        }
    }

    /// Found from outside: users carried no tag, so a writer who swapped two users' addresses steered
    /// the user an admin's look-up by address found, and the link the admin then made (with per-user
    /// data keys, the attacker's device got the victim user's key). Now the look-up and the link check
    /// each user's record; without master keys, the address the record holds must be the one asked for.
    @Test(arguments: Backend.allCases, [true, false])
    func swappedAddressesSteerNoLink(backend: Backend, keyed: Bool) async throws {
        try await Self.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: keyed ? try Self.keyring() : nil)) { base in
                let victim = try await DataKeyTests.device(at: base, identity: RecipientPrivateKey.generateX25519())
                let attacker = try await DataKeyTests.device(at: base, identity: RecipientPrivateKey.generateX25519())
                let victimUser = try #require(try await UserIdentityTests.signUp(base, json: #"{"email": "victim@example.com", "name": "V"}"#, signer: victim).json["id"] as? Int)
                let attackerUser = try #require(try await UserIdentityTests.signUp(base, json: #"{"email": "mallory@example.com", "name": "M"}"#, signer: attacker).json["id"] as? Int)
                if keyed {
                    let found = try await AllowList.admin(.get, base, "/admin/users?email=mallory@example.com", as: admin)
                    let ids = try found.decoded(AdminUserList.self).users.map(\.id)
                    #expect(found.status == 200 && ids == [Int64(attackerUser)], "\(found.text)")
                }
                let swap = keyed
                    ? [
                        "UPDATE coffer_users SET email = 'x', email_key = 'x' WHERE id = \(attackerUser)",
                        "UPDATE coffer_users SET email = 'mallory@example.com', email_key = 'mallory@example.com' WHERE id = \(victimUser)",
                        "UPDATE coffer_users SET email = 'victim@example.com', email_key = 'victim@example.com' WHERE id = \(attackerUser)",
                    ]
                    : [
                        "UPDATE coffer_users SET email_key = 'x' WHERE id = \(attackerUser)",
                        "UPDATE coffer_users SET email_key = 'mallory@example.com' WHERE id = \(victimUser)",
                    ]
                for statement in swap { try await tamper(statement) }
                let lookedUp = try await AllowList.admin(.get, base, "/admin/users?email=mallory@example.com", as: admin)
                #expect(lookedUp.status == 503, "the look-up finds no one it cannot vouch for: \(lookedUp.status) \(lookedUp.text)")
                if keyed {
                    let linked = try await AllowList.admin(.post, base, "/admin/keys/\(attacker.keyID)/user", json: #"{"userId": \#(victimUser), "email": "mallory@example.com"}"#, as: admin)
                    #expect(linked.status == 503, "\(linked.status) \(linked.text)")
                    #expect(try await store.key(id: attacker.keyID)?.userID == nil, "not linked")
                }
            }
            try await store.close()
        }
    }

    /// The tag of docs/SERVER.md's example, computed independently (Python's hmac and hashlib).
    @Test func theTagIsTheDocumentedOne() throws {
        let key = try ServerMasterKey(bytes: Array(0..<32))
        let record = RegisteredKey(
            keyID: "k_00112233445566778899aabbccddeeff", algorithm: .ed25519, publicKey: "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=",
            secret: nil, createdAt: 1_764_000_000, userID: 7
        )
        #expect(KeyRecordTag.make(record, under: key) == "tag-v1:76b15d6a51385bbd:EtHpGfu7qL7XNdlHOs4bCmigdetppEOZv99NnzZTYSc=")
        let keyring = try ServerMasterKeyring([key])
        let tagged = KeyRecordTagging(keyring: keyring, key: key).tagged(record)
        try KeyRecordTag.check(tagged, keyring: keyring)
        let changes: [RegisteredKey] = [
            tagged.replacing(state: .disabled), tagged.replacing(encryptionKey: "x"), tagged.replacing(userID: 8), tagged.replacing(secret: "wrapped-v1:x"), record,
        ]
        for changed in changes {
            do {
                try KeyRecordTag.check(changed, keyring: keyring)
                Issue.record("a changed record passed: \(changed)")
            } catch {
                #expect(error.code == .unauthenticRecord)
            }
        }
    }
}
