import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainGet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Read an item's secret.",
        discussion: """
            The secret is printed when standard output is a pipe or a file, or with --reveal; on a \
            terminal only its attributes are shown.

            Examples:
              coffer keychain get --service com.example.api --account ci
              TOKEN=$(coffer keychain get --service com.example.api --account ci)
            """
    )

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    @Flag(help: "Print the secret even on a terminal.") var reveal = false

    func run() throws {
        let keychain = try options.openUnlocked()
        var secret = try keychain.secret(matching: try name.query())
        defer { SecretBytes.wipe(&secret) }
        if reveal || !Terminal.standardOutputIsTerminal {
            try secret.withUnsafeBytes { try Terminal.writeData($0) }
            if Terminal.standardOutputIsTerminal { Terminal.writeOut("\n") }
        } else {
            Terminal.writeLine("item:   \(name)\nsecret: \(secret.count) bytes (hidden; pass --reveal or pipe the output)")
        }
    }
}
