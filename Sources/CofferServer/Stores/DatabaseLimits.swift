/// How long a server waits for its database, and how many connections it holds (docs/SERVER.md,
/// "Operations"): the bounds that make an outage a quick `503` instead of a hung request.
///
/// ```swift
/// var limits = DatabaseLimits()
/// limits.connectTimeout = .seconds(1)
/// let store = try await DatabaseLocation("postgres://coffer@db/coffer").open(logger: logger, limits: limits)
/// ```
public struct DatabaseLimits: Sendable, Hashable {
    /// The longest wait for a database connection: to connect to PostgreSQL (TCP, TLS and sign-in), and
    /// for a pooled connection to come free. 10 seconds by default.
    public var connectTimeout: Duration = .seconds(10)
    /// The longest a statement may run; PostgreSQL cancels it after that (`statement_timeout`). Nil
    /// (the default) leaves the database's own setting.
    public var statementTimeout: Duration?
    /// The most connections one server holds open to PostgreSQL (the pool's size): 20 by default.
    public var maximumConnections = 20
    /// A PEM file of the certificate authorities that sign the database's certificate, for
    /// `sslmode=verify-ca` and `verify-full`; it replaces a URL's `sslrootcert`. Nil: the URL's, else
    /// the system's trust roots.
    public var certificateAuthorityFile: String?

    /// The defaults: a 10-second connection wait, no statement bound, 20 connections, the system's roots.
    public init() {}

    /// The longest one store call may take before the server gives up on it: a connection's wait plus
    /// one statement's (or, without a statement bound, twice the connection's).
    public var callTimeout: Duration { connectTimeout + (statementTimeout ?? connectTimeout) }
}
