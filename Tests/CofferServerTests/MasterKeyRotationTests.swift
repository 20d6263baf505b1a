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
import Testing

/// The keyring's records and rotation (issue 42, item 4): the check a starting instance makes, on a new
/// database, a recorded one and one an earlier release wrote; rotation through a second key across two
/// instances with `rewrap` interrupted, resumed and racing live writes; retirement; a wrapped HMAC
/// secret moved to another row does not open.
extension MasterKeyringTests {
    static func key() throws -> ServerMasterKey { try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32)) }

    static func options(_ keys: [ServerMasterKey], admin: SigningKey) throws -> RegistrationServer.Options {
        var options = AllowList.options(admin: admin, registration: .open)
        options.masterKeys = try ServerMasterKeyring(keys)
        return options
    }

    static func mismatch(_ body: () async throws -> Void) async -> ServerConfigurationError? {
        do {
            try await body()
            return nil
        } catch let error as ServerConfigurationError where error.code == .masterKeyringMismatch {
            return error
        } catch {
            Issue.record("expected a master-keyring mismatch, got \(error)")
            return nil
        }
    }

    /// A starting instance: a new database records its first key; another key is refused naming both
    /// ids, and so is no key at all; abandoning starts a new keyring and marks the old key abandoned.
    @Test(arguments: Backend.allCases)
    func aStartingInstanceChecksItsKeysAgainstTheDatabase(backend: Backend) async throws {
        try await Self.withStores(backend) { store, other, _ in
            let (a, b, c) = (try Self.key(), try Self.key(), try Self.key())
            let first = try await ServerMasterKeyring.check(try ServerMasterKeyring([a, b]), against: store)
            #expect(first.wrappingKeyID == a.keyID && first.changedKeyring, "the first key given")
            #expect(first.notes.contains { $0.contains(b.keyID) && $0.contains("not recorded") }, "\(first.notes)")
            let again = try await ServerMasterKeyring.check(try ServerMasterKeyring([b, a]), against: other)
            #expect(again.wrappingKeyID == a.keyID && !again.changedKeyring, "the database decides, not the order given")

            let refused = await Self.mismatch { _ = try await ServerMasterKeyring.check(try ServerMasterKeyring([c]), against: other) }
            #expect(refused?.reason.contains(a.keyID) == true && refused?.reason.contains(c.keyID) == true, "\(refused?.reason ?? "")")
            let keyless = await Self.mismatch { _ = try await ServerMasterKeyring.check(nil, against: other) }
            #expect(keyless?.reason.contains(a.keyID) == true, "\(keyless?.reason ?? "")")
            #expect(try await store.masterKeyring().map(\.keyID) == [a.keyID], "refusals record nothing")

            let abandoned = try await ServerMasterKeyring.check(try ServerMasterKeyring([c]), against: other, abandoningRecordedKeyring: true)
            #expect(abandoned.wrappingKeyID == c.keyID && abandoned.notes.first?.contains(a.keyID) == true, "\(abandoned.notes)")
            let states = Dictionary(uniqueKeysWithValues: try await store.masterKeyring().map { ($0.keyID, $0.state) })
            #expect(states == [a.keyID: .abandoned, c.keyID: .wrapping])
            #expect(await Self.mismatch { _ = try await ServerMasterKeyring.check(try ServerMasterKeyring([a]), against: store) } != nil)
        }
    }

    /// Instances starting at once on a new database with different keys: exactly one key is recorded,
    /// and every other instance is refused.
    @Test(arguments: Backend.allCases)
    func instancesStartingAtOnceRecordOneKeyring(backend: Backend) async throws {
        try await Self.withStores(backend) { store, other, _ in
            let keys = try (0..<6).map { _ in try Self.key() }
            let outcomes = try await withThrowingTaskGroup(of: String?.self) { group in
                for (index, key) in keys.enumerated() {
                    group.addTask {
                        do {
                            return try await ServerMasterKeyring.check(try ServerMasterKeyring([key]), against: index % 2 == 0 ? store : other).wrappingKeyID
                        } catch let error as ServerConfigurationError where error.code == .masterKeyringMismatch {
                            return nil
                        }
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            let started = outcomes.compactMap { $0 }
            #expect(started.count == 1, "\(outcomes)")
            #expect(try await store.masterKeyring().map(\.keyID) == started)
        }
    }

    /// A database written by an earlier release records no keyring: the instance that holds the key
    /// its rows are wrapped under records it (whatever order it holds its keys in); an instance that
    /// holds none of them is refused, naming the rows' key.
    @Test func aDatabaseFromAnEarlierReleaseAdoptsTheKeyItsRowsAreWrappedUnder() async throws {
        try await Self.withStores(.sqlite) { store, other, folder in
            let (a, b) = (try Self.key(), try Self.key())
            let admin = try SigningKey.generate(.ed25519)
            try await Server.withServer(store: store, options: try Self.options([a], admin: admin)) { base in
                let identity = RecipientPrivateKey.generateX25519()
                _ = try await DataKeyClient(server: base, signer: try await DataKeyTests.device(at: base, identity: identity), identity: identity).fetch()
            }
            // As an earlier release left it: rows wrapped under a, no keyring.
            let queue = try DatabaseQueue(path: folder.path("server.sqlite"))
            try await queue.write { db in try db.execute(sql: "DELETE FROM coffer_master_keyring") }
            try queue.close()

            let refused = await Self.mismatch { _ = try await ServerMasterKeyring.check(try ServerMasterKeyring([b]), against: other) }
            #expect(refused?.reason.contains(a.keyID) == true && refused?.reason.contains(b.keyID) == true, "\(refused?.reason ?? "")")
            let adopted = try await ServerMasterKeyring.check(try ServerMasterKeyring([b, a]), against: other)
            #expect(adopted.wrappingKeyID == a.keyID && adopted.changedKeyring)
        }
    }

    /// A wrapped HMAC secret moved into another key's row does not open there (its associated data is
    /// the key id, and the row no longer matches its tag): the request is refused with 503, never
    /// verified with the moved secret.
    @Test(arguments: Backend.allCases)
    func aWrappedSecretMovedToAnotherRowDoesNotOpen(backend: Backend) async throws {
        try await Self.withStores(backend) { store, _, _ in
            let a = try Self.key()
            let options = try Self.options([a], admin: try SigningKey.generate(.ed25519))
            try await Server.withServer(store: store, options: options) { base in
                var registered: [(keyID: String, secret: [UInt8])] = []
                for _ in 0..<2 {
                    let reply = try await Server.post(base, "/register", json: #"{"algorithm": "hmac-sha256"}"#)
                    registered.append((try #require(reply.registration?.keyId), try Base64.decode(try #require(reply.json["secret"] as? String))))
                }
                let rewrapper = try #require(store as? any MasterKeyRewrapStore)
                let victim = try #require(try await store.key(id: registered[1].keyID))
                let moved = try #require(try await store.key(id: registered[0].keyID)?.secret)
                // Written as a rewrite would be, keeping the victim's tag: the store changes the row.
                let after = RegisteredKey(
                    keyID: victim.keyID, algorithm: victim.algorithm, publicKey: nil, secret: moved, createdAt: victim.createdAt, tag: victim.tag
                )
                let changed = try await rewrapper.rewriteKeyRecords([KeyRecordRewrite(before: victim, after: after)], under: a.keyID)
                #expect(changed == 1)
                // Signed with the first key's secret under the second key's id.
                let signer = HTTPMessageSigner(key: .hmacSHA256(secret: try MACKey(bytes: registered[0].secret)), keyID: registered[1].keyID)
                let reply = try await Server.send(Server.signedUserRequest(base, signer: signer, email: "m\(UUID().uuidString.prefix(12))@example.com"))
                #expect(reply.status == 503, "\(reply.text)")
            }
        }
    }

    /// The devices and HMAC keys of a rotation test, and what each must keep answering.
    final class Fleet: @unchecked Sendable {
        struct Device: Sendable {
            let signer: HTTPMessageSigner
            let identity: RecipientPrivateKey
            var key: [UInt8]

            func client(_ base: String) throws -> DataKeyClient { try DataKeyClient(server: base, signer: signer, identity: identity) }
        }

        private let lock = NSLock()
        private var storedDevices: [Device] = []
        private var storedSecrets: [(keyID: String, secret: [UInt8])] = []

        var devices: [Device] { lock.withLock { storedDevices } }

        func addDevice(at base: String) async throws {
            let identity = RecipientPrivateKey.generateX25519()
            let signer = try await DataKeyTests.device(at: base, identity: identity)
            let key = DataKeyTests.bytes(try await DataKeyClient(server: base, signer: signer, identity: identity).fetch().key)
            lock.withLock { storedDevices.append(Device(signer: signer, identity: identity, key: key)) }
        }

        func addHMACKey(at base: String) async throws {
            let reply = try await Server.post(base, "/register", json: #"{"algorithm": "hmac-sha256"}"#)
            let keyID = try #require(reply.registration?.keyId, "\(reply.text)")
            add(keyID: keyID, secret: try Base64.decode(try #require(reply.json["secret"] as? String)))
        }

        func add(keyID: String, secret: [UInt8]) { lock.withLock { storedSecrets.append((keyID, secret)) } }

        func setKey(_ key: [UInt8], ofDevice index: Int) { lock.withLock { storedDevices[index].key = key } }

        /// Every device gets its key, every HMAC key verifies, through `base`.
        func everythingAnswers(at base: String) async throws {
            for device in devices {
                #expect(DataKeyTests.bytes(try await device.client(base).fetch().key) == device.key)
            }
            for (keyID, secret) in lock.withLock({ storedSecrets }) {
                let signer = HTTPMessageSigner(key: .hmacSHA256(secret: try MACKey(bytes: secret)), keyID: keyID)
                let reply = try await Server.send(Server.signedUserRequest(base, signer: signer, email: "r\(UUID().uuidString.prefix(12))@example.com"))
                #expect(reply.status == 201, "\(keyID): \(reply.text)")
            }
        }
    }

    /// Rotation without downtime, across two instances: the fleet on the old key, then both keys; the
    /// new key is promoted; an instance still on the old key alone reads but refuses to write; `rewrap`
    /// is interrupted after its first batch while live instances write, then run again to the end; the
    /// old key is retired; every device gets the same data key throughout, every HMAC key verifies
    /// (one stored in clear by an earlier release included), and an instance given only the retired key
    /// no longer starts.
    @Test(arguments: Backend.allCases)
    func rotationThroughASecondKeyWithRewrapInterruptedAndResumed(backend: Backend) async throws {
        try await Self.withStores(backend) { first, second, _ in
            let (old, new) = (try Self.key(), try Self.key())
            let admin = try SigningKey.generate(.ed25519)
            let fleet = Fleet()

            // An HMAC secret stored in clear by an earlier release (before any keyring: once one is
            // recorded, a secret in clear is no longer stored); then the fleet on the old key.
            let legacy = try SecureRandom.bytes(count: 32)
            let stored = try await first.registerKey(
                RegisteredKey(keyID: "h_legacy", algorithm: .hmacSHA256, publicKey: nil, secret: Base64.encode(legacy), createdAt: 1), spending: nil
            )
            guard case .registered = stored else { throw CofferCoreError(.ioFailure, "the legacy secret was not stored: \(stored)") }
            fleet.add(keyID: "h_legacy", secret: legacy)
            try await Server.withServer(store: first, options: try Self.options([old], admin: admin)) { one in
                for _ in 0..<5 { try await fleet.addDevice(at: one) }
                for _ in 0..<3 { try await fleet.addHMACKey(at: one) }
            }
            // The earlier release's record carries no tag: the operator takes it as it is, as the
            // upgrade documents (its secret is wrapped then).
            let adopted = try await MasterKeyRewrap(store: first, keyring: try ServerMasterKeyring([old])).run(taggingUntagged: true)
            #expect(adopted.untaggedRecordIDs == ["h_legacy"] && adopted.secretsFromClear == 1, "\(adopted)")

            // Every instance gets both keys; then the operator promotes the new one.
            let both = try ServerMasterKeyring([old, new])
            #expect(try await ServerMasterKeyring.check(both, against: first).wrappingKeyID == old.keyID, "holding a key does not promote it")
            let promoted = try await both.promote(new.keyID, in: first)
            #expect(Set(promoted.map { "\($0.keyID) \($0.state.rawValue)" }) == ["\(old.keyID) previous", "\(new.keyID) wrapping"])
            let stale = StoredDataKey(owner: "stale", version: 1, dataKeyID: "dk_s", wrapped: "w", masterKeyID: old.keyID, createdAt: 1)
            #expect(try await first.insertDataKey(stale) == nil, "a row is never written under a key that is not the recorded wrapping key")

            try await Server.withServer(store: second, options: try Self.options([old], admin: admin)) { lagging in
                // The instance still on the old key alone reads what is under it, and writes nothing.
                let device = fleet.devices[0]
                let client = try device.client(lagging)
                #expect(DataKeyTests.bytes(try await client.fetch().key) == device.key)
                #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.rotate() } == "master-key-unavailable")
                #expect(try await Server.post(lagging, "/register", json: #"{"algorithm": "hmac-sha256"}"#).problem?.reason == "master-key-unavailable")
            }

            try await Server.withServer(store: first, options: try Self.options([old, new], admin: admin)) { one in
                // Rewrap, interrupted after its first batch of two.
                let rewrap = try MasterKeyRewrap(store: second, keyring: both, batchSize: 2)
                struct Interrupted: Error {}
                var batches = 0
                do {
                    _ = try await rewrap.run { _ in
                        batches += 1
                        throw Interrupted()
                    }
                    Issue.record("the run was not interrupted")
                } catch is Interrupted {}
                #expect(batches == 1)
                let halfway = try await first.masterKeyUsage()
                #expect(halfway.rows[new.keyID]?.dataKeys == 2 && halfway.rows[old.keyID]?.dataKeys == 3, "the first batch stayed done: \(halfway)")
                #expect(try await ServerMasterKeyring.retire(old.keyID, in: first) == .stillWraps(dataKeys: 3, secrets: 4, records: 9))

                // Live instances write meanwhile, under the new key.
                try await fleet.addDevice(at: one)
                try await fleet.addHMACKey(at: one)
                let rotated = try await fleet.devices[1].client(one).rotate()
                #expect(rotated.version == 2)
                fleet.setKey(DataKeyTests.bytes(rotated.key), ofDevice: 1)

                let dry = try await rewrap.run(dryRun: true)
                #expect(dry.dryRun && dry.dataKeys == 3 && dry.secrets == 4 && dry.records == 9 && dry.secretsFromClear == 0, "\(dry)")
                let finished = try await rewrap.run()
                #expect(finished.dataKeys == 3 && finished.secrets == 4 && finished.records == 9 && finished.unopenable.isEmpty, "\(finished)")
                #expect(finished.remaining.rows.values.allSatisfy { $0.dataKeys + $0.secrets + $0.records == 0 } && finished.remaining.secretsInClear == 0, "\(finished.remaining)")
                #expect(try await rewrap.run().dataKeys == 0, "a third run finds nothing")
                try await fleet.everythingAnswers(at: one)
            }

            #expect(try await ServerMasterKeyring.retire(new.keyID, in: first) == .wrapping)
            #expect(try await ServerMasterKeyring.retire(old.keyID, in: first) == .retired)
            #expect(await Self.mismatch { _ = try await ServerMasterKeyring.check(try ServerMasterKeyring([old]), against: second) } != nil,
                    "an instance given only the retired key does not start")
            let holdingBoth = try await ServerMasterKeyring.check(both, against: second)
            #expect(holdingBoth.notes.contains { $0.contains(old.keyID) && $0.contains("retired") }, "\(holdingBoth.notes)")
            // Retirement is final (the outside attack promoted a retired key back to wrapping, and then
            // started a new keyring with it through --abandon-master-keyring).
            for attempt in [
                { _ = try await both.promote(old.keyID, in: first) },
                { _ = try await ServerMasterKeyring.check(try ServerMasterKeyring([old]), against: second, abandoningRecordedKeyring: true) },
            ] as [@Sendable () async throws -> Void] {
                let refusal = await #expect(throws: ServerConfigurationError.self) { try await attempt() }
                #expect(refusal?.code.rawValue == "master-key-given-up" && refusal?.reason.contains("final") == true, "\(String(describing: refusal))")
            }
            #expect(try await first.masterKeyring().first { $0.keyID == old.keyID }?.state == .retired)
            #expect(try await first.masterKeyring().first { $0.state == .wrapping }?.keyID == new.keyID)
            try await Server.withServer(store: second, options: try Self.options([new], admin: admin)) { newOnly in
                try await fleet.everythingAnswers(at: newOnly)
            }
        }
    }

    /// The master key file's rules: its owner's alone (0600 or 0400), exactly 32 bytes.
    @Test func aMasterKeyFileMustBeItsOwnersAloneAnd32Bytes() throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(try SecureRandom.bytes(count: 32), to: "master.key")
        for (mode, accepted) in [(0o600, true), (0o400, true), (0o644, false), (0o640, false), (0o604, false), (0o700, false)] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            do {
                _ = try ServerMasterKey(contentsOf: path)
                #expect(accepted, "mode \(String(mode, radix: 8)) accepted")
            } catch {
                #expect(!accepted && error.code == .exposedMasterKeyFile && error.hint == "chmod 600 '\(path)'", "\(String(mode, radix: 8)): \(error)")
            }
        }
        let short = try folder.write(try SecureRandom.bytes(count: 31), to: "short.key")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: short)
        #expect(throws: ServerConfigurationError.self) { try ServerMasterKey(contentsOf: short) }
        #expect(throws: ServerConfigurationError.self) { try ServerMasterKey(base64Encoded: "not base64!") }
    }

    /// The master key file's owner and folders, as `ssh` checks its keys: a file another user owns, or in
    /// a folder another user owns or anyone may write to (without the sticky bit), is refused, naming
    /// what to change; a sticky folder anyone may write to (as `/tmp`) is not.
    @Test func aMasterKeyFileIsInFoldersOnlyItsOwnerOrRootCanChange() throws {
        let outer = try TemporaryDirectory()
        let folder = outer.path("keys")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let path = folder + "/master.key"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(try SecureRandom.bytes(count: 32)), attributes: [.posixPermissions: 0o600]))
        #expect(throws: Never.self) { try ServerMasterKey(contentsOf: path) }
        for (mode, accepted) in [(0o777, false), (0o770, false), (0o755, true), (0o1777, true), (0o700, true)] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: folder)
            do {
                _ = try ServerMasterKey(contentsOf: path)
                #expect(accepted, "folder mode \(String(mode, radix: 8)) accepted")
            } catch {
                #expect(!accepted && error.code == .exposedMasterKeyFile && error.hint == "chmod go-w '\(folder)'", "\(String(mode, radix: 8)): \(error)")
            }
        }
        // A link in a folder others can write is theirs to point elsewhere, even at a key in a safe folder.
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder)
        let open = outer.path("open")
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: open)
        try FileManager.default.createSymbolicLink(atPath: open + "/master.key", withDestinationPath: path)
        let linked = #expect(throws: ServerConfigurationError.self) { try ServerMasterKey(contentsOf: open + "/master.key") }
        #expect(linked?.hint == "chmod go-w '\(open)'", "\(String(describing: linked))")
        // Owners: only root can give a file or folder away, so this part runs as root (as CI does).
        guard geteuid() == 0 else { return }
        let nobody: UInt32 = 65534
        #expect(chown(path, nobody, nobody) == 0)
        let owned = #expect(throws: ServerConfigurationError.self) { try ServerMasterKey(contentsOf: path) }
        #expect(owned?.code == .exposedMasterKeyFile && owned?.reason.contains("belongs to user 65534") == true, "\(String(describing: owned))")
        #expect(chown(path, 0, 0) == 0 && chown(folder, nobody, nobody) == 0)
        let inTheirs = #expect(throws: ServerConfigurationError.self) { try ServerMasterKey(contentsOf: path) }
        #expect(inTheirs?.reason.contains("'\(folder)', which belongs to user 65534") == true, "\(String(describing: inTheirs))")
    }
}
