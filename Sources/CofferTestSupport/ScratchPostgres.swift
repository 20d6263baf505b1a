import Foundation

/// A database of its own on the PostgreSQL server `COFFER_TEST_POSTGRES_URL` names, for a test whose
/// subject is a whole database rather than rows in it (a server's master keyring is one per database:
/// tests of it cannot share one). Made and dropped with `psql`, named after the shared database with a
/// random suffix.
public enum ScratchPostgres {
    /// The shared test database's URL, nil when PostgreSQL tests are not configured.
    public static var baseURL: String? { ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"] }

    /// Runs `body` with the URL of a new, empty database and drops the database afterwards, whatever
    /// `body` did; nil (nothing run) when `COFFER_TEST_POSTGRES_URL` is unset.
    public static func withDatabase<Value: Sendable>(_ body: (String) async throws -> Value) async throws -> Value? {
        guard let base = baseURL else { return nil }
        guard var components = URLComponents(string: base) else { throw ScratchPostgresError("COFFER_TEST_POSTGRES_URL does not parse") }
        let shared = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let suffix = (0..<8).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
        let name = "\(shared.prefix(40))_scratch_\(suffix)"
        try await psql(base, "CREATE DATABASE \"\(name)\"")
        components.path = "/" + name
        guard let url = components.string else { throw ScratchPostgresError("cannot make a URL for \(name)") }
        do {
            let value = try await body(url)
            try await psql(base, "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
            return value
        } catch {
            try? await psql(base, "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
            throw error
        }
    }

    /// Runs `statement` on the database at `url` with `psql`, as someone with the database's password
    /// and not the server's keys would (tests of what a database writer can do).
    public static func execute(_ statement: String, on url: String) async throws {
        try await psql(url, statement)
    }

    private static func psql(_ url: String, _ statement: String) async throws {
        let result = try await CommandRunner.run(try CommandRunner.resolve("psql"), [url, "-v", "ON_ERROR_STOP=1", "-q", "-c", statement])
        guard result.status == 0 else { throw ScratchPostgresError("psql: \(statement): \(result.standardError)") }
    }
}

/// A scratch database could not be made or dropped.
public struct ScratchPostgresError: Error, CustomStringConvertible {
    /// What failed.
    public let description: String

    init(_ description: String) { self.description = description }
}
