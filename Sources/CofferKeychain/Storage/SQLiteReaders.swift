import Foundation
import GRDB
import GRDBSQLite

/// Connections for lookups, beside GRDB's pool that does every write. A lookup is one SELECT: going
/// through `DatabasePool.read` added a dispatch hop, a lock, a schema-version query (a second read
/// transaction, with its two `fcntl` calls) and generic row decoding — together more than the lookup.
/// Here a thread takes an idle connection, runs its cached statement and gives the connection back.
///
/// Each connection is `query_only` (it cannot write, whatever SQL reaches it), waits up to 10 s on a
/// busy file and reads through a memory map. WAL mode gives each SELECT a consistent snapshot.
final class SQLiteReaders: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var idle: [Connection] = []
    /// Connections kept open when idle; more are opened under load and closed when returned.
    private static let idleLimit = 4

    init(path: String) {
        self.path = path
    }

    /// Runs `body` on an idle connection (opening one when none is idle).
    func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try lock.withLock { idle.popLast() } ?? Connection(path: path)
        defer {
            lock.withLock {
                if idle.count < Self.idleLimit { idle.append(connection) }
            }
        }
        return try body(connection)
    }

    /// One SQLite connection and its prepared statements; used by one thread at a time.
    final class Connection {
        let handle: OpaquePointer
        private var statements: [String: OpaquePointer] = [:]

        init(path: String) throws {
            var handle: OpaquePointer?
            let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
            guard code == SQLITE_OK, let handle else {
                let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
                sqlite3_close_v2(handle)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
            }
            self.handle = handle
            sqlite3_busy_timeout(handle, 10_000)
            let setup = sqlite3_exec(handle, "PRAGMA query_only = 1; PRAGMA mmap_size = 268435456", nil, nil, nil)
            guard setup == SQLITE_OK else {
                let error = self.error(setup)
                sqlite3_close_v2(handle)
                throw error
            }
        }

        deinit {
            for statement in statements.values { sqlite3_finalize(statement) }
            sqlite3_close_v2(handle)
        }

        /// The prepared statement for `sql`, prepared once per connection.
        func statement(_ sql: String) throws -> OpaquePointer {
            if let statement = statements[sql] { return statement }
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            guard code == SQLITE_OK, let statement else { throw error(code) }
            statements[sql] = statement
            return statement
        }

        func error(_ code: Int32) -> DatabaseError { sqliteError(code, connection: handle) }
    }
}

/// A failed SQLite call as GRDB's error, with the connection's message, so that
/// `SQLiteStorage.wrap` maps it like any other database error.
func sqliteError(_ code: Int32, connection: SQLiteConnection?) -> DatabaseError {
    DatabaseError(resultCode: ResultCode(rawValue: code), message: connection.map { String(cString: sqlite3_errmsg($0)) })
}
