import Foundation
import GRDB
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

    static let schemaVersion = 1

    /// Opens (creating when `create` is true) the database at `path`.
    init(path: String, create: Bool) throws(KeychainError) {
        self.path = path
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists && !create {
            throw KeychainError(.noSuchKeychain, "no keychain at '\(path)'; create one with 'coffer keychain create'")
        }
        if !exists {
            try Self.prepareFile(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
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
                throw KeychainError(.ioFailure, "cannot create the folder '\(folder)': \(error.localizedDescription)")
            }
        }
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw KeychainError(.ioFailure, "cannot create '\(path)': \(String(cString: strerror(errno)))")
        }
        fchmod(descriptor, 0o600)
        close(descriptor)
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
        return KeychainError(.ioFailure, "keychain database '\(path)': \(error)")
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
        try insertAll([(item, sealed)])
    }

    func insertAll(_ rows: [(KeychainItem, [UInt8])]) throws(KeychainError) {
        try write { db in
            for (item, sealed) in rows { try Self.insert(db, item, sealed: sealed, id: nil) }
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

    /// The WHERE clause and arguments of a query.
    private static func filter(_ query: KeychainQuery) -> (String, StatementArguments) {
        var clauses = ["class = ?"]
        var values: [(any DatabaseValueConvertible)?] = [query.itemClass.rawValue]
        func add(_ column: String, _ value: (any DatabaseValueConvertible)?) {
            guard let value else { return }
            clauses.append("\(column) = ?")
            values.append(value)
        }
        add("service", query.service)
        add("account", query.account)
        add("server", query.server)
        add("protocol", query.protocol)
        add("port", query.port)
        add("path", query.path)
        add("application_tag", query.applicationTag.map { Data($0) })
        add("application_label", query.applicationLabel.map { Data($0) })
        add("key_class", query.keyClass?.rawValue)
        add("key_type", query.keyType)
        add("issuer", query.issuer.map { Data($0) })
        add("serial_number", query.serialNumber.map { Data($0) })
        add("label", query.label)
        add("access_group", query.accessGroup)
        add("synchronizable", query.synchronizable)
        add("accessibility", query.accessibility?.rawValue)
        return (clauses.joined(separator: " AND "), StatementArguments(values))
    }

    /// Decodes a row of ``columns`` by position (a name lookup per column would scan the row's 25
    /// column names each time: half the cost of a read).
    private static func decode(_ row: Row) throws -> ItemRow {
        guard let itemClass = ItemClass(rawValue: row[1]), let accessibility = Accessibility(rawValue: row[19]) else {
            throw KeychainError(.dataCorrupted, "a keychain row has an unknown class or accessibility; the file was changed outside Coffer")
        }
        var item = KeychainItem(itemClass: itemClass, accessibility: accessibility)
        item.service = row[2]
        item.account = row[3]
        item.server = row[4]
        item.protocol = row[5]
        item.port = row[6]
        item.path = row[7]
        item.applicationTag = (row[8] as Data?).map { Array($0) }
        item.applicationLabel = (row[9] as Data?).map { Array($0) }
        item.keyClass = (row[10] as String?).flatMap(KeyClass.init(rawValue:))
        item.keyType = row[11]
        item.keySizeInBits = row[12]
        item.issuer = (row[13] as Data?).map { Array($0) }
        item.serialNumber = (row[14] as Data?).map { Array($0) }
        item.label = row[15]
        item.comment = row[16]
        item.accessGroup = row[17]
        item.synchronizable = row[18]
        item.hasApplicationPassword = row[20]
        item.requiresUserPresence = row[21]
        item.creationDate = Date(timeIntervalSince1970: row[22])
        item.modificationDate = Date(timeIntervalSince1970: row[23])
        let sealed: Data = row[24]
        return ItemRow(id: row[0], item: item, sealed: Array(sealed))
    }

    private static func find(_ db: Database, _ query: KeychainQuery, limit: Int?) throws -> [ItemRow] {
        let (clause, arguments) = filter(query)
        let limitClause = limit.map { " LIMIT \($0)" } ?? ""
        let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM items WHERE \(clause) ORDER BY id\(limitClause)")
        return try Row.fetchAll(statement, arguments: arguments).map(decode)
    }

    func find(_ query: KeychainQuery, limit: Int?) throws(KeychainError) -> [ItemRow] {
        // One SELECT is atomic by itself in WAL mode: no BEGIN/COMMIT around it.
        do { return try pool.unsafeReentrantRead { db in try Self.find(db, query, limit: limit) } } catch { throw Self.wrap(error, path: path) }
    }

    func update(_ query: KeychainQuery, _ transform: (ItemRow) throws(KeychainError) -> ItemRow) throws(KeychainError) -> Int {
        try write { db in
            let rows = try Self.find(db, query, limit: nil)
            // Delete all first, so that swapping identities among the matched rows is not a false duplicate.
            var changed: [ItemRow] = []
            for row in rows { changed.append(try transform(row)) }
            for row in changed { try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [row.id]) }
            for row in changed { try Self.insert(db, row.item, sealed: row.sealed, id: row.id) }
            return changed.count
        }
    }

    func delete(_ query: KeychainQuery) throws(KeychainError) -> Int {
        try write { db in
            let (clause, arguments) = Self.filter(query)
            try db.execute(sql: "DELETE FROM items WHERE \(clause)", arguments: arguments)
            return db.changesCount
        }
    }

    func rewrite(header: KeychainCrypto.Header, _ reseal: ((ItemRow) throws(KeychainError) -> [UInt8])?) throws(KeychainError) {
        try write { db in
            if let reseal {
                let rows = try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM items ORDER BY id").map(Self.decode)
                for row in rows {
                    try db.execute(sql: "UPDATE items SET secret = ? WHERE id = ?", arguments: [Data(try reseal(row)), row.id])
                }
            }
            try db.execute(sql: "UPDATE meta SET value = ? WHERE name = 'header'", arguments: [Data(header.encoded)])
        }
    }
}
