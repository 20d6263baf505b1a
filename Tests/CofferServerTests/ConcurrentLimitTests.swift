import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServer
import CofferTesting
import Foundation
import GRDB
import Testing

/// Every limit and state rule of the server is checked in the statement or transaction that writes, so
/// that requests sent at once, to one instance or to two sharing the database, pass exactly as many
/// times as allowed: encryption-key changes per hour, registration-token uses, users signed up per key,
/// a revocation that no later change undoes, and a retirement floor that only rises, on each store (two stores over one
/// database, as two instances see it; one case at a time, each holding up to 40 of PostgreSQL's
/// connections). Data-key rotations at once are
/// `DataKeyTests.rotationsAtOnceEachMakeTheirOwnVersion`.
@Suite("Limits under concurrency", .serialized)
struct ConcurrentLimitTests {
    typealias Backend = AllowListTests.Backend

    /// A key record no other test uses.
    static func key() throws -> RegisteredKey {
        let id = "k_" + Hex.encode(try SecureRandom.bytes(count: 16))
        return RegisteredKey(keyID: id, algorithm: .ed25519, publicKey: Base64.encode(try SecureRandom.bytes(count: 44)), secret: nil, createdAt: now)
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// Runs `count` calls of `body` at once, alternating between the two stores, and collects their answers.
    static func atOnce<T: Sendable>(
        _ count: Int, on stores: (any RegistrationStore, any RegistrationStore), _ body: @escaping @Sendable (any RegistrationStore, Int) async throws -> T
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: T.self) { group in
            for index in 0..<count {
                let store = index.isMultiple(of: 2) ? stores.0 : stores.1
                group.addTask { try await body(store, index) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// The reproduction: thirty changes of one key's encryption key at once, over two instances, with
    /// ten allowed an hour. Counted beside the write, 18 (SQLite) to 30 (PostgreSQL) got through.
    @Test(arguments: Backend.allCases)
    func encryptionKeyChangesAtOnceStopAtTheLimit(backend: Backend) async throws {
        try await DataKeyTests.withTwoInstances(backend) { instances in
            let key = try SigningKey.generate(.ed25519)
            #expect(try await RegistrationProofTests.register(key, at: instances.one).status == 201)
            let devices = (try DeviceClient(server: instances.one, key: key), try DeviceClient(server: instances.two, key: key))
            let answers = try await withThrowingTaskGroup(of: Result<Bool, ServerClientError>.self) { group in
                for index in 0..<30 {
                    let device = index.isMultiple(of: 2) ? devices.0 : devices.1
                    let encryptionKey = RecipientPrivateKey.generateX25519().publicKey
                    group.addTask {
                        do throws(ServerClientError) { return .success(try await device.setEncryptionKey(encryptionKey).changed) } catch { return .failure(error) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let changed = answers.filter { (try? $0.get()) == true }.count
            let limited = answers.filter { if case .failure(let error) = $0 { error.problemReason == "rate-limited" } else { false } }.count
            #expect(changed == 10 && limited == 20, "\(answers)")
            let history = try await instances.store.events(ofKey: devices.0.keyID, limit: 100)
            #expect(history.filter { $0.kind == .encryptionKey }.count == 10)
        }
    }

    /// The same at the store, with the count's answer: the refusals say how many there were and when
    /// the oldest was; the key the device already has is neither written nor counted.
    @Test(arguments: Backend.allCases)
    func theStoreCountsAndWritesEncryptionKeysTogether(backend: Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, _ in
            let key = try Self.key()
            let registration = try await first.registerKey(key, spending: nil)
            guard case .registered = registration else { Issue.record("not registered: \(registration)"); return }
            let time = Self.now
            let outcomes = try await Self.atOnce(30, on: (first, second)) { store, index in
                try await store.setEncryptionKey("encryption-key-\(index)", ofKey: key.keyID, at: time, changesPerHour: 10)
            }
            var set: [String] = []
            for outcome in outcomes {
                switch outcome {
                case .set(let change):
                    #expect(change.changed)
                    set.append(try #require(change.key.encryptionKey))
                case .limited(let recent): #expect(recent.count == 10 && recent.oldest == time)
                case .unknownKey: Issue.record("the key exists")
                }
            }
            #expect(set.count == 10)
            let newest = try #require(try await second.key(id: key.keyID)?.encryptionKey)
            let repeated = try await second.setEncryptionKey(newest, ofKey: key.keyID, at: time, changesPerHour: 10)
            guard case .set(let again) = repeated else { Issue.record("setting the key it has: \(repeated)"); return }
            #expect(!again.changed)
            #expect(try await first.setEncryptionKey("k", ofKey: "k_none", at: time, changesPerHour: 10) == .unknownKey)
            #expect(try await first.recentEvents(ofKey: key.keyID, kind: .encryptionKey, since: time - 3600).count == 10)
        }
    }

    /// A token of five uses offered by twenty registrations at once registers five keys.
    @Test(arguments: Backend.allCases)
    func aTokenIsSpentExactlyAsOftenAsItSays(backend: Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, _ in
            let time = Self.now
            let secretHash = Hex.encode(try SecureRandom.bytes(count: 32))
            let token = RegistrationToken(
                tokenID: "tok_" + Hex.encode(try SecureRandom.bytes(count: 8)), uses: 5, usesLeft: 5, expiresAt: time + 3600, platform: nil, revoked: false, createdAt: time
            )
            try await first.insertToken(token, secretHash: secretHash)
            let keys = try (0..<20).map { _ in try Self.key() }
            let outcomes = try await Self.atOnce(20, on: (first, second)) { store, index in
                try await store.registerKey(keys[index], spending: TokenUse(secretHash: secretHash, platform: nil, now: time))
            }
            #expect(outcomes.filter { if case .registered = $0 { true } else { false } }.count == 5)
            #expect(outcomes.filter { $0 == .invalidToken }.count == 15)
            #expect(try await second.tokens(limit: 10_000).first { $0.tokenID == token.tokenID }?.usesLeft == 0)
        }
    }

    /// A revocation among disables and enables at once: the key ends revoked, and no state change is
    /// recorded after the revocation.
    @Test(arguments: Backend.allCases)
    func aRevocationIsFinalWhateverRunsBesideIt(backend: Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, _ in
            let key = try Self.key()
            _ = try await first.registerKey(key, spending: nil)
            let time = Self.now
            let states: [RegisteredKey.State] = (0..<24).map { $0 == 11 ? .revoked : ($0.isMultiple(of: 2) ? .disabled : .active) }
            _ = try await Self.atOnce(states.count, on: (first, second)) { store, index in
                try await store.setState(states[index], ofKey: key.keyID, actor: "admin:test", at: time)
            }
            #expect(try await second.key(id: key.keyID)?.state == .revoked)
            let changes = try await first.events(ofKey: key.keyID, limit: 100).filter { $0.kind == .state }
            #expect(changes.first?.detail?.contains("revoked") == true, "newest first: \(changes)")
            #expect(try await first.setState(.active, ofKey: key.keyID, actor: "admin:test", at: time)?.state == .revoked)
        }
    }

    /// One key signs up at most its limit of users: twenty sign-ups at once over two instances store ten,
    /// and refuse the others as `limited`; another key is not held back by this one's count.
    @Test(arguments: Backend.allCases)
    func aKeySignsUpNoMoreUsersThanItsLimit(backend: Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, _ in
            let key = try Self.key(), other = try Self.key()
            _ = try await first.registerKey(key, spending: nil)
            _ = try await first.registerKey(other, spending: nil)
            let time = Self.now
            let outcomes = try await Self.atOnce(20, on: (first, second)) { store, index in
                try await store.insertUser(
                    email: "u\(index)-\(key.keyID)@example.com", name: "U", keyID: key.keyID, createdAt: time, recordingFirstUse: nil, signUpsPerKey: 10
                )
            }
            #expect(outcomes.filter { if case .inserted = $0 { true } else { false } }.count == 10, "\(outcomes)")
            #expect(outcomes.filter { $0 == .limited }.count == 10)
            #expect(try await second.users(email: nil, limit: 100_000).filter { $0.keyID == key.keyID }.count == 10)
            let theirs = try await second.insertUser(
                email: "o-\(other.keyID)@example.com", name: "O", keyID: other.keyID, createdAt: time, recordingFirstUse: nil, signUpsPerKey: 10
            )
            #expect(theirs != .limited)
        }
    }

    /// Through the admin API: an enable racing a revocation is answered `409 key-revoked` when the
    /// revocation won, never `200` with the key's record showing it revoked (3 to 13 of 20 were, on
    /// PostgreSQL: the route read the key before the revocation and answered what the store kept).
    @Test(arguments: Backend.allCases)
    func anEnableThatLosesToARevocationIsTold(backend: Backend) async throws {
        try await DataKeyTests.withTwoInstances(backend) { instances in
            let device = try SigningKey.generate(.ed25519)
            #expect(try await RegistrationProofTests.register(device, at: instances.one).status == 201)
            let keyID = RegistrationProofTests.registeredKeyID(device)
            let answers = try await withThrowingTaskGroup(of: (String, Int, String).self) { group in
                for index in 0..<21 {
                    let (action, base) = (index == 10 ? "revoke" : "enable", index.isMultiple(of: 2) ? instances.one : instances.two)
                    group.addTask {
                        let reply = try await AllowListTests.admin(.post, base, "/admin/keys/\(keyID)/\(action)", as: instances.admin)
                        return (action, reply.status, reply.keyRecord?.state.rawValue ?? reply.problem?.reason ?? "")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (action, status, said) in answers where action == "enable" {
                #expect((status == 200 && said == "active") || (status == 409 && said == "key-revoked"), "\(status) \(said)")
            }
            #expect(try await instances.store.key(id: keyID)?.state == .revoked)
        }
    }

    /// A sign-up whose user cannot be written (the disk full, here a trigger that fails the insert as a
    /// full disk would) leaves nothing behind on SQLite, where one transaction holds other requests'
    /// writes too: not its count (the key may still sign up as many users), not its replay record (the
    /// same signed request may be sent again).
    @Test func aSignUpThatCannotBeWrittenLeavesNeitherItsCountNorItsReplayRecord() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("server.sqlite")
        let store = try await DatabaseLocation.sqlite(path: path).openForTest()
        let key = try Self.key()
        _ = try await store.registerKey(key, spending: nil)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "CREATE TRIGGER disk_full BEFORE INSERT ON coffer_users BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
        }
        let time = Self.now
        let replay = HTTPReplayRecord(identifier: "sig-\(key.keyID)", expiry: time + 300, now: time)
        await #expect(throws: (any Error).self) {
            try await store.insertUser(email: "a@example.com", name: "A", keyID: key.keyID, createdAt: time, recordingFirstUse: replay, signUpsPerKey: 1)
        }
        try await queue.write { db in try db.execute(sql: "DROP TRIGGER disk_full") }
        try queue.close()
        let again = try await store.insertUser(email: "a@example.com", name: "A", keyID: key.keyID, createdAt: time, recordingFirstUse: replay, signUpsPerKey: 1)
        guard case .inserted = again else { Issue.record("the same request, sent again: \(again)"); return }
        try await store.close()
    }

    /// Retirements at once, each asking for another floor: the floor ends at the highest asked for.
    @Test(arguments: Backend.allCases)
    func aRetirementFloorOnlyRises(backend: Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, _ in
            let owner = try Self.key().keyID
            let floors = Array(1...20).shuffled()
            _ = try await Self.atOnce(floors.count, on: (first, second)) { store, index in
                try await store.setMinimumDataKeyVersion(Int64(floors[index]), owner: owner)
            }
            #expect(try await first.minimumDataKeyVersion(owner: owner) == 20)
            try await second.setMinimumDataKeyVersion(3, owner: owner)
            #expect(try await first.minimumDataKeyVersion(owner: owner) == 20)
        }
    }
}
