import CofferCore
import CofferCrypto
@testable import CofferServer
import CofferTesting
import CofferTestSupport
import Foundation
import GRDB
import Logging
import Testing

/// SQLite's replay records: appended in commit order and looked up in memory (SQLiteReplayLedger),
/// and still one atomic first-use test for every instance on the file.
@Suite("SQLite replay ledger")
struct SQLiteReplayLedgerTests {
    static let now: Int64 = 1_800_000_000

    /// An instance: its own connections to the file and its own memory of the records.
    final class Instance: @unchecked Sendable {
        let pool: DatabasePool
        let ledger = SQLiteReplayLedger()

        init(_ path: String) throws {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            pool = try DatabasePool(path: path, configuration: configuration)
        }

        /// One write transaction, ended on the writer queue as the write batcher ends its own.
        func write<T>(_ work: (Database) throws -> T) throws -> T {
            try pool.writeWithoutTransaction { db in
                var value: T?
                do {
                    try db.inTransaction {
                        value = try work(db)
                        return .commit
                    }
                } catch {
                    ledger.transactionEnded(committed: false)
                    throw error
                }
                ledger.transactionEnded(committed: true)
                guard let value else { throw CofferCoreError(.ioFailure, "the transaction returned nothing") }
                return value
            }
        }

        func record(_ identifier: String, expiry: Int64, now: Int64 = SQLiteReplayLedgerTests.now) throws -> Bool {
            try write { db in try ledger.recordFirstUse(identifier, expiringAt: expiry, now: now, in: db) }
        }

        func sweep(now: Int64) throws {
            try write { db in try ledger.sweep(now: now, in: db) }
        }
    }

    /// A migrated database file and two instances on it.
    static func twoInstances() async throws -> (TemporaryDirectory, Instance, Instance) {
        let folder = try TemporaryDirectory()
        let path = folder.path("replay.sqlite")
        let store = try SQLiteRegistrationStore(path: path)
        try await store.migrate()
        try await store.close()
        return (folder, try Instance(path), try Instance(path))
    }

    /// Records `count` new identities in one transaction of `instance`, on a thread of their own (a
    /// transaction of thousands would otherwise hold one of the few threads every other test needs).
    static func fill(_ instance: Instance, count: Int, expiringAt expiry: Int64, now: Int64 = now) async throws {
        try await onADedicatedThread {
            try instance.write { db in
                for _ in 0..<count {
                    _ = try instance.ledger.recordFirstUse(try Self.identifier(), expiringAt: expiry, now: now, in: db)
                }
            }
        }
    }

    /// A replay identity as the verifier makes it (docs/HTTP-SIGNATURES.md): the anchor, then a digest.
    static func identifier(_ anchor: Int64 = now) throws -> String {
        var bytes = withUnsafeBytes(of: (UInt64(bitPattern: anchor) ^ (1 << 63)).bigEndian) { Array($0) }
        bytes += try SecureRandom.bytes(count: 32)
        return Hex.encode(bytes)
    }

    @Test func aRecordMadeThroughOneInstanceIsAReplayAtTheOther() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        let first = try Self.identifier(), second = try Self.identifier()
        #expect(try a.record(first, expiry: Self.now + 300))
        #expect(try !b.record(first, expiry: Self.now + 300), "B reads what A committed")
        #expect(try b.record(second, expiry: Self.now + 300))
        #expect(try !a.record(second, expiry: Self.now + 300), "and A what B committed")
        #expect(try !a.record(first, expiry: Self.now + 300), "and a replay at the same instance")
        _ = folder
    }

    /// The table is read again only when another connection has committed since (SQLite's
    /// `data_version`): an instance alone on its file reads it once, whatever it appends.
    @Test func theTableIsReadOnlyAfterAnotherConnectionCommits() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        for _ in 0..<3 { #expect(try a.record(Self.identifier(), expiry: Self.now + 300)) }
        #expect(a.ledger.catchUpReads == 1, "its own commits are in memory already")
        let theirs = try Self.identifier()
        #expect(try b.record(theirs, expiry: Self.now + 300))
        #expect(try !a.record(theirs, expiry: Self.now + 300), "B's commit is read")
        #expect(a.ledger.catchUpReads == 2)
        try b.sweep(now: Self.now + 301)
        #expect(try a.record(Self.identifier(), expiry: Self.now + 300))
        #expect(a.ledger.catchUpReads == 3, "so is a sweep's that deleted rows, though it adds none")
        _ = folder
    }

    /// The append binds the identifier through SQLite's own calls: its text is stored whole, byte for
    /// byte as GRDB stores it (the empty text too, not NULL), and the other instance reads it back.
    @Test func appendedIdentifiersAreStoredAsTheirText() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        let identifiers = [try Self.identifier(), "", "client-chosen id é", String(repeating: "f", count: 64)]
        for identifier in identifiers { #expect(try a.record(identifier, expiry: Self.now + 300), "\(identifier)") }
        let stored = try await a.pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM coffer_replay_log ORDER BY seq") }
        #expect(stored == identifiers)
        for identifier in identifiers { #expect(try !b.record(identifier, expiry: Self.now + 300), "\(identifier)") }
        _ = folder
    }

    /// An append SQLite refuses is an error thrown to the write, not a record: the transaction rolls
    /// back and memory keeps nothing of it.
    @Test func aRefusedAppendIsAnError() async throws {
        let (folder, a, _) = try await Self.twoInstances()
        let identifier = try Self.identifier()
        try await a.pool.write { db in try db.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON coffer_replay_log BEGIN SELECT RAISE(ABORT, 'refused here'); END") }
        #expect(throws: DatabaseError.self) { try a.record(identifier, expiry: Self.now + 300) }
        try await a.pool.write { db in try db.execute(sql: "DROP TRIGGER refuse") }
        #expect(try a.record(identifier, expiry: Self.now + 300), "the refused append left no record")
        _ = folder
    }

    /// Many writers on two instances race with the same identities: each is accepted exactly once.
    @Test func concurrentInstancesAcceptEachSignatureOnce() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        let identities = try (0..<40).map { _ in try Self.identifier() }
        let accepted = try await withThrowingTaskGroup(of: Int.self) { group in
            for instance in [a, b, a, b] {
                group.addTask {
                    try identities.reduce(0) { count, identity in count + (try instance.record(identity, expiry: Self.now + 300) ? 1 : 0) }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(accepted == identities.count)
        _ = folder
    }

    /// The sweep deletes expired records but never the newest row: new rows keep getting numbers above
    /// every one an instance has already read, so none is skipped when it next catches up. (Deleting the
    /// newest too lets SQLite hand out 1 again, below what B has seen, and B accepts the replay.)
    @Test func aSweptTableStillNumbersNewRecordsAboveWhatInstancesHaveSeen() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        #expect(try a.record(try Self.identifier(), expiry: Self.now + 10))
        #expect(try a.record(try Self.identifier(), expiry: Self.now + 10))
        #expect(try b.record(try Self.identifier(), expiry: Self.now + 10), "B has now seen rows 1 to 3")
        try a.sweep(now: Self.now + 20)
        let remaining = try await a.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM coffer_replay_log") }
        #expect(remaining == 1, "expired, all but the newest row")

        let later = try Self.identifier(Self.now + 30)
        #expect(try a.record(later, expiry: Self.now + 300, now: Self.now + 30))
        #expect(try !b.record(later, expiry: Self.now + 300, now: Self.now + 30), "B reads the row A appended after the sweep")
        _ = folder
    }

    /// The sweep stops at the first live record: live records are never deleted.
    @Test func theSweepKeepsLiveRecords() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        let expired = try Self.identifier(), live = try Self.identifier(), afterLive = try Self.identifier()
        #expect(try a.record(expired, expiry: Self.now + 10))
        #expect(try a.record(live, expiry: Self.now + 300))
        #expect(try a.record(afterLive, expiry: Self.now + 10))
        #expect(try a.record(try Self.identifier(), expiry: Self.now + 300))
        try a.sweep(now: Self.now + 20)
        let ids = try await a.pool.read { try String.fetchAll($0, sql: "SELECT id FROM coffer_replay_log ORDER BY seq") }
        #expect(!ids.contains(expired))
        #expect(ids.contains(live))
        #expect(try !b.record(live, expiry: Self.now + 300, now: Self.now + 20), "a fresh instance reads the live record from the table")
        _ = folder
    }

    /// A transaction that rolls back takes its records with it: in memory as in the table.
    @Test func aRolledBackRecordIsNotARecord() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        let identity = try Self.identifier()
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try a.write { db in
                #expect(try a.ledger.recordFirstUse(identity, expiringAt: Self.now + 300, now: Self.now, in: db))
                #expect(try !a.ledger.recordFirstUse(identity, expiringAt: Self.now + 300, now: Self.now, in: db), "pending records count in their own transaction")
                throw Refused()
            }
        }
        #expect(try a.record(identity, expiry: Self.now + 300), "the rolled-back record is no record, here")
        #expect(try !b.record(identity, expiry: Self.now + 300), "and the other instance finds only the committed one")
        _ = folder
    }

    /// A job that fails after its record takes the record back; the rest of the transaction commits.
    @Test func aForgottenRecordLeavesTheTableAndMemory() async throws {
        let (folder, a, b) = try await Self.twoInstances()
        let kept = try Self.identifier(), forgotten = try Self.identifier()
        try a.write { db in
            #expect(try a.ledger.recordFirstUse(kept, expiringAt: Self.now + 300, now: Self.now, in: db))
            #expect(try a.ledger.recordFirstUse(forgotten, expiringAt: Self.now + 300, now: Self.now, in: db))
            try a.ledger.forget(forgotten, in: db)
        }
        #expect(try a.record(forgotten, expiry: Self.now + 300), "this instance no longer has it")
        #expect(try !b.record(kept, expiry: Self.now + 300))
        _ = folder
    }

    /// Memory drops expired records as it grows, and only those: 20,000 that expire, then 20,000 more
    /// recorded after they have; each of memory's tables is pruned as it doubles, so nearly all of the
    /// first go (a table that the second ones reach too seldom to double keeps its own until they do).
    @Test func pruningMemoryKeepsLiveRecords() async throws {
        let (folder, a, _) = try await Self.twoInstances()
        let live = try Self.identifier()
        #expect(try a.record(live, expiry: Self.now + 1_000))
        try await Self.fill(a, count: 20_000, expiringAt: Self.now + 10)
        #expect(a.ledger.count == 20_001)
        try await Self.fill(a, count: 20_000, expiringAt: Self.now + 1_000, now: Self.now + 20)
        #expect(a.ledger.count < 20_001 + 2_000, "the expired ones are gone from memory: \(a.ledger.count) held")
        #expect(try !a.record(live, expiry: Self.now + 1_000, now: Self.now + 20), "the live one is still a replay")
        _ = folder
    }

    /// No table of memory's holds more than a small share of the records: a Swift dictionary grows by
    /// rehashing all of its entries at once on the writer queue every commit waits for, so one table
    /// of all the live records stalls every signed request as it grows (``ExpiringRecordTable``).
    @Test func noTableInMemoryHoldsMoreThanAShareOfTheRecords() async throws {
        let (folder, a, _) = try await Self.twoInstances()
        try await Self.fill(a, count: 20_000, expiringAt: Self.now + 1_000)
        #expect(a.ledger.count == 20_000)
        // 256 tables: 78 records each on average; a table of more than four times that would mean the
        // records are not spread.
        #expect(a.ledger.largestTableCount <= 20_000 / 64, "the fullest table holds \(a.ledger.largestTableCount)")
        _ = folder
    }

    /// A database from before migration 5 keeps its live records: a request accepted just before the
    /// upgrade is a replay after it.
    @Test func recordsKeyedByIdentityAreCarriedOver() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("old.sqlite")
        let identity = try Self.identifier()
        let earlier = try SecureRandom.bytes(count: 32)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: RegistrationSQL.schemaTable)
            for (index, statements) in RegistrationSQL.migrations.prefix(4).enumerated() {
                for statement in statements {
                    try db.execute(sql: statement.replacingOccurrences(of: "%SERIAL%", with: "INTEGER PRIMARY KEY AUTOINCREMENT"))
                }
                try db.execute(sql: "INSERT INTO coffer_schema (version) VALUES (?)", arguments: [index + 1])
            }
            // Live for a day: in a loaded test run minutes can pass before the records are looked up
            // (in CI on a4caa49 this test took 377 s, and records live for 300 s had expired).
            let live = Int64(Date().timeIntervalSince1970) + 86_400
            try db.execute(sql: "INSERT INTO coffer_replay (id, expires_at) VALUES (?, ?), (?, ?)", arguments: [identity, live, Hex.encode(earlier), live])
        }
        try queue.close()

        let store = try SQLiteRegistrationStore(path: path)
        try await store.migrate()
        let now = Int64(Date().timeIntervalSince1970)
        #expect(try await !store.recordFirstUse(of: identity, expiringAt: now + 300, now: now))
        #expect(try await !store.recordFirstUse(of: "800000006b49d1f0" + Hex.encode(earlier), expiringAt: now + 300, now: now), "a 1.0.0 record too")
        #expect(try await store.recordFirstUse(of: try Self.identifier(), expiringAt: now + 300, now: now))
        try await store.close()
    }

    @Test func identitiesArePackedWhenTheyAreHexAndKeptAsTextOtherwise() {
        let current = String(repeating: "0123456789abcdef", count: 5)
        let earlier = String(current.dropFirst(16))
        guard case .bytes = ReplayIdentity(current), case .bytes = ReplayIdentity(earlier) else {
            Issue.record("hex identities of 80 and 64 digits are packed")
            return
        }
        #expect(ReplayIdentity(current) != ReplayIdentity(earlier), "the digit count is part of the identity")
        #expect(ReplayIdentity(current).earlierForm == ReplayIdentity(earlier), "the 1.0.0 form, as HTTPReplayRecord.earlierIdentifier(of:) gives it")
        #expect(ReplayIdentity(earlier).earlierForm == nil && ReplayIdentity("abc").earlierForm == nil)
        #expect(ReplayIdentity(current) != ReplayIdentity(String(current.dropLast()) + "e"))
        #expect(ReplayIdentity(String(current.prefix(79)) + "F") == .text(String(current.prefix(79)) + "F"), "capitals are not this version's digits")
        #expect(ReplayIdentity("abc") == .text("abc"))
        #expect(ReplayIdentity(current + "00") == .text(current + "00"))
    }
}
