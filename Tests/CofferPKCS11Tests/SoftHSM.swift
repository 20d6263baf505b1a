import CofferPKCS11
import CofferTestSupport
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// SoftHSM2 (Debian `softhsm2`, which `.ci/run` installs): one token for the whole test process, in a
/// folder of its own (SoftHSM reads `SOFTHSM2_CONF` once, when the module starts).
enum SoftHSM {
    static let modulePath: String? = [
        "/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
        "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so", "/usr/local/lib/softhsm/libsofthsm2.so",
        "/opt/homebrew/lib/softhsm/libsofthsm2.so",
    ].first { FileManager.default.fileExists(atPath: $0) }

    static var isAvailable: Bool { modulePath != nil }
    static let tokenLabel = "coffer-test"
    static let pin = Array("123456".utf8)
    static let securityOfficerPIN = Array("so-123456".utf8)

    /// The token folder and configuration; kept for the life of the process.
    static let folder = try? TemporaryDirectory(prefix: "coffer-softhsm")

    /// The environment a `pkcs11-tool` or `softhsm2-util` child needs to see the same token.
    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SOFTHSM2_CONF"] = folder?.path("softhsm2.conf")
        return environment
    }

    /// The module, with the test token initialised (once).
    static let module: Result<PKCS11Module, any Error> = Result {
        guard let modulePath, let folder else { throw PKCS11Error(.moduleNotLoaded, "SoftHSM2 is not installed") }
        try FileManager.default.createDirectory(atPath: folder.path("tokens"), withIntermediateDirectories: true)
        try folder.write("directories.tokendir = \(folder.path("tokens"))\nobjectstore.backend = file\nlog.level = ERROR\n", to: "softhsm2.conf")
        setenv("SOFTHSM2_CONF", folder.path("softhsm2.conf"), 1)
        let module = try PKCS11Module.load(modulePath)
        guard let empty = try module.slots(withTokenOnly: false).first(where: { $0.token?.isInitialized == false }) else {
            throw PKCS11Error(.tokenNotFound, "SoftHSM offers no free slot")
        }
        try module.initializeToken(slot: empty, label: tokenLabel, securityOfficerPIN: securityOfficerPIN, userPIN: pin)
        return module
    }

    /// A logged-in session with the test token.
    static func session() throws -> PKCS11Session {
        try module.get().openSession(tokenLabel: tokenLabel, pin: pin)
    }

    /// A label no other test uses.
    static func uniqueLabel(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8))"
    }
}

/// Every test that uses the token runs one at a time: SoftHSM2 does not see an object another process
/// (pkcs11-tool) wrote while this process was writing too, so the token tests may not overlap.
@Suite("SoftHSM2 token", .enabled(if: SoftHSM.isAvailable, "needs SoftHSM2 (Debian softhsm2)"), .serialized)
enum SoftHSMTests {}
