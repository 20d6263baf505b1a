@testable import CofferHTTPSignatures
import Testing

/// The tables replay records are kept in, held to exact counts: what a table holds, when it is pruned,
/// and that pruning drops the expired records and only those.
@Suite("Expiring record tables")
struct ExpiringRecordTableTests {
    /// A key whose hash is the same for every value, so that every key lands in one table and the
    /// pruning of that table can be followed exactly.
    struct OneTableKey: Hashable {
        let id: Int
        func hash(into hasher: inout Hasher) { hasher.combine(0) }
    }

    @Test func countFollowsNewKeysNotReplacements() {
        var table = ExpiringRecordTable<Int, Int64>()
        #expect(table.updateValue(10, forKey: 1) == nil)
        #expect(table.updateValue(20, forKey: 2) == nil)
        #expect(table.updateValue(30, forKey: 1) == 10, "the record replaced")
        #expect(table.count == 2)
        #expect(table[1] == 30 && table[2] == 20 && table[3] == nil)
    }

    /// A table is pruned when it holds 64 records, then when it holds twice what the last pruning left
    /// (never fewer than 64), and a pruning keeps exactly the records still live.
    @Test func aTableIsPrunedAsItDoublesAndKeepsExactlyTheLiveRecords() {
        var table = ExpiringRecordTable<OneTableKey, Int64>()
        let key = OneTableKey(id: -1)
        func add(_ ids: Range<Int>, expiringAt expiry: Int64) {
            for id in ids { table.updateValue(expiry, forKey: OneTableKey(id: id)) }
        }
        add(0..<63, expiringAt: 10)
        table.pruneIfDue(tableOf: key) { $1 > 20 }
        #expect(table.count == 63, "63 records: not yet due")
        add(63..<100, expiringAt: 1_000)
        table.pruneIfDue(tableOf: key) { $1 > 20 }
        #expect(table.count == 37, "due at 64: the 63 expired records went, the 37 live stayed")
        #expect(table[OneTableKey(id: 0)] == nil && table[OneTableKey(id: 99)] == 1_000)
        add(100..<126, expiringAt: 1_000)
        table.pruneIfDue(tableOf: key) { $1 > 2_000 }
        #expect(table.count == 63, "next due at max(64, 2 × 37) = 74")
        add(126..<137, expiringAt: 1_000)
        table.pruneIfDue(tableOf: key) { $1 > 2_000 }
        #expect(table.count == 0, "74 records: due, and all expired by then")
    }

    @Test func pruningEveryTableKeepsExactlyTheLiveRecords() {
        var table = ExpiringRecordTable<Int, Int64>()
        for id in 0..<5_000 { table.updateValue(id % 10 == 0 ? 1_000 : 10, forKey: id) }
        table.pruneAll { $1 > 20 }
        #expect(table.count == 500)
        #expect((0..<5_000).allSatisfy { (table[$0] != nil) == ($0 % 10 == 0) })
    }
}
