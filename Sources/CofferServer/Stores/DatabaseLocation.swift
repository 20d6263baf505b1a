public import CofferCore
import Foundation
public import Logging

/// Where `coffer serve` keeps its data: `sqlite:PATH` (the default, under the XDG data folder) or a
/// `postgres://` URL.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite file.
    case sqlite(path: String)
    /// A PostgreSQL database.
    case postgres(url: String)

    /// Reads `sqlite:PATH`, `postgres://…`/`postgresql://…`, a plain file path (one that starts with `/`
    /// or `.`, or has no `:`: a SQLite file), or nil for the default SQLite file.
    /// - Throws: ``ServerConfigurationError`` for anything else (another scheme, an empty text).
    public init(_ text: String?, environment: [String: String] = DataLocation.currentEnvironment) throws {
        guard let text else {
            self = .sqlite(path: try Self.defaultSQLitePath(environment: environment))
            return
        }
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ServerConfigurationError(.invalidDatabaseLocation, "sqlite: needs a path, e.g. sqlite:/var/lib/coffer/server.sqlite") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            // Checked now, so that a URL that cannot be used fails before anything starts.
            _ = try PostgresRegistrationStore.configuration(url: text)
            self = .postgres(url: text)
        } else if !text.isEmpty, !text.contains("://"), text.hasPrefix("/") || text.hasPrefix(".") || !text.contains(":") {
            self = .sqlite(path: text)
        } else {
            throw ServerConfigurationError(
                .invalidDatabaseLocation, "the database must be a file path, sqlite:PATH or postgres://user:password@host:port/database"
            )
        }
    }

    /// `server.sqlite` in Coffer's data folder (`DataLocation/cofferFolder(environment:)`:
    /// `$XDG_DATA_HOME/coffer` or `~/.local/share/coffer` on Linux, Application Support on Apple platforms).
    /// - Throws: ``ServerConfigurationError`` when the platform names no data folder.
    public static func defaultSQLitePath(environment: [String: String]) throws -> String {
        do {
            return try DataLocation.cofferFolder(environment: environment) + "/server.sqlite"
        } catch {
            throw ServerConfigurationError(.invalidDatabaseLocation, "there is no default database file: \(error.reason)", hint: "name one with sqlite:PATH", underlying: error)
        }
    }

    /// Opens the store (creating tables as needed).
    /// - Parameters:
    ///   - logger: where the store logs (never a password).
    ///   - timeout: how long a database server may take to answer before opening fails (PostgreSQL
    ///     keeps retrying a connection that is refused; a server must not wait for ever at its start).
    public func open(logger: Logger, timeout: Duration = .seconds(30)) async throws -> any RegistrationStore {
        let store: any RegistrationStore
        switch self {
        case .sqlite(let path): store = try SQLiteRegistrationStore(path: path)
        case .postgres(let url): store = try PostgresRegistrationStore(url: url, logger: logger)
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.migrate() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw ServerConfigurationError(
                        .databaseUnavailable, "\(self) did not answer within \(timeout.components.seconds) s",
                        hint: "check that the database server runs and that the URL's host, port and credentials are right"
                    )
                }
                try await group.next()
                group.cancelAll()
            }
        } catch {
            try? await store.close()
            throw error
        }
        return store
    }

    /// The location for messages, without a password.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let url): PostgresRegistrationStore.redacted(url)
        }
    }
}
