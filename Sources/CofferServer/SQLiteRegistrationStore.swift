import CofferCore
import CofferHTTPSignatures
import Foundation
import GRDB

/// The registration store in one SQLite file (WAL mode; the file is created 0600 in a 0700 folder).
public final class SQLiteRegistrationStore: RegistrationStore {
    private let pool: DatabasePool
    private let inserts = Counter()
    private let writes: SQLiteWriteBatcher

    /// Opens (creating if needed) the database at `path`.
    public init(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CofferCoreError(.ioFailure, "cannot create the database file \(path)")
            }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        writes = SQLiteWriteBatcher(pool: pool)
    }

    /// Creates the tables and indexes when missing; safe to run on every start.
    public func migrate() async throws {
        try await pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS coffer_keys (
                    key_id TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT, secret TEXT, created_at INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS coffer_users (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
                    key_id TEXT NOT NULL REFERENCES coffer_keys(key_id), created_at INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS coffer_replay (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
                CREATE INDEX IF NOT EXISTS coffer_replay_expiry ON coffer_replay (expires_at);
                """)
        }
    }

    /// Registers `key`, or returns the key already registered with the same public key or id.
    public func insertKey(_ key: RegisteredKey) async throws -> RegisteredKey {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO coffer_keys (\(RegistrationSQL.keyColumns)) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key_id) DO NOTHING",
                arguments: [key.keyID, key.algorithm.rawValue, key.publicKey, key.secret, key.createdAt]
            )
            return try Self.key(id: key.keyID, in: db) ?? key
        }
    }

    /// The key registered under `id`, or nil.
    public func key(id: String) async throws -> RegisteredKey? {
        try await pool.read { db in try Self.key(id: id, in: db) }
    }

    private static func key(id: String, in db: Database) throws -> RegisteredKey? {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(RegistrationSQL.keyColumns) FROM coffer_keys WHERE key_id = ?", arguments: [id]),
              let algorithm = HTTPSignatureAlgorithm(rawValue: row["algorithm"]) else { return nil }
        return RegisteredKey(keyID: row["key_id"], algorithm: algorithm, publicKey: row["public_key"], secret: row["secret"], createdAt: row["created_at"])
    }

    /// Adds a user; nil when the email is already registered.
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser? {
        try await write { db in
            let statement = try db.cachedStatement(sql: Self.userInsert)
            let id = try Int64.fetchOne(statement, arguments: [email, name, keyID, createdAt])
            return id.map { RegisteredUser(id: $0, email: email, name: name, keyID: keyID) }
        }
    }

    /// Records a signature's replay identity; durable (committed) before the answer is given.
    public func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool {
        let sweep = inserts.next() % RegistrationSQL.sweepInterval == 0
        return try await write { db in
            if sweep { try db.execute(sql: "DELETE FROM coffer_replay WHERE expires_at <= ?", arguments: [now]) }
            return try String.fetchOne(db.cachedStatement(sql: Self.replayInsert), arguments: [identifier, expiry, now]) != nil
        }
    }

    /// Runs `work` in a write transaction shared with the writes that arrive meanwhile
    /// (``SQLiteWriteBatcher``).
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writes.write(work)
    }

    /// The shared statements in SQLite's spelling: `?1`… for PostgreSQL's `$1`….
    private static let replayInsert = RegistrationSQL.replayInsert.replacingOccurrences(of: "$", with: "?")
    private static let userInsert = "INSERT INTO coffer_users (email, name, key_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (email) DO NOTHING RETURNING id"

    /// Throws unless the database answers a trivial query.
    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    /// Closes the connections; the store cannot be used afterwards.
    public func close() async throws {
        try pool.close()
    }
}

/// A thread-safe counter.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
