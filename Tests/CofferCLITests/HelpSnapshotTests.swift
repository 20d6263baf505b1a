import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Pins the command-line surface: every `--help` text is compared with a file under `Snapshots/`.
/// After an intended change, regenerate with `COFFER_UPDATE_SNAPSHOTS=1 swift test --filter HelpSnapshot`.
@Suite("--help snapshots")
struct HelpSnapshotTests {
    static let snapshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")

    @Test(arguments: [
        "", "hash", "hmac", "random", "gravatar", "speed", "key", "key generate", "key show", "key convert", "sign", "verify",
        "encrypt", "decrypt", "inspect", "kdf calibrate", "keychain", "keychain add", "keychain get", "keychain unlock", "keychain export", "keychain import", "password",
        "password hash", "password verify", "http", "http sign", "http verify", "request", "serve", "server", "server register", "server set-encryption-key", "server keys", "server users", "server tokens",
        "server data-key", "server master-key", "server master-key rewrap",
    ])
    func helpText(subcommand: String) async throws {
        let arguments = subcommand.split(separator: " ").map(String.init) + ["--help"]
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "100"
        let result = try await CommandRunner.run(CommandRunner.cofferExecutable(), arguments, environment: environment)
        #expect(result.status == 0)
        let file = Self.snapshots.appendingPathComponent("help-\(subcommand.isEmpty ? "coffer" : subcommand.replacingOccurrences(of: " ", with: "-")).txt")
        if ProcessInfo.processInfo.environment["COFFER_UPDATE_SNAPSHOTS"] != nil {
            try FileManager.default.createDirectory(at: Self.snapshots, withIntermediateDirectories: true)
            try Data(result.standardOutput).write(to: file)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(result.output == expected, "help changed; if intended, regenerate the snapshots (see this suite's comment)")
    }
}
