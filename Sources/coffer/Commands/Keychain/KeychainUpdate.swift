import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainUpdate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "Change an item's secret, label, account or accessibility.", discussion: """
            Examples:
              coffer keychain update --service com.example.api --account ci --secret
              printf %s "$NEW" | coffer keychain update --service com.example.api \\
                  --account ci --stdin
            """)

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    @Flag(name: .customLong("secret"), help: "Replace the secret (asked at a prompt).") var newSecret = false
    @Flag(name: .customLong("stdin"), help: "Replace the secret with standard input.") var secretFromStandardInputFlag = false
    /// `--secret-stdin`, the spelling before the flags became one language (docs/CLI.md).
    @Flag(name: .customLong("secret-stdin"), help: .hidden) var deprecatedSecretStdin = false
    var secretFromStandardInput: Bool { secretFromStandardInputFlag || deprecatedSecretStdin }
    @Option(help: "A new label.") var label: String?
    @Option(name: .customLong("new-account"), help: "Rename the account.") var newAccount: String?
    @Option(help: ArgumentHelp("A new accessibility class.", valueName: "class")) var accessibility: String?

    func run() throws {
        Deprecation.warn("--secret-stdin", "--stdin", used: deprecatedSecretStdin)
        var changes = KeychainChanges()
        if newSecret || secretFromStandardInput { changes.secret = try readItemSecret(fromStandardInput: secretFromStandardInput) }
        if let label { changes.label = .some(label) }
        changes.account = newAccount
        changes.accessibility = try accessibility.map(parseAccessibility)
        guard changes != KeychainChanges() else {
            throw ValidationError("nothing to change: pass --secret, --stdin, --label, --new-account or --accessibility")
        }
        let keychain = try options.openUnlocked()
        try keychain.update(matching: try name.query(), with: changes)
        if var secret = changes.secret { SecretBytes.wipe(&secret) }
    }
}
