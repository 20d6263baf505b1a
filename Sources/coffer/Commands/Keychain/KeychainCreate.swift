import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainCreate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a keychain and set its password.", discussion: """
            Examples:
              coffer keychain create
              coffer keychain create --keychain ./app.db --password-file pass.txt
            """)

    @OptionGroup var options: KeychainOptions

    @Option(
        name: .customLong("scrypt-log-n"),
        help: "scrypt cost of the keychain password, as a power of two (N=2^n, r=8, p=1): 10 to 19 (every keychain command's limit; more with --max-scrypt-log-n, which every command on this keychain then needs)."
    )
    var scryptLogN = 17

    func validate() throws {
        guard scryptLogN <= options.maxScryptLogN else {
            throw ValidationError(
                "--scrypt-log-n \(scryptLogN) is above the \(options.maxScryptLogN) keychain commands do by default; add --max-scrypt-log-n \(scryptLogN) here and to every command on this keychain"
            )
        }
    }

    func run() throws {
        let path = try options.resolvedPath
        if FileManager.default.fileExists(atPath: path), (try? Keychain.open(at: path).isCreated) == true {
            throw CommandFailure("a keychain already exists at '\(path)'", hint: "use it, or choose another file with --keychain")
        }
        var secret = try options.password.read(prompt: "New keychain password: ", confirm: true)
        defer { SecretBytes.wipe(&secret) }
        let keychain = try Keychain.open(at: path, create: true)
        keychain.passwordLimits = options.limits
        try keychain.create(password: String(decoding: secret, as: UTF8.self), kdf: .scrypt(logN: scryptLogN, r: 8, p: 1))
        Terminal.writeError("created keychain \(path)\n")
    }
}
