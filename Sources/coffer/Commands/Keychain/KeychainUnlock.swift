import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainUnlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Keep the keychain unlocked for this login session.",
        discussion: """
            The unlocked state lives in the kernel's session keyring (not on disk), named by the keychain's \
            identity rather than its path, and expires after --timeout. A process without a login-session \
            keyring (no pam_keyinit, as in many containers and CI jobs) would put it in the user-wide \
            keyring instead, which every session of the user shares: that is refused unless --user-keyring \
            says so ('keyctl session' starts a session keyring).

            Examples:
              coffer keychain unlock
              coffer keychain unlock --timeout 15m
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: ArgumentHelp("How long to stay unlocked: seconds, or with s, m or h (15m, 1h).", valueName: "duration"))
    var timeout = "15m"

    @Flag(name: .customLong("user-keyring"), help: "Accept the user-wide keyring when there is no login-session keyring.")
    var userKeyring = false

    func run() throws {
        guard let seconds = Self.seconds(timeout), seconds > 0, seconds <= 7 * 86_400 else {
            throw ValidationError("--timeout expects a duration such as 90s, 15m or 2h (at most 7 days), not '\(timeout)'")
        }
        let keychain = try options.open()
        var secret = try options.password.read(prompt: "Keychain password: ")
        defer { SecretBytes.wipe(&secret) }
        try keychain.unlock(password: String(decoding: secret, as: UTF8.self))
        let keyring = try KeychainSession.keepUnlocked(keychain, for: UInt32(seconds), allowingUserWideKeyring: userKeyring)
        Terminal.writeError("keychain unlocked for \(timeout) in \(keyring.description)\n")
    }

    static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        if let last = text.last, let unit = units[last] { return Int(text.dropLast()).map { $0 * unit } }
        return Int(text)
    }
}
