import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

/// `--keychain PATH` and the keychain password's source, shared by every keychain command.
struct KeychainOptions: ParsableArguments {
    @Option(name: .customLong("keychain"), help: ArgumentHelp("The keychain file (default: $XDG_DATA_HOME/coffer/keychain.db).", valueName: "path"))
    var path: String?

    @OptionGroup var password: PasswordOptions

    @Option(
        name: .customLong("max-scrypt-log-n"),
        help: ArgumentHelp(
            "Do the key-derivation work of scrypt up to N=2^N, r=8, p=1 (default 19) for a keychain password, and for an export's in 'keychain import'; a file asking for more is refused before any work. Raise it for a keychain made with a higher --scrypt-log-n by an earlier release.",
            valueName: "n"
        )
    )
    var maxScryptLogN: Int = 19

    /// The most work a password of the keychain (or an import's export) may ask for.
    var limits: PasswordKDFLimits { PasswordKDFLimits(scryptUpToLogN: maxScryptLogN) }

    var resolvedPath: String {
        get throws { if let path { path } else { try Keychain.defaultPath() } }
    }

    func open() throws -> Keychain {
        let keychain = try Keychain.open(at: try resolvedPath)
        keychain.passwordLimits = limits
        return keychain
    }

    /// Opens and unlocks: from the session keyring when `coffer keychain unlock` is in force, otherwise
    /// with the password.
    func openUnlocked() throws -> Keychain {
        try Self.openUnlocked(at: resolvedPath, password: password, limits: limits)
    }

    /// The keychain at `path`, unlocked from the session keyring when no password source is named,
    /// otherwise with the password from `password` (a file, a variable, or the terminal), doing at most
    /// the work `limits` admit.
    static func openUnlocked(at path: String, password: PasswordOptions, limits: PasswordKDFLimits = PasswordKDFLimits()) throws -> Keychain {
        let keychain = try Keychain.open(at: path)
        keychain.passwordLimits = limits
        if password.passwordFile == nil && password.passwordEnvironmentVariable == nil && KeychainSession.restore(keychain) {
            return keychain
        }
        var secret = try password.read(prompt: "Keychain password: ")
        defer { SecretBytes.wipe(&secret) }
        do {
            try keychain.unlock(password: String(decoding: secret, as: UTF8.self))
        } catch {
            let tooCostly = (error.underlying as? CofferCryptoError)?.code == .costTooHigh
            guard tooCostly else { throw error }
            throw CommandFailure(
                "\(path): \(error.reason)",
                hint: "if this is your keychain, made with a higher --scrypt-log-n, raise the limit with --max-scrypt-log-n; a keychain file someone else wrote can ask for any amount of work"
            )
        }
        return keychain
    }
}
