import CofferServer
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
    }
}
