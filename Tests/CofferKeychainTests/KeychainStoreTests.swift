import CofferCore
import CofferCrypto
@testable import CofferKeychain
import CofferTestSupport
import CofferTesting
import Foundation
import GRDB
import Testing

/// The file itself: permissions, tampering from outside, several processes.
@Suite("Embedded keychain store")
struct KeychainStoreTests {
    @Test func fileIs0600InA0700Folder() throws {
        let fixture = try Fixture(.sqlite)
        try fixture.keychain.add(.genericPassword(service: "s", account: "a"), secret: [1])
        let file = fixture.folder.path("data/coffer/keychain.db")
        #expect(try permissions(file) == 0o600)
        #expect(try permissions(fixture.folder.path("data/coffer")) == 0o700)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
            #expect(try permissions(file + suffix) & 0o077 == 0, "\(suffix) is private too")
        }
    }

    func permissions(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func missingFileIsNoSuchKeychain() throws {
        let folder = try TemporaryDirectory()
        #expect(throws: KeychainError.noSuchKeychain) { try Keychain.open(at: folder.path("none.db")) }
    }

    @Test func secretsAreNotInTheFileInClear() throws {
        let fixture = try Fixture(.sqlite)
        let marker = "VERY-SECRET-MARKER-1234567890"
        try fixture.keychain.add(.genericPassword(service: "s", account: "a"), secret: bytes(marker))
        let path = fixture.folder.path("data/coffer/keychain.db")
        var all = try Data(contentsOf: URL(fileURLWithPath: path))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { all.append(wal) }
        #expect(all.range(of: Data(marker.utf8)) == nil)
    }

    /// Rows edited behind Coffer's back must never yield another item's secret.
    @Test func swappedSecretsAndFlippedBytesAreRefused() throws {
        let fixture = try Fixture(.sqlite)
        try fixture.keychain.add(.genericPassword(service: "s", account: "alice"), secret: bytes("alice's"))
        try fixture.keychain.add(.genericPassword(service: "s", account: "mallory"), secret: bytes("mallory's"))
        let path = fixture.folder.path("data/coffer/keychain.db")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            let alice: Data = try #require(try Data.fetchOne(db, sql: "SELECT secret FROM items WHERE account = 'alice'"))
            try db.execute(sql: "UPDATE items SET secret = ? WHERE account = 'mallory'", arguments: [alice])
        }
        let reopened = try fixture.reopen()
        try reopened.unlock(password: Fixture.password)
        let swapped = try #require(throws: KeychainError.dataCorrupted) { try reopened.secret(matching: .genericPassword(service: "s", account: "mallory")) }
        #expect(swapped.code.osStatus == -26275)
        // An item moved to another accessibility class does not open either.
        try queue.write { db in try db.execute(sql: "UPDATE items SET accessibility = 'afterFirstUnlock' WHERE account = 'alice'") }
        #expect(throws: KeychainError.self) { try reopened.secret(matching: .genericPassword(service: "s", account: "alice")) }
        try queue.write { db in try db.execute(sql: "UPDATE items SET accessibility = 'whenUnlocked' WHERE account = 'alice'") }
        #expect(try reopened.secret(matching: .genericPassword(service: "s", account: "alice")) == bytes("alice's"))
        // Every single-byte change of a sealed secret is caught.
        let original: Data = try queue.read { db in try #require(try Data.fetchOne(db, sql: "SELECT secret FROM items WHERE account = 'alice'")) }
        for index in 0..<original.count {
            var flipped = original
            flipped[index] ^= 0x01
            try queue.write { db in try db.execute(sql: "UPDATE items SET secret = ? WHERE account = 'alice'", arguments: [flipped]) }
            #expect(throws: KeychainError.self) { try reopened.secret(matching: .genericPassword(service: "s", account: "alice")) }
        }
        // A renamed row (identity changed outside) does not open under its new name.
        try queue.write { db in
            try db.execute(sql: "UPDATE items SET secret = ?, account = 'alice2' WHERE account = 'alice'", arguments: [original])
        }
        #expect(throws: KeychainError.self) { try reopened.secret(matching: .genericPassword(service: "s", account: "alice2")) }
    }

    @Test func damagedHeaderIsReported() throws {
        let fixture = try Fixture(.sqlite)
        let path = fixture.folder.path("data/coffer/keychain.db")
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "UPDATE meta SET value = x'0102' WHERE name = 'header'") }
        let reopened = try fixture.reopen()
        #expect(throws: KeychainError.dataCorrupted) { try reopened.unlock(password: Fixture.password) }
    }

    /// The outside attack on issue 42's fix: the keychain header's scrypt cost was bounded only by the
    /// format's ranges (log2 N up to 22, r 32, p 16: gigabytes and minutes), while every other reader
    /// applies `PasswordKDFLimits`. A header asking more than the limits is refused before deriving,
    /// whatever the password; raising `passwordLimits` opens it.
    @Test func aHeaderAskingForMoreWorkThanTheLimitsIsRefusedBeforeDeriving() throws {
        let fixture = try Fixture(.sqlite)
        let path = fixture.folder.path("data/coffer/keychain.db")
        // log2 N 22 at r 1, p 1: 512 MiB and the work of N=2^19 at r=8, but a log2 N above the limit's 19.
        try DatabaseQueue(path: path).write { db in
            let header = try #require(try Data.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'header'"))
            var bytes = Array(header)
            bytes.replaceSubrange(17..<20, with: [22, 1, 1])
            try db.execute(sql: "UPDATE meta SET value = ? WHERE name = 'header'", arguments: [Data(bytes)])
        }
        let reopened = try fixture.reopen()
        let error = try #require(throws: KeychainError.badParameter) { try reopened.unlock(password: Fixture.password) }
        #expect((error.underlying as? CofferCryptoError)?.code == .costTooHigh)
        #expect(error.reason.contains("N=2^22"), "\(error.reason)")
        #expect(reopened.isLocked)
    }

    /// A keychain is never made, nor its password changed, with a cost its own reader would refuse.
    @Test func aCostAboveTheLimitsIsNeitherWrittenNorChanged() throws {
        let folder = try TemporaryDirectory()
        let keychain = try Keychain.open(at: folder.path("k.db"), create: true)
        let error = try #require(throws: KeychainError.badParameter) { try keychain.create(password: "pw", kdf: .scrypt(logN: 19, r: 8, p: 2)) }
        #expect((error.underlying as? CofferCryptoError)?.code == .costTooHigh, "\(error.reason)")
        #expect(try !keychain.isCreated)
        keychain.passwordLimits = PasswordKDFLimits(scryptUpToLogN: 10)
        #expect(throws: KeychainError.self) { try keychain.create(password: "pw", kdf: .scrypt(logN: 11, r: 8, p: 1)) }
        try keychain.create(password: "pw", kdf: .scrypt(logN: 10, r: 8, p: 1))
        #expect(throws: KeychainError.self) { try keychain.changePassword(from: "pw", to: "new", kdf: .scrypt(logN: 11, r: 8, p: 1)) }
    }

    @Test func notADatabaseIsReported() throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(String(repeating: "not sqlite ", count: 500), to: "junk.db")
        let error = try #require(throws: KeychainError.self) { try Keychain.open(at: path) }
        #expect(error.code == .dataCorrupted || error.code == .ioFailure)
    }

    @Test func manyThreadsAtOnce() async throws {
        let fixture = try Fixture(.sqlite)
        let keychain = fixture.keychain
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        let account = "w\(worker)-\(index)"
                        try? keychain.add(.genericPassword(service: "threads", account: account), secret: bytes(account))
                        _ = try? keychain.secret(matching: .genericPassword(service: "threads", account: account))
                    }
                }
            }
        }
        let items = try keychain.copyMatching(KeychainQuery.genericPassword(service: "threads").all(), returningSecrets: true)
        #expect(items.count == 200)
        #expect(items.allSatisfy { $0.secret == bytes($0.item.account ?? "") })
    }
}
