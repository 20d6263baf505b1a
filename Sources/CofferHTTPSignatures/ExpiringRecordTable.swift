/// Replay records by key, in 256 hash tables chosen by the top bits of the key's hash, each pruned of
/// expired records on its own as it grows: what ``InMemoryReplayCache`` and `coffer serve`'s SQLite
/// ledger keep in memory.
///
/// Why not one dictionary: a Swift dictionary grows, and is filtered, by rehashing all of its entries
/// at once, while every request waiting on the cache (the actor, or the database's one writer) waits.
/// With a 300 s window of records at a few thousand signed requests a second, that is hundreds of
/// thousands of entries: one rehash of 200,000 took 34 ms on its own, and servers holding about
/// 800,000 records answered a run's slowest requests ~95 ms late (docs/PERFORMANCE.md). Split 256
/// ways, no single rehash holds more than a 256th of the records.
///
/// Each table's dictionary places its keys by the low bits of its own seeded hash, so the keys that
/// share a table do not crowd its buckets.
@usableFromInline
package struct ExpiringRecordTable<Key: Hashable, Record> {
    /// The least count at which a table is next pruned.
    @usableFromInline static var minimumPrune: Int { 64 }
    @usableFromInline var tables: [[Key: Record]]
    @usableFromInline var nextPrune: [Int]
    /// How many records all tables hold.
    @usableFromInline package private(set) var count = 0

    /// An empty table.
    @inlinable package init() {
        tables = Array(repeating: [:], count: 256)
        nextPrune = Array(repeating: Self.minimumPrune, count: 256)
    }

    @inlinable static func table(of key: Key) -> Int {
        Int(truncatingIfNeeded: UInt(bitPattern: key.hashValue) >> (UInt.bitWidth - 8))
    }

    /// The record of `key`, if one is held.
    @inlinable package subscript(key: Key) -> Record? {
        tables[Self.table(of: key)][key]
    }

    /// Holds `record` for `key`; the record it replaces, if any.
    @inlinable @discardableResult
    package mutating func updateValue(_ record: Record, forKey key: Key) -> Record? {
        let old = tables[Self.table(of: key)].updateValue(record, forKey: key)
        if old == nil { count += 1 }
        return old
    }

    /// Drops from `key`'s table the records `isLive` refuses, when that table has doubled since it
    /// was last pruned (and holds at least 64): the work of one prune is a table's, not the whole's.
    @inlinable package mutating func pruneIfDue(tableOf key: Key, keeping isLive: (Key, Record) -> Bool) {
        let table = Self.table(of: key)
        guard tables[table].count >= nextPrune[table] else { return }
        prune(table, keeping: isLive)
    }

    /// Drops from every table the records `isLive` refuses.
    @inlinable package mutating func pruneAll(keeping isLive: (Key, Record) -> Bool) {
        for table in tables.indices { prune(table, keeping: isLive) }
    }

    @inlinable mutating func prune(_ table: Int, keeping isLive: (Key, Record) -> Bool) {
        let before = tables[table].count
        tables[table] = tables[table].filter { isLive($0.key, $0.value) }
        count -= before - tables[table].count
        nextPrune[table] = max(Self.minimumPrune, tables[table].count * 2)
    }

    /// How many records the fullest table holds (for tests).
    package var largestTableCount: Int { tables.map(\.count).max() ?? 0 }
}
