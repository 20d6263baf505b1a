import PostgresNIO

// The statements every signed request runs, prepared once per connection (PostgreSQL's protocol-level
// prepared statements: a named Parse once, then Bind and Execute). Sent as unnamed statements, each was
// parsed, analysed and planned anew: most of PostgreSQL's CPU time per `POST /data-keys`
// (docs/PERFORMANCE.md, "coffer serve as deployed"). The names carry a version: a statement whose text
// changes gets a new name, so a connection never runs an older text under a newer name.
//
// Connection poolers that multiplex transactions (PgBouncer's transaction mode) must track protocol-level
// prepared statements: PgBouncer 1.21 and later does with `max_prepared_statements` set
// (docs/DEPLOYMENT.md).

/// The atomic "first use" test of a signed request's replay record
/// (``PostgresRegistrationStore/replayInsert``): one row when the record was written, none when a live
/// record already had its identifier or its Coffer 1.0.0 identifier.
struct RecordFirstUseStatement: PostgresPreparedStatement {
    static let name = "coffer_record_first_use_1"
    static let sql = PostgresRegistrationStore.replayInsert
    static let bindingDataTypes: [PostgresDataType] = [.text, .int8, .int8, .text]
    typealias Row = String

    let identifier: String
    let expiry: Int64
    let now: Int64
    /// The identifier Coffer 1.0.0 gave the same signature (itself when it has none).
    let earlierIdentifier: String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(identifier)
        bindings.append(expiry)
        bindings.append(now)
        bindings.append(earlierIdentifier)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> String {
        try row.decode(String.self)
    }
}

/// A data key's floor, newest version and the asked (or newest) version's row, in one read
/// (``RegistrationSQL/lookUpDataKey``).
struct LookUpDataKeyStatement: PostgresPreparedStatement {
    static let name = "coffer_look_up_data_key_1"
    static let sql = RegistrationSQL.lookUpDataKey
    static let bindingDataTypes: [PostgresDataType] = [.text, .int8]
    typealias Row = (Int64?, Int64?, String?, Int64?, String?, String?, String?, Int64?)

    let owner: String
    /// The version asked for; nil for the newest.
    let version: Int64?

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(owner)
        if let version { bindings.append(version) } else { bindings.appendNull() }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
