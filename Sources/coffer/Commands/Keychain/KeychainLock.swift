import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainLock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock", abstract: "End the unlocked session started by 'unlock' (whichever spelling of the path unlocked it).",
        discussion: """
            Example:
              coffer keychain lock
            """
    )

    @OptionGroup var options: KeychainOptions

    func run() throws {
        let keychain = try options.open()
        let ended = KeychainSession.end(keychain, path: try options.resolvedPath)
        Terminal.writeError(ended ? "keychain locked\n" : "keychain was not unlocked\n")
    }
}
