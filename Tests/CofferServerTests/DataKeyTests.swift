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
import Logging
import Testing

/// Per-device data keys (issue 22): a device fetches its key sealed to its own encryption key; two
/// instances hand out the same key; rotation keeps old versions until an admin retires them; the
/// database never holds a key in clear; a revoked device gets nothing.
@Suite("Data keys")
struct DataKeyTests {
    typealias Server = RegistrationServerTests
    typealias AllowList = AllowListTests

    static func options(admin: SigningKey, masterKey: [UInt8]) throws -> RegistrationServer.Options {
        var options = AllowList.options(admin: admin, registration: .open)
        options.masterKey = try ServerMasterKey(bytes: masterKey)
        return options
    }

    /// Registers a device (an Ed25519 signing key and an encryption key) and returns its signer.
    static func device(at base: String, identity: RecipientPrivateKey) async throws -> HTTPMessageSigner {
        try await UserIdentityTests.device(at: base, identity: identity)
    }

    static func bytes(_ key: EncryptionKey) -> [UInt8] { key.withUnsafeKeyBytes { Array($0) } }

    static func refusal(_ body: () async throws(ServerClientError) -> some Any) async -> String? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error.problemReason ?? error.code.rawValue
        }
    }

    /// Two server instances over one database (SQLite file or PostgreSQL), one admin, one master key.
    struct Instances: Sendable {
        let one: String
        let two: String
        let admin: SigningKey
        let store: any RegistrationStore
        let folder: TemporaryDirectory
    }

    /// A database of their own (a scratch one on PostgreSQL): the master keyring is one per database.
    static func withTwoInstances(
        _ backend: AllowListTests.Backend, scope: DataKeyScope = .device, _ body: @escaping @Sendable (Instances) async throws -> Void
    ) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, folder in
            let adminKey = try SigningKey.generate(.ed25519)
            var configured = try Self.options(admin: adminKey, masterKey: try SecureRandom.bytes(count: 32))
            configured.dataKeyScope = scope
            let options = configured
            try await Server.withServer(store: first, options: options) { one in
                try await Server.withServer(store: second, options: options) { two in
                    try await body(Instances(one: one, two: two, admin: adminKey, store: first, folder: folder))
                }
            }
        }
    }

    @Test(arguments: AllowListTests.Backend.allCases)
    func theSameKeyFromEveryInstanceOnlyForItsDevice(backend: AllowListTests.Backend) async throws {
        try await Self.withTwoInstances(backend) { instances in
            let (one, two, first, folder) = (instances.one, instances.two, instances.store, instances.folder)
            do {
                for identity in [RecipientPrivateKey.generateX25519(), .p256(.init())] {
                    let signer = try await Self.device(at: one, identity: identity)
                    // Both instances at once, before any key exists: one key is made, both answer with it.
                    async let viaOne = DataKeyClient(server: one, signer: signer, identity: identity).fetch()
                    async let viaTwo = DataKeyClient(server: two, signer: signer, identity: identity).fetch()
                    let (a, b) = try await (viaOne, viaTwo)
                    #expect(Self.bytes(a.key) == Self.bytes(b.key) && a.version == 1 && b.version == 1)
                    // Another device's private key cannot open this device's envelope.
                    let stranger = try DataKeyClient(server: one, signer: signer, identity: .generateX25519())
                    #expect(await Self.refusal { () async throws(ServerClientError) in try await stranger.fetch() } == "unexpected-answer")

                    // What the database holds is wrapped: the key appears nowhere in clear.
                    let secret = Self.bytes(a.key)
                    let stored = try #require(try await first.dataKey(owner: signer.keyID, version: 1))
                    #expect(!stored.wrapped.contains(Base64.encode(secret)) && !stored.wrapped.contains(Hex.encode(secret)))
                    if backend == .sqlite {
                        for file in ["server.sqlite", "server.sqlite-wal"] where FileManager.default.fileExists(atPath: folder.path(file)) {
                            let raw = try Array(Data(contentsOf: URL(fileURLWithPath: folder.path(file))))
                            #expect(raw.occurrences(of: secret) == 0, "the data key in clear in \(file)")
                        }
                    }
                }
            }
        }
    }

    /// Per-user data keys: the devices of one user share one key (a new device opens what another
    /// encrypted), each still sealed to its own encryption key; another user's key differs; a device
    /// that belongs to no user (one that only signed a user up included) gets none until an admin links it.
    @Test(arguments: AllowListTests.Backend.allCases)
    func perUserKeysAreSharedByTheUsersDevicesOnly(backend: AllowListTests.Backend) async throws {
        try await Self.withTwoInstances(backend, scope: .user) { instances in
            let (one, two, adminKey) = (instances.one, instances.two, instances.admin)
            do {
                let phoneIdentity = RecipientPrivateKey.generateX25519()
                let phone = try await Self.device(at: one, identity: phoneIdentity)
                let phoneClient = try DataKeyClient(server: one, signer: phone, identity: phoneIdentity)
                #expect(await Self.refusal { () async throws(ServerClientError) in try await phoneClient.fetch() } == "no-user")
                let address = "u\(UUID().uuidString.prefix(12))@example.com"
                let signedUp = try await Server.send(Server.signedUserRequest(one, signer: phone, email: address))
                let userID = try #require(signedUp.json["id"] as? Int, "\(signedUp.text)")
                // Signing up makes no device a member, not even the one that signed up: the backend links it.
                #expect(await Self.refusal { () async throws(ServerClientError) in try await phoneClient.fetch() } == "no-user")
                let admin = try AdminClient(server: two, key: adminKey)
                #expect(try await admin.link(key: phone.keyID, toUser: Int64(userID), email: address).userId == Int64(userID))
                let fromPhone = try await phoneClient.fetch()

                // A new device of the same user (P-256 this time), through the other instance.
                let laptopIdentity = RecipientPrivateKey.p256(.init())
                let laptop = try await Self.device(at: two, identity: laptopIdentity)
                let laptopClient = try DataKeyClient(server: two, signer: laptop, identity: laptopIdentity)
                #expect(await Self.refusal { () async throws(ServerClientError) in try await laptopClient.fetch() } == "no-user")
                #expect(try await admin.link(key: laptop.keyID, toUser: Int64(userID), email: address).userId == Int64(userID))
                let fromLaptop = try await laptopClient.fetch()
                #expect(Self.bytes(fromLaptop.key) == Self.bytes(fromPhone.key) && fromLaptop.dataKeyID == fromPhone.dataKeyID)
                // Sealed to each device: the phone's identity does not open the laptop's envelope.
                let impostor = try DataKeyClient(server: one, signer: laptop, identity: phoneIdentity)
                #expect(await Self.refusal { () async throws(ServerClientError) in try await impostor.fetch() } == "unexpected-answer")

                // Rotation by one device is the user's: the other sees the new version.
                let rotated = try await laptopClient.rotate()
                let seenByPhone = try await phoneClient.fetch()
                #expect(rotated.version == 2 && Self.bytes(seenByPhone.key) == Self.bytes(rotated.key))

                // Another user's device gets another key.
                let strangerIdentity = RecipientPrivateKey.generateX25519()
                let stranger = try await Self.device(at: one, identity: strangerIdentity)
                let theirAddress = "s\(UUID().uuidString.prefix(12))@example.com"
                let theirUser = try await Server.send(Server.signedUserRequest(one, signer: stranger, email: theirAddress))
                _ = try await admin.link(key: stranger.keyID, toUser: Int64(try #require(theirUser.json["id"] as? Int)), email: theirAddress)
                let theirs = try await DataKeyClient(server: one, signer: stranger, identity: strangerIdentity).fetch()
                #expect(Self.bytes(theirs.key) != Self.bytes(fromPhone.key) && theirs.dataKeyID != fromPhone.dataKeyID)

                // Linking refuses what does not exist; revoking the laptop stops it, not the phone.
                #expect(await Self.refusal { () async throws(ServerClientError) in try await admin.link(key: laptop.keyID, toUser: 9_999_999, email: address) } == "unknown-user")
                #expect(await Self.refusal { () async throws(ServerClientError) in try await admin.link(key: laptop.keyID, toUser: Int64(userID), email: theirAddress) } == "unknown-user",
                        "a user who does not hold the address verified")
                #expect(await Self.refusal { () async throws(ServerClientError) in try await admin.link(key: laptop.keyID, toUser: Int64(userID)) } == "invalid-request",
                        "a number alone, with master keys")
                #expect(await Self.refusal { () async throws(ServerClientError) in try await admin.link(key: "k_none", toUser: Int64(userID), email: address) } == "unknown-key")
                _ = try await admin.apply(.revoke, toKey: laptop.keyID)
                #expect(await Self.refusal { () async throws(ServerClientError) in try await laptopClient.fetch() } == "key-revoked")
                #expect(try await phoneClient.fetch().version == 2)
            }
        }
    }

    @Test(arguments: AllowListTests.Backend.allCases)
    func rotationKeepsOldVersionsUntilRetiredAndRevocationStopsEverything(backend: AllowListTests.Backend) async throws {
        try await Self.withTwoInstances(backend) { instances in
            let (one, two, adminKey) = (instances.one, instances.two, instances.admin)
            do {
                let identity = RecipientPrivateKey.generateX25519()
                let signer = try await Self.device(at: one, identity: identity)
                let client = try DataKeyClient(server: one, signer: signer, identity: identity)
                let version1 = try await client.fetch()
                let version2 = try await DataKeyClient(server: two, signer: signer, identity: identity).rotate()
                #expect(version2.version == 2 && Self.bytes(version2.key) != Self.bytes(version1.key))
                #expect(version2.dataKeyID == version1.dataKeyID, "one key, two versions")
                #expect(try await client.fetch().version == 2, "the newest by default")
                #expect(Self.bytes(try await client.fetch(version: 1).key) == Self.bytes(version1.key), "old versions still decrypt")
                #expect(await Self.refusal { () async throws(ServerClientError) in try await client.fetch(version: 7) } == "unknown-version")

                let retired = try await AllowList.admin(.post, two, "/admin/data-keys/\(signer.keyID)/retire", json: #"{"minVersion": 2}"#, as: adminKey)
                #expect(retired.status == 200, "\(retired.text)")
                #expect(await Self.refusal { () async throws(ServerClientError) in try await client.fetch(version: 1) } == "version-retired")
                #expect(try await client.fetch().minimumVersion == 2)

                #expect(try await AllowList.admin(.post, one, "/admin/keys/\(signer.keyID)/revoke", as: adminKey).status == 200)
                #expect(await Self.refusal { () async throws(ServerClientError) in try await client.fetch() } == "key-revoked")
                #expect(await Self.refusal { () async throws(ServerClientError) in try await client.rotate() } == "key-revoked")
            }
        }
    }

    /// The outside attack on issue 42's fix: rotations at once were all answered 200, most of them with
    /// a version another request had made (18 of 20 were told version 1). Each answered rotation now
    /// made its own new version, and the limit still holds for rotations at once.
    @Test(arguments: AllowListTests.Backend.allCases)
    func rotationsAtOnceEachMakeTheirOwnVersion(backend: AllowListTests.Backend) async throws {
        try await Self.withTwoInstances(backend) { instances in
            let identity = RecipientPrivateKey.generateX25519()
            let signer = try await Self.device(at: instances.one, identity: identity)
            let clients = try [instances.one, instances.two].map { try DataKeyClient(server: $0, signer: signer, identity: identity) }
            #expect(try await clients[0].fetch().version == 1)

            func rotations(_ count: Int) async -> [Result<DataKeyClient.DataKey, ServerClientError>] {
                await withTaskGroup(of: Result<DataKeyClient.DataKey, ServerClientError>.self) { group in
                    for index in 0..<count {
                        group.addTask {
                            do throws(ServerClientError) { return .success(try await clients[index % 2].rotate()) } catch { return .failure(error) }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            // Eight at once, within the limit of ten versions an hour: eight new versions, one each.
            let eight = await rotations(8)
            let versions = eight.compactMap { try? $0.get().version }
            #expect(versions.sorted() == Array(2...9), "\(versions.sorted())")
            #expect(Set(eight.compactMap { try? Self.bytes($0.get().key) }).count == 8, "eight different keys")
            // Five more at once with one version left under the limit: one is made, four are refused.
            let five = await rotations(5)
            #expect(five.compactMap { try? $0.get().version } == [10], "\(five)")
            #expect(five.filter { if case .failure(let error) = $0 { error.problemReason == "rate-limited" } else { false } }.count == 4)
            #expect(try await instances.store.dataKey(owner: signer.keyID, version: nil)?.version == 10)
        }
    }

    /// `POST /data-keys/rotate` is refused once `dataKeyRotationsPerHour` versions of the owner's key
    /// were made in the last hour (the first and an admin's count too), counted in the database (so
    /// across instances); it is then `429` with `Retry-After`, and nothing is stored. The admin's
    /// rotation is not limited.
    @Test(arguments: AllowListTests.Backend.allCases)
    func rotationIsLimitedPerOwnerAcrossInstances(backend: AllowListTests.Backend) async throws {
        try await Self.withTwoInstances(backend) { instances in
            let (one, two) = (instances.one, instances.two)
            let identity = RecipientPrivateKey.generateX25519()
            let signer = try await Self.device(at: one, identity: identity)
            let viaOne = try DataKeyClient(server: one, signer: signer, identity: identity)
            let viaTwo = try DataKeyClient(server: two, signer: signer, identity: identity)
            #expect(try await viaOne.fetch().version == 1)
            // The first version counts: nine rotations make ten versions within the hour.
            for index in 0..<9 {
                _ = try await (index % 2 == 0 ? viaOne : viaTwo).rotate()
            }
            #expect(await Self.refusal { () async throws(ServerClientError) in try await viaTwo.rotate() } == "rate-limited")
            #expect(await Self.refusal { () async throws(ServerClientError) in try await viaOne.rotate() } == "rate-limited")
            #expect(try await viaOne.fetch().version == 10, "the refused rotations made nothing")
            let byAdmin = try await AllowList.admin(.post, one, "/admin/data-keys/\(signer.keyID)/rotate", as: instances.admin)
            #expect(byAdmin.status == 200 && byAdmin.json["version"] as? Int == 11, "\(byAdmin.text)")
        }
    }

    @Test func aDeviceWithoutAnEncryptionKeyOrABadOneIsToldWhy() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let adminKey = try SigningKey.generate(.ed25519)
        try await Server.withServer(store: store, options: try Self.options(admin: adminKey, masterKey: try SecureRandom.bytes(count: 32))) { base in
            let signing = try SigningKey.generate(.ed25519)
            let keyID = try #require(try await Server.register(signing, at: base).registration?.keyId)
            let client = try DataKeyClient(server: base, signer: HTTPMessageSigner(key: try HTTPSigningKey(signing), keyID: keyID), identity: .generateX25519())
            #expect(await Self.refusal { () async throws(ServerClientError) in try await client.fetch() } == "no-encryption-key")
            let pem = try SigningKey.generate(.ed25519).verifyingKey.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
            let bad = try await Server.post(base, "/register", json: #"{"publicKey": "\#(pem)", "encryptionKey": "not a key"}"#)
            #expect(bad.status == 400 && bad.problem?.reason == "invalid-encryption-key")
            #expect(try await store.keys(limit: 10).count == 1, "nothing written for the bad request")
        }
        #expect(throws: ServerConfigurationError.self) { try ServerMasterKey(bytes: [1, 2, 3]) }
    }

    /// The store's one-read lookup: the floor, the newest version and the asked one (or the newest),
    /// whatever the owner has stored, including nothing.
    @Test(arguments: AllowListTests.Backend.allCases)
    func oneReadGivesTheFloorTheNewestAndTheAskedVersion(backend: AllowListTests.Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { store, other, _ in
            // Rows are written only under the keyring's wrapping key.
            #expect(try await store.changeMasterKeyring(wrapping: "mk", replacing: nil, setting: [:], at: 1))
            let owner = "lookup-" + Hex.encode(try SecureRandom.bytes(count: 8))
            #expect(try await store.lookUpDataKey(owner: owner, version: nil) == DataKeyLookup(minimumVersion: 1, newestVersion: nil, key: nil))
            #expect(try await store.lookUpDataKey(owner: owner, version: 1) == DataKeyLookup(minimumVersion: 1, newestVersion: nil, key: nil))
            var stored: [StoredDataKey] = []
            for version in Int64(1)...3 {
                let key = StoredDataKey(owner: owner, version: version, dataKeyID: "dk_x", wrapped: "w\(version)", masterKeyID: "mk", createdAt: 1_700_000_000 + version)
                stored.append(try #require(try await store.insertDataKey(key)))
            }
            // Another owner's keys and floor change nothing here.
            _ = try await store.insertDataKey(StoredDataKey(owner: owner + "-b", version: 9, dataKeyID: "dk_y", wrapped: "w", masterKeyID: "mk", createdAt: 1))
            try await store.setMinimumDataKeyVersion(5, owner: owner + "-b")
            #expect(try await other.lookUpDataKey(owner: owner, version: nil) == DataKeyLookup(minimumVersion: 1, newestVersion: 3, key: stored[2]))
            #expect(try await other.lookUpDataKey(owner: owner, version: 2) == DataKeyLookup(minimumVersion: 1, newestVersion: 3, key: stored[1]))
            #expect(try await other.lookUpDataKey(owner: owner, version: 7) == DataKeyLookup(minimumVersion: 1, newestVersion: 3, key: nil))
            try await store.setMinimumDataKeyVersion(2, owner: owner)
            #expect(try await other.lookUpDataKey(owner: owner, version: 1) == DataKeyLookup(minimumVersion: 2, newestVersion: 3, key: stored[0]))
        }
    }

    /// The envelope format on its own: bound to its context, and to its device.
    @Test func envelopesAreBoundToContextAndDevice() throws {
        let device = RecipientPrivateKey.generateX25519()
        let key = try SecureRandom.bytes(count: 32)
        let context = DataKeyEnvelope.context(dataKeyID: "dk_1", version: 1, deviceKeyID: "k_1")
        let envelope = try DataKeyEnvelope.seal(key, to: device.publicKey, context: context)
        #expect(envelope.count == 81)
        #expect(try DataKeyEnvelope.open(envelope, with: device, context: context) == key)
        let other = DataKeyEnvelope.context(dataKeyID: "dk_1", version: 2, deviceKeyID: "k_1")
        #expect(throws: CofferFormatsError.self) { try DataKeyEnvelope.open(envelope, with: device, context: other) }
        var flipped = envelope
        flipped[40] ^= 1
        #expect(throws: CofferFormatsError.self) { try DataKeyEnvelope.open(flipped, with: device, context: context) }
        #expect(throws: CofferFormatsError.self) { try DataKeyEnvelope.open(Array(envelope.prefix(50)), with: device, context: context) }
        #expect(throws: CofferFormatsError.self) { try DataKeyEnvelope.open(envelope, with: .p256(.init()), context: context) }
    }
}
