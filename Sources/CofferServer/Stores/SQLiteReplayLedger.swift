import CofferHTTPSignatures
import GRDB
import GRDBSQLite

/// The replay records of one SQLite database: an append-only table shared by every instance on the
/// file, and in this process's memory every live record of it, so that a signature's first-use test
/// is a look-up in memory and an append at the table's end (docs/HTTP-SIGNATURES.md, "Replay
/// protection").
///
/// Why: keyed by identity (`coffer_replay`, migration 1), each record went to its own page of an
/// index, among the records of its second, and every page a transaction touches is a 4 KiB frame in
/// the WAL and again at the checkpoint. Appended in commit order (`coffer_replay_log`, migration 5),
/// the records of a transaction share the table's last page.
///
/// Why it stays atomic across instances: the table is the record of truth. The first replay test in
/// a write transaction reads the rows committed since this process last looked (`seq` above the last
/// seen), and SQLite's one writer holds the write lock from `BEGIN IMMEDIATE` to `COMMIT`, so no other
/// instance can append between that read, the look-up and the append. A new row's `seq` is one more
/// than the largest in the table, and the sweep never deletes the row holding the largest, so numbers
/// only grow and no committed row hides below what an instance has seen. A record enters memory only
/// once its transaction has committed; until then it is pending, and found by the later jobs of the
/// same transaction.
///
/// Used only inside write jobs and the write batcher's end-of-transaction call, all on GRDB's writer
/// queue, one at a time: it needs no lock of its own.
final class SQLiteReplayLedger: @unchecked Sendable {
    /// A record: when it stops counting, and its row in `coffer_replay_log`.
    struct Record {
        let expiry: Int64
        let seq: Int64
    }

    /// Live (or not yet pruned) committed records by identity, in tables of their own
    /// (``ExpiringRecordTable``: one dictionary of them all stalled the writer as it grew).
    private var records = ExpiringRecordTable<ReplayIdentity, Record>()
    /// How many of them are in Coffer 1.0.0's form.
    private var earlierForms = 0
    /// Appended by this transaction, not yet committed.
    private var pending: [ReplayIdentity: Record] = [:]
    /// The highest `seq` read or committed.
    private var lastSeen: Int64 = 0
    /// Whether the current transaction has read the rows other instances appended.
    private var caughtUp = false
    /// SQLite's `data_version` when this instance last read the table. It changes when another
    /// connection commits to the file (never for this one's own commits, which memory has already), so
    /// while it stands there is nothing new to read.
    private var readAtVersion: Int64?
    /// How many times the table was read for other connections' records (for tests).
    private(set) var catchUpReads = 0
    /// Whether this transaction appended a record in Coffer 1.0.0's form (64 digits).
    private var pendingHoldsEarlierForms = false
    /// Whether memory may hold a record in Coffer 1.0.0's form: while not, a signature's earlier form
    /// is not looked up.
    private var mayHoldEarlierForms: Bool { pendingHoldsEarlierForms || earlierForms > 0 }

    /// How many records memory holds (live, or expired and not yet pruned).
    var count: Int { records.count }
    /// How many records the fullest of memory's tables holds (for tests: see ``ExpiringRecordTable``).
    var largestTableCount: Int { records.largestTableCount }

    /// Records `identifier` as used until `expiry` unless a live record has it or its Coffer 1.0.0
    /// form; false for a replay. Inside a write job.
    func recordFirstUse(_ identifier: String, expiringAt expiry: Int64, now: Int64, in db: Database) throws -> Bool {
        try catchUp(db)
        let identity = ReplayIdentity(identifier)
        // Expired as the table's sweep counts expiry: by the clock of the request being checked.
        var earlierDropped = 0
        records.pruneIfDue(tableOf: identity) { identity, record in
            if record.expiry > now { return true }
            if identity.isEarlierForm { earlierDropped += 1 }
            return false
        }
        earlierForms -= earlierDropped
        if isLive(identity, now: now) { return false }
        if mayHoldEarlierForms, let earlier = identity.earlierForm, isLive(earlier, now: now) { return false }
        let seq = try Self.append(identifier, expiringAt: expiry, in: db)
        if identity.isEarlierForm { pendingHoldsEarlierForms = true }
        pending[identity] = Record(expiry: expiry, seq: seq)
        return true
    }

    /// Appends a row through SQLite's own calls on the writer's cached statement (GRDB's arguments
    /// cost more than the insert); the new row's `seq`.
    private static func append(_ identifier: String, expiringAt expiry: Int64, in db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(sql: appendStatement).sqliteStatement
        sqlite3_reset(statement)
        // Both parameters are bound on every call; the bindings are left in place (not cleared) so
        // that SQLite reuses the identifier's buffer instead of allocating one per append.
        defer { sqlite3_reset(statement) }
        // SQLITE_TRANSIENT: SQLite copies the text before the call returns. An empty buffer may have no
        // address, which SQLite would bind as NULL: the empty text is bound by its C literal.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        var identifier = identifier
        var code = identifier.isEmpty
            ? sqlite3_bind_text(statement, 1, "", 0, transient)
            : identifier.withUTF8 { text in
                text.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(statement, 1, $0.baseAddress, Int32($0.count), transient) }
            }
        if code == SQLITE_OK { code = sqlite3_bind_int64(statement, 2, expiry) }
        if code == SQLITE_OK { code = sqlite3_step(statement) }
        guard code == SQLITE_DONE else { throw sqliteError(code, in: db) }
        return sqlite3_last_insert_rowid(db.sqliteConnection)
    }

    /// SQLite's `data_version` through its own calls on the cached statement (GRDB's cursor costs
    /// more than the pragma).
    private static func dataVersion(in db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(sql: dataVersionStatement).sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW else { throw sqliteError(code, in: db) }
        return sqlite3_column_int64(statement, 0)
    }

    private static func sqliteError(_ code: Int32, in db: Database) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) })
    }

    /// Takes back a record this transaction appended (its job failed): the signature counts as unused.
    func forget(_ identifier: String, in db: Database) throws {
        let identity = ReplayIdentity(identifier)
        guard let record = pending[identity] else { return }
        // Memory follows the table: a row that could not be deleted stays a record (the signature
        // counts as used), here as in every instance that reads it.
        try db.cachedStatement(sql: Self.remove).execute(arguments: [record.seq])
        pending[identity] = nil
    }

    /// Deletes the table's expired records up to its first live one (records are appended as they are
    /// accepted, so those in front expire first; one that lives longer holds back the sweep of those
    /// after it until it expires), and never the last row. Memory drops its own as it grows.
    func sweep(now: Int64, in db: Database) throws {
        try db.execute(sql: Self.sweepStatement, arguments: [now])
    }

    /// The write batcher's call after each transaction: what was pending is now shared, or gone.
    func transactionEnded(committed: Bool) {
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingHoldsEarlierForms = false
            caughtUp = false
        }
        guard committed else { return }
        for (identity, record) in pending {
            remember(record, as: identity)
            lastSeen = max(lastSeen, record.seq)
        }
    }

    /// Holds a committed record in memory, counting those of the 1.0.0 form.
    private func remember(_ record: Record, as identity: ReplayIdentity) {
        if records.updateValue(record, forKey: identity) == nil, identity.isEarlierForm { earlierForms += 1 }
    }

    private func isLive(_ identity: ReplayIdentity, now: Int64) -> Bool {
        if !pending.isEmpty, let record = pending[identity], record.expiry > now { return true }
        if let record = records[identity], record.expiry > now { return true }
        return false
    }

    /// Reads what other instances (or this one's earlier life) appended, once per transaction, and only
    /// when another connection has committed since the last read. Inside the write transaction: no
    /// connection can commit between the version's read and the rows'.
    private func catchUp(_ db: Database) throws {
        guard !caughtUp else { return }
        let version = try Self.dataVersion(in: db)
        guard version != readAtVersion else {
            caughtUp = true
            return
        }
        let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.since), arguments: [lastSeen])
        while let row = try rows.next() {
            let checked = row.checked("coffer_replay_log")
            let seq: Int64 = try checked(0)
            let identity = ReplayIdentity(try checked(1, as: String.self))
            let expiry: Int64 = try checked(2)
            lastSeen = max(lastSeen, seq)
            // A later record of the same identity (a renewal after expiry) replaces an earlier one.
            if let known = records[identity], known.seq > seq { continue }
            remember(Record(expiry: expiry, seq: seq), as: identity)
        }
        readAtVersion = version
        catchUpReads += 1
        caughtUp = true
    }

    /// Without an index on `expires_at` (which would take a page of its own in every transaction): the
    /// first live row is found by reading from the front, through the rows about to go.
    private static let sweepStatement = """
        DELETE FROM coffer_replay_log WHERE seq < COALESCE(
            (SELECT seq FROM coffer_replay_log WHERE expires_at > ?1 ORDER BY seq LIMIT 1),
            (SELECT max(seq) FROM coffer_replay_log))
        """
    private static let dataVersionStatement = "PRAGMA data_version"
    private static let since = "SELECT seq, id, expires_at FROM coffer_replay_log WHERE seq > ? ORDER BY seq"
    private static let appendStatement = "INSERT INTO coffer_replay_log (id, expires_at) VALUES (?, ?)"
    private static let remove = "DELETE FROM coffer_replay_log WHERE seq = ?"
}

/// A replay identity as memory keeps it: the 80 hex digits of this version's identities and the 64 of
/// Coffer 1.0.0's as their bytes, inline (48 bytes a key instead of a string's 80-byte buffer on the
/// heap); anything else a caller records, as its text.
enum ReplayIdentity: Hashable {
    case bytes(UInt64, UInt64, UInt64, UInt64, UInt64, digits: UInt8)
    case text(String)

    init(_ identifier: String) {
        // Over the string's own UTF-8 buffer: iterating `identifier.utf8` costs an index step per byte.
        var text = identifier
        self = text.withUTF8 { Self.packed($0) } ?? .text(identifier)
    }

    /// 80 or 64 lowercase hex digits packed 16 to a word, the first digit in a word's top four bits;
    /// nil for any other text.
    private static func packed(_ digits: UnsafeBufferPointer<UInt8>) -> ReplayIdentity? {
        guard digits.count == 80 || digits.count == 64 else { return nil }
        func word(_ index: Int) -> UInt64? {
            let start = index * 16
            guard start < digits.count else { return 0 }
            var word: UInt64 = 0
            for byte in digits[start..<(start + 16)] {
                let value: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte &- UInt8(ascii: "a") &+ 10
                default: return nil
                }
                word = word << 4 | UInt64(value)
            }
            return word
        }
        guard let a = word(0), let b = word(1), let c = word(2), let d = word(3), let e = word(4) else { return nil }
        return .bytes(a, b, c, d, e, digits: UInt8(digits.count))
    }

    /// The identity Coffer 1.0.0 gave the same signature (`HTTPReplayRecord.earlierIdentifier(of:)`:
    /// the 64 digits after the anchor's 16), taken from the packed words without a second pass over
    /// the text; nil for anything but this version's 80 digits.
    var earlierForm: ReplayIdentity? {
        guard case .bytes(_, let b, let c, let d, let e, digits: 80) = self else { return nil }
        return .bytes(b, c, d, e, 0, digits: 64)
    }

    /// Whether this is in Coffer 1.0.0's form (64 digits), which ``earlierForm`` can name.
    var isEarlierForm: Bool {
        if case .bytes(_, _, _, _, _, digits: 64) = self { return true }
        return false
    }
}
