@testable import CofferServer
import CofferTestSupport
import CofferTesting
import Logging
import Testing

/// `coffer serve`'s default database follows the one data-location rule, and bad locations are refused.
@Suite("Database location")
struct DatabaseLocationTests {
    #if !canImport(Darwin)
    @Test func theDefaultFollowsTheDataLocation() throws {
        #expect(try DatabaseLocation(nil, environment: ["XDG_DATA_HOME": "/data"]) == .sqlite(path: "/data/coffer/server.sqlite"))
        // A relative XDG_DATA_HOME is ignored here as everywhere (it used to be used as given).
        #expect(try DatabaseLocation(nil, environment: ["XDG_DATA_HOME": "rel", "HOME": "/home/u"]) == .sqlite(path: "/home/u/.local/share/coffer/server.sqlite"))
        #expect(throws: ServerConfigurationError.self) { try DatabaseLocation(nil, environment: [:]) }
    }
    #endif

    @Test func explicitLocationsAndRefusals() throws {
        #expect(try DatabaseLocation("sqlite:/var/lib/coffer.sqlite") == .sqlite(path: "/var/lib/coffer.sqlite"))
        #expect(throws: ServerConfigurationError.self) { try DatabaseLocation("sqlite:") }
        #expect(throws: ServerConfigurationError.self) { try DatabaseLocation("mysql://db/x") }
        // A plain path is a SQLite file (issue 43: `--database ./s.db` was refused).
        for path in ["./s.db", "/var/lib/coffer/server.sqlite", "server.sqlite", "../data/s.db", "./odd:name.db"] {
            #expect(try DatabaseLocation(path) == .sqlite(path: path), "\(path)")
        }
        for refused in ["", "redis:db", "file://s.db"] {
            #expect(throws: ServerConfigurationError.self, "\(refused)") { try DatabaseLocation(refused) }
        }
    }
}

/// Two instances starting at once on a new database: each logs the migrations it applied, so that the
/// two logs together name each migration once (each named all seven, as the schema version before and
/// after its own call moved by the other's work too).
@Suite("Migrations at once")
struct MigrationsAtOnceTests {
    @Test(arguments: AllowListTests.Backend.allCases.filter { $0 != .memory })
    func eachInstanceLogsWhatItApplied(backend: AllowListTests.Backend) async throws {
        let folder = try TemporaryDirectory()
        let run: @Sendable (DatabaseLocation) async throws -> Void = { location in
            let lines = ServerLogHandlerTests.Lines()
            let logger = Logger(label: "test") { ServerLogHandler(label: $0, stream: lines, metadataProvider: nil) }
            async let one = location.open(logger: logger, timeout: .seconds(300))
            async let two = location.open(logger: logger, timeout: .seconds(300))
            let (first, second) = try await (one, two)
            try await first.close()
            try await second.close()
            let applied = lines.withoutTimestamps.filter { $0.contains("applied migration ") }
            #expect(applied.count == RegistrationSQL.latestVersion, "\(applied)")
            for version in 1...RegistrationSQL.latestVersion {
                #expect(applied.filter { $0.contains("applied migration \(version):") }.count == 1, "\(applied)")
            }
        }
        switch backend {
        case .sqlite: try await run(.sqlite(path: folder.path("server.sqlite")))
        case .postgres: _ = try await ScratchPostgres.withDatabase { url in try await run(try DatabaseLocation(url)) }
        case .memory: break
        }
    }
}

extension DatabaseLocation {
    /// Opens the store for a test, under `label`. The guard against a database that never answers is
    /// longer than a server's 30 s: a test process shares two cores with hundreds of tests, and a
    /// PostgreSQL test's migration waited 30 s in CI for a thread of the concurrency pool (issue 22's
    /// CI failure, df2e7a1), not for the database.
    func openForTest(_ label: String = "test") async throws -> any RegistrationStore {
        try await open(logger: Logger(label: label), timeout: .seconds(300))
    }
}
