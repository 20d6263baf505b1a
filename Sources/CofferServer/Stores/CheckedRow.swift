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
