import CofferCore
import Testing

/// One rule for where user data lives (XDG Base Directory on Linux).
@Suite("Data location")
struct DataLocationTests {
    #if !canImport(Darwin)
    @Test func followsTheXDGBaseDirectorySpecification() throws {
        #expect(try DataLocation.userData(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == "/data")
        #expect(try DataLocation.userData(environment: ["HOME": "/home/u"]) == "/home/u/.local/share")
        // A relative XDG_DATA_HOME is invalid and ignored, as is an empty one.
        #expect(try DataLocation.userData(environment: ["XDG_DATA_HOME": "data", "HOME": "/home/u"]) == "/home/u/.local/share")
        #expect(try DataLocation.userData(environment: ["XDG_DATA_HOME": "", "HOME": "/home/u"]) == "/home/u/.local/share")
        #expect(try DataLocation.cofferFolder(environment: ["HOME": "/home/u"]) == "/home/u/.local/share/coffer")
    }

    @Test func noAbsoluteLocationIsATypedError() {
        for environment in [[:], ["HOME": "relative"], ["XDG_DATA_HOME": "x", "HOME": ""]] {
            #expect(throws: CofferCoreError.fileNotFound) {
                _ = try DataLocation.userData(environment: environment)
            }
        }
    }
    #endif
}
