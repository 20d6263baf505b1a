import GRDB

/// A row of a table that someone with the database's password may have written: each column decoded
/// with a typed error (``ServerConfigurationError`` `.invalidRecord`, answered `503`), never GRDB's
/// fatal error, and never with the row's values in the message (they may hold a secret).
struct CheckedRow {
    let row: Row
    /// The table, for the message.
    let table: String

    /// The value of `column`.
    func callAsFunction<Value: DatabaseValueConvertible>(_ column: String, as type: Value.Type = Value.self) throws(ServerConfigurationError) -> Value {
        do {
            return try row.decode(Value.self, forColumn: column)
        } catch {
            throw ServerConfigurationError(.invalidRecord, "a row of \(table) holds in \(column) a value of another type than Coffer writes: it was written outside Coffer")
        }
    }

    /// The integer in `column`, stored as an integer: a real (`1.5`, which GRDB would truncate), text or
    /// bytes there is refused.
    func callAsFunction(_ column: String, as type: Int64.Type = Int64.self) throws(ServerConfigurationError) -> Int64 {
        guard case .int64(let value) = storage(column) else { throw mismatch(column) }
        return value
    }

    /// The integer in `column`, or nil for NULL; anything but an integer is refused.
    func callAsFunction(_ column: String, as type: Int64?.Type = Int64?.self) throws(ServerConfigurationError) -> Int64? {
        switch storage(column) {
        case .null: nil
        case .int64(let value): value
        default: throw mismatch(column)
        }
    }

    /// The text in `column`, stored as text: bytes or a number there is refused.
    func callAsFunction(_ column: String, as type: String.Type = String.self) throws(ServerConfigurationError) -> String {
        guard case .string(let value) = storage(column) else { throw mismatch(column) }
        return value
    }

    /// The text in `column`, or nil for NULL; anything but text is refused.
    func callAsFunction(_ column: String, as type: String?.Type = String?.self) throws(ServerConfigurationError) -> String? {
        switch storage(column) {
        case .null: nil
        case .string(let value): value
        default: throw mismatch(column)
        }
    }

    /// How SQLite stored `column` (NULL for a column the row lacks).
    private func storage(_ column: String) -> DatabaseValue.Storage {
        (row[column] as DatabaseValue?)?.storage ?? .null
    }

    private func mismatch(_ column: String) -> ServerConfigurationError {
        ServerConfigurationError(.invalidRecord, "a row of \(table) holds in \(column) a value of another type than Coffer writes: it was written outside Coffer")
    }

    /// The value of the column at `index`.
    func callAsFunction<Value: DatabaseValueConvertible>(_ index: Int, as type: Value.Type = Value.self) throws(ServerConfigurationError) -> Value {
        do {
            return try row.decode(Value.self, atIndex: index)
        } catch {
            throw ServerConfigurationError(.invalidRecord, "a row of \(table) holds in column \(index + 1) a value of another type than Coffer writes: it was written outside Coffer")
        }
    }
}

extension Row {
    /// This row, its columns decoded with typed errors.
    func checked(_ table: String) -> CheckedRow { CheckedRow(row: self, table: table) }
}
