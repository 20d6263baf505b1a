import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
@testable import CofferServer
import CofferServerWire
import CofferTesting
import Foundation
import Testing

/// Per-user data keys bound to their user's record (docs/SERVER.md, "Data keys" and "Authenticated key
/// records"): a user number the database gives again never opens the key of the user who had it.
@Suite(.serialized)
struct UserDataKeyBindingTests {
    typealias Server = RegistrationServerTests
    typealias AllowList = AllowListTests
    typealias Tags = KeyRecordTagTests

    static func options(admin: SigningKey, keyring: ServerMasterKeyring) -> RegistrationServer.Options {
        var options = Tags.options(admin: admin, keyring: keyring)
        options.dataKeyScope = .user
        return options
    }

    /// A device that signed up as `email` and that the admin linked to the user it made: its number.
    static func member(_ device: HTTPMessageSigner, email: String, at base: String, admin: SigningKey) async throws -> Int {
        let signedUp = try await UserIdentityTests.signUp(base, json: #"{"email": "\#(email)", "name": "N"}"#, signer: device)
        let user = try #require(signedUp.json["id"] as? Int, "\(signedUp.text)")
        let linked = try await AllowList.admin(.post, base, "/admin/keys/\(device.keyID)/user", json: #"{"userId": \#(user), "email": "\#(email)"}"#, as: admin)
        #expect(linked.status == 200, "\(linked.text)")
        return user
    }

    /// A server with per-user data keys on `backend`, and a device that signed up as `email`, was linked
    /// to its user by the admin and may have fetched its key: what each test starts from.
    struct Scene: Sendable {
        let store: any RegistrationStore
        let tamper: @Sendable (String) async throws -> Void
        let base: String
        let admin: SigningKey
        let keyring: ServerMasterKeyring
        let device: HTTPMessageSigner
        let identity: RecipientPrivateKey
        let number: Int

        /// The device's data-key client.
        func client() throws -> DataKeyClient { try DataKeyClient(server: base, signer: device, identity: identity) }
    }

    static func withMember(_ backend: Tags.Backend, email: String, _ body: @escaping @Sendable (Scene) async throws -> Void) async throws {
        try await Tags.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            let keyring = try Tags.keyring()
            try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: keyring)) { base in
                let identity = RecipientPrivateKey.generateX25519()
                let device = try await DataKeyTests.device(at: base, identity: identity)
                let number = try await Self.member(device, email: email, at: base, admin: admin)
                try await body(Scene(
                    store: store, tamper: tamper, base: base, admin: admin, keyring: keyring, device: device, identity: identity, number: number
                ))
            }
            try await store.close()
        }
    }

    /// What the database writer does: deletes the scene's user and winds the number sequence back, so
    /// that the next sign-up takes its number; and the attacker's device, registered.
    static func deleteTheUserAndRewind(_ scene: Scene, _ backend: Tags.Backend) async throws -> (HTTPMessageSigner, RecipientPrivateKey) {
        try await scene.tamper("DELETE FROM coffer_users WHERE id = \(scene.number)")
        try await scene.tamper(backend == .sqlite
            ? "UPDATE sqlite_sequence SET seq = \(scene.number - 1) WHERE name = 'coffer_users'"
            : "SELECT setval(pg_get_serial_sequence('coffer_users', 'id'), \(scene.number), false)")
        let identity = RecipientPrivateKey.generateX25519()
        return (try await DataKeyTests.device(at: scene.base, identity: identity), identity)
    }

    /// The reproduction, found from outside: a database writer deletes a user and winds the number
    /// sequence back; the attacker signs up and gets the victim's number (a record the server tagged
    /// itself), and the admin links the attacker's device to it, as the backend asks after verifying the
    /// attacker's own address. Before, the attacker's fetch returned the victim user's data key. Now
    /// the key's versions are bound to the victim's record: `503`, nothing handed out.
    @Test(arguments: Tags.Backend.allCases)
    func aUserNumberGivenAgainOpensNoOldKey(backend: Tags.Backend) async throws {
        try await Self.withMember(backend, email: "victim@example.com") { scene in
            let (base, admin, number) = (scene.base, scene.admin, scene.number)
            let victimKey = try await scene.client().fetch()

            let (attacker, attackerIdentity) = try await Self.deleteTheUserAndRewind(scene, backend)
            #expect(try await Self.member(attacker, email: "mallory@example.com", at: base, admin: admin) == number, "the number was given again")

            let client = try DataKeyClient(server: base, signer: attacker, identity: attackerIdentity)
            let refused = await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() }
            #expect(refused == "unavailable", "the victim's key must not open for the new user \(number)")
            let asked = await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch(version: victimKey.version) }
            #expect(asked == "unavailable", "nor any version of it")

            // The new user's own version, made by a rotation, is the new user's alone: the victim's
            // devices, linked to the number's earlier record, get nothing (a key the attacker knows
            // would have them encrypt to the attacker).
            let own = try await client.rotate()
            #expect(DataKeyTests.bytes(own.key) != DataKeyTests.bytes(victimKey.key))
            let victimClient = try scene.client()
            #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await victimClient.fetch() } == "unavailable")
            // What the victim's devices were given stays theirs alone: their link names the record the
            // versions were made for.
            #expect(DataKeyTests.bytes(try await victimClient.fetch(version: victimKey.version).key) == DataKeyTests.bytes(victimKey.key))
        }
    }

    /// Found from outside: the link named a number only, and bound the device to whichever record held
    /// it at the link, so a writer who showed the admin's look-up one record and the link another (two
    /// rows of one number once the key is dropped, or rows swapped between the two requests) had the
    /// attacker's device bound to the victim. Now the link names the address it was decided on, and
    /// lands only on the one record of that number holding it: `404` or `503`, nothing linked.
    @Test(arguments: Tags.Backend.allCases)
    func aLinkLandsOnlyOnTheRecordItWasDecidedOn(backend: Tags.Backend) async throws {
        try await Self.withMember(backend, email: "victim@example.com") { scene in
            let (store, tamper, base, admin, number) = (scene.store, scene.tamper, scene.base, scene.admin, scene.number)
            _ = try await scene.client().fetch()

            try await tamper("CREATE TABLE saved AS SELECT * FROM coffer_users")
            let (attacker, attackerIdentity) = try await Self.deleteTheUserAndRewind(scene, backend)
            let signedUp = try await UserIdentityTests.signUp(base, json: #"{"email": "mallory@example.com", "name": "M"}"#, signer: attacker)
            #expect(signedUp.json["id"] as? Int == number)
            // Two rows of one number: the victim's put back beside the attacker's, the key dropped.
            let statements = backend == .sqlite
                ? [
                    "ALTER TABLE coffer_users RENAME TO coffer_users_new", "CREATE TABLE coffer_users AS SELECT * FROM saved WHERE 0",
                    "INSERT INTO coffer_users SELECT * FROM saved", "INSERT INTO coffer_users SELECT * FROM coffer_users_new",
                ]
                : ["ALTER TABLE coffer_users DROP CONSTRAINT coffer_users_pkey CASCADE", "INSERT INTO coffer_users SELECT * FROM saved"]
            for statement in statements { try await tamper(statement) }

            let linked = try await AllowList.admin(
                .post, base, "/admin/keys/\(attacker.keyID)/user", json: #"{"userId": \#(number), "email": "mallory@example.com"}"#, as: admin
            )
            #expect([404, 503].contains(linked.status), "\(linked.status) \(linked.text)")
            #expect(try await store.key(id: attacker.keyID)?.userID == nil, "nothing linked")
            let client = try DataKeyClient(server: base, signer: attacker, identity: attackerIdentity)
            #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() } == "no-user")
        }
    }

    /// The link's transaction lands only on the record the route decided on, and on one row alone.
    @Test func theLinksTransactionChecksTheRecordItLandsOn() throws {
        let keyring = try Tags.keyring()
        let tagging = KeyRecordTagging(keyring: keyring, key: keyring.keys[0])
        let ada = tagging.tagged(RegisteredUser(id: 1, email: "ada@example.com", name: "Ada", keyID: "k_a", createdAt: 1))
        let mallory = tagging.tagged(RegisteredUser(id: 1, email: "mallory@example.com", name: "M", keyID: "k_m", createdAt: 2))
        #expect(try tagging.expecting(userBinding: KeyRecordTag.binding(of: ada)).binding(ofUser: 1, rows: [ada]) == KeyRecordTag.binding(of: ada))
        #expect(throws: ServerConfigurationError.unauthenticRecord) {
            try tagging.expecting(userBinding: KeyRecordTag.binding(of: mallory)).binding(ofUser: 1, rows: [ada])
        }
        #expect(throws: ServerConfigurationError.unauthenticRecord) { try tagging.binding(ofUser: 1, rows: [ada, mallory]) }
        #expect(try tagging.binding(ofUser: 1, rows: []) == nil)
    }

    /// What an earlier release left (a link and a version of the user's key that name no user record,
    /// no tags) is refused until the operator's rewrap binds it (`taggingUntagged`, which names each, a
    /// dry run included), and then hands out the same bytes; a plain rewrap leaves it so, and a second
    /// binding run finds nothing to do.
    @Test(arguments: Tags.Backend.allCases)
    func whatAnEarlierReleaseLinkedWaitsForTheOperator(backend: Tags.Backend) async throws {
        try await Self.withMember(backend, email: "ada@example.com") { scene in
            let (store, tamper, keyring, device, number) = (scene.store, scene.tamper, scene.keyring, scene.device, scene.number)
            let owner = "user:\(number)", dataKeyID = DataKeyRoutes.dataKeyID(owner: "user:\(number)")
            let legacy = try SecureRandom.bytes(count: 32)
            let masterKey = keyring.keys[0]
            let unbound = DataKeyRoutes.wrapContext(owner: owner, version: 1, dataKeyID: dataKeyID, binding: nil)
            let row = StoredDataKey(owner: owner, version: 1, dataKeyID: dataKeyID, wrapped: try masterKey.wrap(legacy, context: unbound), masterKeyID: masterKey.keyID, createdAt: 1)
            #expect(try await store.insertDataKey(row) != nil)
            for statement in ["UPDATE coffer_keys SET user_binding = NULL, record_tag = NULL", "UPDATE coffer_users SET record_tag = NULL"] {
                try await tamper(statement)
            }

            let client = try scene.client()
            #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() } == "unavailable")
            let plain = try await MasterKeyRewrap(store: store, keyring: keyring).run()
            #expect(plain.unboundDataKeys == 0 && plain.boundDataKeys.isEmpty && plain.dataKeys == 0 && plain.untagged == 2, "\(plain)")
            let user = "user \(number) (ada@example.com, signed up by \(device.keyID))"
            let named = "data key \(dataKeyID) version 1 of \(user)"
            let dry = try await MasterKeyRewrap(store: store, keyring: keyring).run(dryRun: true, taggingUntagged: true)
            #expect(dry.boundDataKeys == [named] && dry.dataKeys == 1, "\(dry)")
            #expect(dry.untaggedRecordIDs == [user, "\(device.keyID) linked to \(user)"], "\(dry)")
            #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() } == "unavailable")

            let bound = try await MasterKeyRewrap(store: store, keyring: keyring).run(taggingUntagged: true)
            #expect(bound.boundDataKeys == [named] && bound.dataKeys == 1 && bound.unopenable.isEmpty, "\(bound)")
            #expect(bound.untaggedRecordIDs == [user, "\(device.keyID) linked to \(user)"], "\(bound)")
            #expect(DataKeyTests.bytes(try await client.fetch().key) == legacy)
            let again = try await MasterKeyRewrap(store: store, keyring: keyring).run(taggingUntagged: true)
            #expect(again.boundDataKeys.isEmpty && again.dataKeys == 0 && again.unboundDataKeys == 0 && again.records == 0, "\(again)")
        }
    }

    /// A link whose binding a database writer removed, or set to another record's, is refused: the
    /// binding is covered by the key record's tag.
    @Test(arguments: Tags.Backend.allCases)
    func aLinksBindingIsCoveredByTheTag(backend: Tags.Backend) async throws {
        try await Self.withMember(backend, email: "ada@example.com") { scene in
            let (tamper, device) = (scene.tamper, scene.device)
            let client = try scene.client()
            _ = try await client.fetch()
            try await tamper("UPDATE coffer_keys SET user_binding = NULL WHERE key_id = '\(device.keyID)'")
            #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() } == "unavailable")
        }
    }

    /// A rotation of the master key moves a user's versions with their binding: after rewrap and
    /// retirement, an instance holding only the new key hands out the same key.
    @Test(arguments: Tags.Backend.allCases)
    func aMasterKeyRotationKeepsTheBinding(backend: Tags.Backend) async throws {
        try await Tags.withDatabase(backend) { location, _ in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            let (old, new) = (try MasterKeyringTests.key(), try MasterKeyringTests.key())
            let identity = RecipientPrivateKey.generateX25519()
            let (device, first) = try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: try ServerMasterKeyring([old]))) { base in
                let device = try await DataKeyTests.device(at: base, identity: identity)
                _ = try await Self.member(device, email: "ada@example.com", at: base, admin: admin)
                return (device, try await DataKeyClient(server: base, signer: device, identity: identity).fetch())
            }
            let both = try ServerMasterKeyring([old, new])
            _ = try await both.promote(new.keyID, in: store)
            let moved = try await MasterKeyRewrap(store: store, keyring: both).run()
            #expect(moved.dataKeys == 1 && moved.unopenable.isEmpty, "\(moved)")
            #expect(try await ServerMasterKeyring.retire(old.keyID, in: store) == .retired)
            try await Server.withServer(store: store, options: Self.options(admin: admin, keyring: try ServerMasterKeyring([new]))) { base in
                let fetched = try await DataKeyClient(server: base, signer: device, identity: identity).fetch()
                #expect(DataKeyTests.bytes(fetched.key) == DataKeyTests.bytes(first.key))
            }
            try await store.close()
        }
    }

    /// docs/SERVER.md's example of a user's binding and wrapping context, computed independently
    /// (Python's hashlib).
    @Test func theBindingIsTheDocumentedOne() throws {
        let user = RegisteredUser(id: 7, email: "ada@example.com", name: "Ada", keyID: "k_00112233445566778899aabbccddeeff", createdAt: 1_764_000_000)
        let binding = KeyRecordTag.binding(of: user)
        #expect(binding == "c9e3a7b597b01566c5c7e4388251be9fdf8b8e4869142d377309af5949bfa611")
        let context = DataKeyRoutes.wrapContext(owner: "user:7", version: 1, dataKeyID: DataKeyRoutes.dataKeyID(owner: "user:7"), binding: binding)
        #expect(String(decoding: context, as: UTF8.self) == "coffer-data-key-wrap v2:user:7:1:dk_20bdc7ae7082d21e:c9e3a7b597b01566c5c7e4388251be9fdf8b8e4869142d377309af5949bfa611")
        #expect(DataKeyRoutes.userNumber(ofOwner: "user:7") == 7)
        // A key record linked to that record: the binding is the tag's ninth field.
        let key = try ServerMasterKey(bytes: Array(0..<32))
        let record = RegisteredKey(
            keyID: "k_00112233445566778899aabbccddeeff", algorithm: .ed25519, publicKey: "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=",
            secret: nil, createdAt: 1_764_000_000, userID: 7, userBinding: binding
        )
        #expect(KeyRecordTag.make(record, under: key) == "tag-v1:76b15d6a51385bbd:QnwtneqhJC3XmBP6qC8tfd2DwtA84u1DUWoFhUN4hwE=")
        for other in ["user:07", "user:+7", "user:", "k_user:7", "user:7 ", "user:99999999999999999999"] {
            #expect(DataKeyRoutes.userNumber(ofOwner: other) == nil, "\(other)")
        }
    }
}
