import Logging
import PostgresNIO

/// Whether PostgreSQL holds the statement bound a server asked for. It is sent as the connection's
/// `statement_timeout` startup parameter, which a pooler can drop (PgBouncer refuses it until it is in
/// `ignore_startup_parameters`, and then discards it): statements then run on in the database after
/// requests were answered `503` at the server's own deadline, holding their connections.
enum PostgresStatementBound {
    /// The longest the start waits for the setting: a database that accepted the connection and then
    /// stopped answering must not hold the start (the schema check after it reports the hang).
    static let readTimeout: Duration = .seconds(10)

    /// Logs a warning, with the fix, when `connection` reports another `statement_timeout` than `asked`
    /// milliseconds, or when it cannot be read within ``readTimeout``.
    static func warnUnlessItHolds(asked: Int64, on connection: PostgresConnection, role: String, logger: Logger) async {
        let reported: Int64?
        do {
            let read = try await Deadline.run(within: readTimeout) { () async throws -> Int64? in
                var setting: Int64?
                let rows = try await connection.query("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'", logger: logger)
                for try await text in rows.decode(String.self) { setting = Int64(text) }
                return setting
            }
            guard let read else {
                logger.warning("PostgreSQL did not say its statement_timeout within \(readTimeout): the statement bound is not checked")
                return
            }
            reported = read
        } catch {
            logger.warning("could not read PostgreSQL's statement_timeout to check the statement bound", metadata: ["cause": .string(DatabaseFailure.describe(error))])
            return
        }
        if let warning = warning(asked: asked, reported: reported, role: role) {
            logger.warning("\(warning)")
        }
    }

    /// What to tell the operator when PostgreSQL reports a `statement_timeout` of `reported` ms (0: none;
    /// nil: not a number) where `asked` ms was sent; nil when they agree. The role is pasted into the
    /// suggested SQL only when PostgreSQL would not fold or misread it (lowercase letters, digits, `_`).
    static func warning(asked: Int64, reported: Int64?, role: String) -> String? {
        guard reported != asked else { return nil }
        let shown = reported.map { $0 == 0 ? "0 (no bound)" : "\($0) ms" } ?? "unreadable"
        let plain = !role.isEmpty && role.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }
        return "PostgreSQL's statement_timeout on this connection is \(shown), not the \(asked) ms this server asked for (its statement bound): "
            + "a connection pooler may have dropped the setting (PgBouncer's ignore_startup_parameters). Statements then run on in "
            + "the database after requests are answered 503, holding their connections. Set the bound on the role: "
            + "ALTER ROLE \(plain ? role : "<role>") SET statement_timeout = '\(asked)ms' (docs/DEPLOYMENT.md, \"PostgreSQL in production\")"
    }
}
