// One file on purpose: the keychain's SQLite store, its schema and migrations beside every statement
// and transaction that uses them, read together against docs/KEYCHAIN.md's schema; the lookup
// connections are in SQLiteReaders.swift.

import CofferCore
import Foundation
import GRDB
import GRDBSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The embedded store: one SQLite file through GRDB (schema in docs/KEYCHAIN.md). WAL mode so that
/// readers never wait for a writer; `synchronous=FULL` so an add that returned is on disk; a busy
/// timeout so several processes share the file. The file is created 0600 in a 0700 folder.
final class SQLiteStorage: ItemStorage, @unchecked Sendable {
    let path: String
    private let pool: DatabasePool
    private let readers: SQLiteReaders

    static let schemaVersion = 1

    /// Opens (creating when `create` is true) the database at `path`.
    init(path: String, create: Bool) throws(KeychainError) {
        self.path = path
        readers = SQLiteReaders(path: path)
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists && !create {
            throw KeychainError(.noSuchKeychain, "no keychain at '\(path)'")
        }
        if !exists {
            try Self.prepareFile(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Reads through a memory map skip a read(2) copy per page (a third of a read's cost).
            // secure_delete: freed and overwritten content (an old wrapped master key, a deleted item's
            // sealed secret) is zeroed in the file rather than left in free pages.
            try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA mmap_size = 268435456; PRAGMA secure_delete = ON")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in
                try db.execute(sql: """
                    CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL);
                    CREATE TABLE IF NOT EXISTS items (
                        id INTEGER PRIMARY KEY,
                        class TEXT NOT NULL,
                        identity BLOB NOT NULL UNIQUE,
                        service TEXT, account TEXT,
                        server TEXT, protocol TEXT, port INTEGER, path TEXT,
                        application_tag BLOB, application_label BLOB, key_class TEXT, key_type TEXT, key_size INTEGER,
                        issuer BLOB, serial_number BLOB,
                        label TEXT, comment TEXT, access_group TEXT,
                        synchronizable INTEGER NOT NULL,
                        accessibility TEXT NOT NULL,
                        application_password INTEGER NOT NULL,
                        user_presence INTEGER NOT NULL,
                        created REAL NOT NULL, modified REAL NOT NULL,
                        secret BLOB NOT NULL
                    );
                    CREATE INDEX IF NOT EXISTS items_by_service ON items(class, service, account);
                    CREATE INDEX IF NOT EXISTS items_by_tag ON items(class, application_tag);
                    CREATE INDEX IF NOT EXISTS items_by_server ON items(class, server, account);
                    CREATE TABLE IF NOT EXISTS deletions (identity BLOB PRIMARY KEY, deleted REAL NOT NULL);
                    """)
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                if version == 0 {
                    try db.execute(sql: "PRAGMA user_version = \(Self.schemaVersion)")
                } else if version > Self.schemaVersion {
                    throw KeychainError(.badParameter, "the keychain at '\(path)' was written by a newer Coffer (schema \(version)); upgrade coffer")
                }
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw Self.wrap(error, path: path)
        }
    }

    /// Creates the folder (0700) and an empty file (0600) so that SQLite never creates it with the umask.
    private static func prepareFile(_ path: String) throws(KeychainError) {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw KeychainError(.ioFailure, "cannot create the folder '\(folder)': \(error.localizedDescription)", underlying: error)
            }
        }
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw KeychainError(.ioFailure, "cannot create '\(path)': \(String(cString: strerror(errno)))")
        }
        fchmod(descriptor, 0o600)
        close(descriptor)
        // The new name must survive a crash as the keychain's writes do (they are synchronous=FULL).
        do {
            try syncFolder(folder.isEmpty ? "." : folder)
        } catch {
            throw KeychainError(.ioFailure, error.reason)
        }
    }

    static func wrap(_ error: any Error, path: String) -> KeychainError {
        if let error = error as? KeychainError { return error }
        if let error = error as? DatabaseError {
            if error.resultCode == .SQLITE_CONSTRAINT {
                return MemoryStorage.duplicate
            }
            if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                return KeychainError(.ioFailure, "the keychain '\(path)' stayed busy for 10 s (another process holds it); try again")
            }
            if error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
                return KeychainError(.dataCorrupted, "'\(path)' is not a keychain database, or it is damaged")
            }
            return KeychainError(.ioFailure, "keychain database '\(path)': \(error.message ?? "\(error.resultCode)")")
        }
        return KeychainError(.ioFailure, "keychain database '\(path)': \(error)", underlying: error)
    }

    private func read<T>(_ body: (Database) throws -> T) throws(KeychainError) -> T {
        do { return try pool.read(body) } catch { throw Self.wrap(error, path: path) }
    }

    private func write<T>(_ body: (Database) throws -> T) throws(KeychainError) -> T {
        do { return try pool.write(body) } catch { throw Self.wrap(error, path: path) }
    }

    // MARK: Header

    func loadHeader() throws(KeychainError) -> KeychainCrypto.Header? {
        let data = try read { db in try Data.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'header'") }
        guard let data else { return nil }
        return try KeychainCrypto.Header(encoded: Array(data))
    }

    func createHeader(_ header: KeychainCrypto.Header) throws(KeychainError) {
        try write { db in
            if try Data.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'header'") != nil {
                throw KeychainError(.duplicateKeychain, "a keychain already exists at '\(path)'")
            }
            try db.execute(sql: "INSERT INTO meta (name, value) VALUES ('header', ?)", arguments: [Data(header.encoded)])
        }
    }

    // MARK: Items

    private static let columns = """
        id, class, service, account, server, protocol, port, path, application_tag, application_label, key_class, key_type, key_size,
        issuer, serial_number, label, comment, access_group, synchronizable, accessibility, application_password, user_presence,
        created, modified, secret
        """

    func insert(_ item: KeychainItem, sealed: [UInt8]) throws(KeychainError) {
        _ = try insertAll([(item, sealed)], skippingExisting: false)
    }

    func insertAll(_ rows: [(KeychainItem, [UInt8])], skippingExisting: Bool) throws(KeychainError) -> Int {
        try insertAll(rows, skippingExisting: skippingExisting, deletions: nil).inserted
    }

    func insertAll(_ rows: [(KeychainItem, [UInt8])], skippingExisting: Bool, deletions check: DeletionCheck?) throws(KeychainError) -> InsertCount {
        try write { db in
            var count = InsertCount()
            for (item, sealed) in rows {
                let identity = Data(item.identity)
                if skippingExisting {
                    let existing = try db.cachedStatement(sql: "SELECT 1 FROM items WHERE identity = ?")
                    if try Int.fetchOne(existing, arguments: [identity]) != nil { continue }
                }
                if let check, let deletedAt = try Double.fetchOne(db.cachedStatement(sql: "SELECT deleted FROM deletions WHERE identity = ?"), arguments: [identity]),
                   check.isLater(deletedAt) {
                    guard check.skipping else { throw check.refusal(item, deletedAt: deletedAt) }
                    count.skippedDeleted += 1
                    continue
                }
                try Self.insert(db, item, sealed: sealed, id: nil)
                count.inserted += 1
            }
            return count
        }
    }

    /// Inserts one row; `id` nil lets SQLite assign the next one, an id keeps a rewritten row's place.
    private static func insert(_ db: Database, _ item: KeychainItem, sealed: [UInt8], id: Int64?) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO items (id, class, identity, service, account, server, protocol, port, path, application_tag, application_label,
                key_class, key_type, key_size, issuer, serial_number, label, comment, access_group, synchronizable, accessibility,
                application_password, user_presence, created, modified, secret)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try statement.execute(arguments: [id] + arguments(item, sealed: sealed))
        // The identity exists again: its deletion no longer keeps an import from bringing it back.
        try db.cachedStatement(sql: "DELETE FROM deletions WHERE identity = ?").execute(arguments: [Data(item.identity)])
    }

    /// Remembers that `identity` was deleted now.
    private static func recordDeletion(_ db: Database, identity: [UInt8]) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO deletions (identity, deleted) VALUES (?, ?)")
            .execute(arguments: [Data(identity), Date().timeIntervalSince1970])
    }

    private static func arguments(_ item: KeychainItem, sealed: [UInt8]) -> StatementArguments {
        let created = (item.creationDate ?? Date()).timeIntervalSince1970
        let modified = (item.modificationDate ?? Date()).timeIntervalSince1970
        let values: [(any DatabaseValueConvertible)?] = [
            item.itemClass.rawValue, Data(item.identity), item.service, item.account, item.server, item.protocol, item.port, item.path,
            item.applicationTag.map { Data($0) }, item.applicationLabel.map { Data($0) }, item.keyClass?.rawValue, item.keyType,
            item.keySizeInBits, item.issuer.map { Data($0) }, item.serialNumber.map { Data($0) }, item.label, item.comment,
            item.accessGroup, item.synchronizable, item.accessibility.rawValue, item.hasApplicationPassword,
            item.requiresUserPresence, created, modified, Data(sealed),
        ]
        return StatementArguments(values)
    }

    /// The attributes a query can filter on, in column order; a query's shape is the set it uses.
    private static let filterColumns = [
        "service", "account", "server", "protocol", "port", "path", "application_tag", "application_label", "key_class",
        "key_type", "issuer", "serial_number", "label", "access_group", "synchronizable", "accessibility",
    ]

    /// The values of the attributes a query sets, by position in ``filterColumns`` (nil when unset).
    private static func filterValues(_ query: KeychainQuery) -> [SQLValue?] {
        [
            query.service.map(SQLValue.text), query.account.map(SQLValue.text), query.server.map(SQLValue.text),
            query.protocol.map(SQLValue.text), query.port.map { .integer(Int64($0)) }, query.path.map(SQLValue.text),
            query.applicationTag.map(SQLValue.blob), query.applicationLabel.map(SQLValue.blob),
            query.keyClass.map { .text($0.rawValue) }, query.keyType.map(SQLValue.text), query.issuer.map(SQLValue.blob),
            query.serialNumber.map(SQLValue.blob), query.label.map(SQLValue.text), query.accessGroup.map(SQLValue.text),
            query.synchronizable.map { .integer($0 ? 1 : 0) }, query.accessibility.map { .text($0.rawValue) },
        ]
    }

    /// The SQL of a query shape (which attributes are set): its WHERE clause, and the SELECT of
    /// ``columns`` with a bound LIMIT. Built once per shape, so a lookup neither builds SQL nor hashes
    /// a new string, and SQLite's prepared statement is reused.
    private struct ShapeSQL {
        let clause: String
        let select: String
    }

    /// A query's shape SQL and the values its WHERE clause binds.
    private static func filter(_ query: KeychainQuery) -> (ShapeSQL, [SQLValue]) {
        var shape = 0
        var values: [SQLValue] = [.text(query.itemClass.rawValue)]
        for (index, value) in filterValues(query).enumerated() {
            guard let value else { continue }
            shape |= 1 << index
            values.append(value)
        }
        return (sql(forShape: shape), values)
    }

    private static let shapes = NSLock()
    nonisolated(unsafe) private static var sqlByShape: [Int: ShapeSQL] = [:]

    private static func sql(forShape shape: Int) -> ShapeSQL {
        shapes.withLock {
            if let sql = sqlByShape[shape] { return sql }
            let columns = filterColumns.indices.filter { shape & (1 << $0) != 0 }.map { "\(filterColumns[$0]) = ?" }
            let clause = (["class = ?"] + columns).joined(separator: " AND ")
            let sql = ShapeSQL(clause: clause, select: "SELECT \(Self.columns) FROM items WHERE \(clause) ORDER BY id LIMIT ?")
            sqlByShape[shape] = sql
            return sql
        }
    }

    /// Decodes the current row of a statement selecting ``columns``, reading SQLite's column values
    /// directly by position (GRDB's generic row decoding was half the cost of a read).
    private static func decodeRow(_ statement: SQLiteStatement) throws(KeychainError) -> ItemRow {
        let row = ColumnReader(statement: statement)
        guard let itemClass = row.text(1).flatMap(ItemClass.init(rawValue:)),
              let accessibility = row.text(19).flatMap(Accessibility.init(rawValue:)) else {
            throw KeychainError(.dataCorrupted, "a keychain row has an unknown class or accessibility; the file was changed outside Coffer")
        }
        var item = KeychainItem(itemClass: itemClass, accessibility: accessibility)
        item.service = row.text(2)
        item.account = row.text(3)
        item.server = row.text(4)
        item.protocol = row.text(5)
        item.port = row.integer(6)
        item.path = row.text(7)
        item.applicationTag = row.blob(8)
        item.applicationLabel = row.blob(9)
        item.keyClass = row.text(10).flatMap(KeyClass.init(rawValue:))
        item.keyType = row.text(11)
        item.keySizeInBits = row.integer(12)
        item.issuer = row.blob(13)
        item.serialNumber = row.blob(14)
        item.label = row.text(15)
        item.comment = row.text(16)
        item.accessGroup = row.text(17)
        item.synchronizable = row.integer(18) != 0
        item.hasApplicationPassword = row.integer(20) != 0
        item.requiresUserPresence = row.integer(21) != 0
        item.creationDate = Date(timeIntervalSince1970: row.real(22))
        item.modificationDate = Date(timeIntervalSince1970: row.real(23))
        guard let id = row.integer64(0), let sealed = row.blob(24) else {
            throw KeychainError(.dataCorrupted, "a keychain row has no id or no secret; the file was changed outside Coffer")
        }
        return ItemRow(id: id, item: item, sealed: sealed)
    }

    /// The SELECT of a query and the values it binds.
    private static func select(_ query: KeychainQuery, limit: Int?) -> (String, [SQLValue]) {
        let (sql, values) = filter(query)
        // A negative LIMIT is no limit in SQLite.
        return (sql.select, values + [.integer(Int64(limit ?? -1))])
    }

    /// Runs a SELECT of ``columns`` and decodes its rows, binding and stepping through SQLite's own
    /// calls (GRDB's generic arguments and rows cost more than the lookup itself).
    private static func fetch(_ handle: SQLiteStatement, connection: SQLiteConnection?, values: [SQLValue] = []) throws -> [ItemRow] {
        func failure(_ code: Int32) -> DatabaseError { sqliteError(code, connection: connection) }
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        defer { sqlite3_reset(handle) }
        for (index, value) in values.enumerated() {
            let code = value.bind(to: handle, at: Int32(index + 1))
            guard code == SQLITE_OK else { throw failure(code) }
        }
        var rows: [ItemRow] = []
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return rows }
            guard code == SQLITE_ROW else { throw failure(code) }
            rows.append(try decodeRow(handle))
        }
    }

    /// Finds rows inside a write transaction (updates, rotation), on the writer's connection.
    private static func find(_ db: Database, _ query: KeychainQuery?, limit: Int?) throws -> [ItemRow] {
        let (sql, values) = query.map { select($0, limit: limit) } ?? ("SELECT \(columns) FROM items ORDER BY id", [])
        return try fetch(db.cachedStatement(sql: sql).sqliteStatement, connection: db.sqliteConnection, values: values)
    }

    func find(_ query: KeychainQuery, limit: Int?) throws(KeychainError) -> [ItemRow] {
        // One SELECT is atomic by itself in WAL mode: no BEGIN/COMMIT around it.
        let (sql, values) = Self.select(query, limit: limit)
        do {
            return try readers.withConnection { connection in
                try Self.fetch(connection.statement(sql), connection: connection.handle, values: values)
            }
        } catch {
            throw Self.wrap(error, path: path)
        }
    }

    func update(_ query: KeychainQuery, _ transform: (ItemRow) throws(KeychainError) -> ItemRow) throws(KeychainError) -> Int {
        try write { db in
            let rows = try Self.find(db, query, limit: nil)
            // Delete all first, so that swapping identities among the matched rows is not a false duplicate.
            var changed: [ItemRow] = []
            for row in rows { changed.append(try transform(row)) }
            for row in changed { try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [row.id]) }
            // An identity an update gave up is gone as a deletion would have made it.
            let kept = Set(changed.map(\.item.identity))
            for row in rows where !kept.contains(row.item.identity) { try Self.recordDeletion(db, identity: row.item.identity) }
            for row in changed { try Self.insert(db, row.item, sealed: row.sealed, id: row.id) }
            return changed.count
        }
    }

    func delete(_ query: KeychainQuery) throws(KeychainError) -> Int {
        try write { db in
            let (sql, values) = Self.filter(query)
            let arguments = StatementArguments(values.map(\.databaseValue))
            try db.execute(
                sql: "INSERT OR REPLACE INTO deletions (identity, deleted) SELECT identity, \(Date().timeIntervalSince1970) FROM items WHERE \(sql.clause)",
                arguments: arguments
            )
            try db.execute(sql: "DELETE FROM items WHERE \(sql.clause)", arguments: arguments)
            return db.changesCount
        }
    }

    func rewrite(header: KeychainCrypto.Header, _ reseal: ((ItemRow) throws(KeychainError) -> [UInt8])?) throws(KeychainError) {
        try write { db in
            if let reseal {
                let rows = try Self.find(db, nil, limit: nil)
                for row in rows {
                    try db.execute(sql: "UPDATE items SET secret = ? WHERE id = ?", arguments: [Data(try reseal(row)), row.id])
                }
            }
            try db.execute(sql: "UPDATE meta SET value = ? WHERE name = 'header'", arguments: [Data(header.encoded)])
        }
        // The old pages are still in the main file until a checkpoint copies the new ones over them; then
        // the log is truncated, so neither file keeps the old header or the old sealed secrets.
        do {
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch {
            throw Self.wrap(error, path: path)
        }
    }
}

/// Typed reads of the current row's columns, by position. A NULL reads as nil; a value of another type
/// is converted by SQLite's own rules (the schema fixes each column's type).
private struct ColumnReader {
    let statement: SQLiteStatement

    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    func text(_ index: Int32) -> String? {
        guard !isNull(index), let bytes = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func blob(_ index: Int32) -> [UInt8]? {
        guard !isNull(index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    func integer64(_ index: Int32) -> Int64? { isNull(index) ? nil : sqlite3_column_int64(statement, index) }

    func integer(_ index: Int32) -> Int? { integer64(index).map { Int(truncatingIfNeeded: $0) } }

    func real(_ index: Int32) -> Double { sqlite3_column_double(statement, index) }
}

/// A value bound to a filter's parameter.
private enum SQLValue {
    case text(String)
    case integer(Int64)
    case blob([UInt8])

    func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 {
        // SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        switch self {
        case .text(let text):
            return text.utf8CString.withUnsafeBufferPointer { sqlite3_bind_text(statement, index, $0.baseAddress, -1, transient) }
        case .integer(let value):
            return sqlite3_bind_int64(statement, index, value)
        case .blob(let bytes):
            return bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), transient) }
        }
    }

    var databaseValue: DatabaseValue {
        switch self {
        case .text(let text): text.databaseValue
        case .integer(let value): value.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }
}
