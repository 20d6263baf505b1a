import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainRotate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Re-encrypt every item under a new master key (the password stays).",
        discussion: """
            For when a copy of the keychain file may have leaked together with its password, or on a \
            schedule: after the rotation, that copy's master key opens nothing of today's file. One \
            transaction; an unlocked session ends.

            Example:
              coffer keychain rotate
            """
    )

    @OptionGroup var options: KeychainOptions

    func run() throws {
        let keychain = try options.open()
        var password = try options.password.read(prompt: "Keychain password: ")
        defer { SecretBytes.wipe(&password) }
        try keychain.rotateMasterKey(password: String(decoding: password, as: UTF8.self))
        KeychainSession.end(keychain, path: try options.resolvedPath)
        Terminal.writeError("every item re-encrypted under a new master key\n")
    }
}
