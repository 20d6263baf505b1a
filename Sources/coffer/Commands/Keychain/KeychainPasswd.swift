import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainPasswd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the keychain password and re-encrypt every item under a new master key.",
        discussion: """
            Every item is re-encrypted in one transaction under a new random master key wrapped by the new \
            password, and the old wrapped key is overwritten in the file. A copy of the keychain taken before \
            the change still opens, with the old password, what it held then; it opens nothing added or \
            changed since (docs/KEYCHAIN.md). The current password comes from --password-file/--password-env \
            or a prompt; the new one from --new-password-file/--new-password-env or a prompt.

            Examples:
              coffer keychain passwd
              coffer keychain passwd --password-file old.txt --new-password-file new.txt
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password from this file's first line.", valueName: "file"))
    var newPasswordFile: String?
    @Option(name: .customLong("new-password-env"), help: ArgumentHelp("Read the new password from this environment variable.", valueName: "var"))
    var newPasswordEnvironmentVariable: String?

    func run() throws {
        let keychain = try options.open()
        var old = try options.password.read(prompt: "Current keychain password: ")
        defer { SecretBytes.wipe(&old) }
        var new = try PasswordOptions(file: newPasswordFile, environmentVariable: newPasswordEnvironmentVariable).read(prompt: "New keychain password: ", confirm: true)
        defer { SecretBytes.wipe(&new) }
        try keychain.changePassword(from: String(decoding: old, as: UTF8.self), to: String(decoding: new, as: UTF8.self))
        KeychainSession.end(keychain, path: try options.resolvedPath)
        Terminal.writeError("keychain password changed; every item re-encrypted under a new master key\n")
    }
}
