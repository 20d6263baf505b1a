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

    /// Opens the store and applies the migrations it lacks (creating tables as needed), logging each
    /// one applied.
    /// - Parameters:
    ///   - logger: where the store logs (never a password).
    ///   - limits: the database's bounds (connection and statement waits, pool size, CA file).
    ///   - timeout: how long the migrations may take (another instance may hold the migration lock).
    /// - Throws: ``ServerConfigurationError`` `.databaseUnavailable` with PostgreSQL's own reason (a
    ///   wrong password, a missing database, a certificate that does not verify) or when the database
    ///   does not answer within `timeout`; `.schemaNewerThanServer` when a newer release migrated the
    ///   database (nothing is changed then).
    public func open(logger: Logger, limits: DatabaseLimits = DatabaseLimits(), timeout: Duration = .seconds(30)) async throws -> any RegistrationStore {
        let store = try await openChecked(logger: logger, limits: limits, timeout: timeout)
        do {
            // What this instance applied, answered from inside the migration lock: of two instances
            // starting at once, each logs only its own.
            let applied = try await bounded(timeout) { try await store.applyMigrations() }
            for version in applied {
                logger.notice("applied migration \(version): \(RegistrationSQL.migrationTitles[version - 1])", metadata: ["database": .string(description)])
            }
            if applied.isEmpty {
                let version = try await store.schemaVersion()
                logger.info("schema at version \(version): nothing to migrate", metadata: ["database": .string(description)])
            }
        } catch {
            try? await store.close()
            throw error
        }
        return store
    }

    /// The migrations `open` would apply, by number and what each does, without applying any (a SQLite
    /// file that is not there is not made).
    /// - Throws: as ``open(logger:limits:timeout:)`` does before it migrates.
    public func pendingMigrations(logger: Logger, limits: DatabaseLimits = DatabaseLimits(), timeout: Duration = .seconds(30)) async throws -> [(version: Int, title: String)] {
        // A SQLite file that is not there yet needs every migration; opening it would create it.
        if case .sqlite(let path) = self, !FileManager.default.fileExists(atPath: path) {
            return (1 ..< RegistrationSQL.latestVersion + 1).map { ($0, RegistrationSQL.migrationTitles[$0 - 1]) }
        }
        let store = try await openChecked(logger: logger, limits: limits, timeout: timeout)
        let version: Int
        do {
            version = try await store.schemaVersion()
        } catch {
            try? await store.close()
            throw error
        }
        try? await store.close()
        return (version + 1 ..< RegistrationSQL.latestVersion + 1).map { ($0, RegistrationSQL.migrationTitles[$0 - 1]) }
    }

    /// The store, once PostgreSQL accepted one connection and the schema is not newer than this release.
    private func openChecked(logger: Logger, limits: DatabaseLimits, timeout: Duration) async throws -> any RegistrationStore {
        let store: any RegistrationStore
        switch self {
        case .sqlite(let path): store = try SQLiteRegistrationStore(path: path)
        case .postgres(let url):
            let postgres = try PostgresRegistrationStore(url: url, logger: logger, limits: limits)
            store = postgres
            do {
                try await postgres.checkConnection()
            } catch {
                try? await store.close()
                throw error
            }
        }
        do {
            let version = try await bounded(timeout) { try await store.schemaVersion() }
            guard version <= RegistrationSQL.latestVersion else {
                throw ServerConfigurationError(
                    .schemaNewerThanServer,
                    "the database's schema is version \(version), and this release knows versions up to \(RegistrationSQL.latestVersion): a newer release migrated it",
                    hint: "run the release that migrated it (or a newer one); nothing was changed"
                )
            }
        } catch {
            try? await store.close()
            throw error
        }
        return store
    }

    /// `body`'s value, or `.databaseUnavailable` once `timeout` has passed (PostgreSQL's pool keeps
    /// retrying a connection that is refused; a server must not wait for ever at its start).
    private func bounded<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let value = try await Deadline.run(within: timeout, { [body] in [try await body()] }), let first = value.first else {
            throw ServerConfigurationError(
                .databaseUnavailable, "\(self) did not answer within \(timeout)",
                hint: "check that the database server runs and that the URL's host, port and credentials are right"
            )
        }
        return first
    }

    /// The location for messages, without a password.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let url): PostgresRegistrationStore.redacted(url)
        }
    }
}
