import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

/// What `keychain status --json` prints.
struct KeychainStatusReport: Encodable {
    let path: String
    let unlocked: Bool
    let items: Int
}

struct KeychainStatus: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show where the keychain is, whether it is unlocked, and how many items it holds.", discussion: """
            Examples:
              coffer keychain status
              coffer keychain status --json
            """)

    @OptionGroup var options: KeychainOptions

    @Flag(help: "One JSON object: path, unlocked, items.")
    var json = false

    func run() throws {
        let path = try options.resolvedPath
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no keychain at '\(path)'", hint: "create one with 'coffer keychain create'")
        }
        let keychain = try options.open()
        var count = 0
        for itemClass in ItemClass.allCases { count += try keychain.items(matching: KeychainQuery(itemClass: itemClass)).count }
        if json {
            try JSONLines.write(KeychainStatusReport(path: path, unlocked: KeychainSession.exists(keychain), items: count))
            return
        }
        Terminal.writeLine("keychain: \(path)")
        Terminal.writeLine("state:    \(KeychainSession.exists(keychain) ? "unlocked (this session)" : "locked")")
        Terminal.writeLine("items:    \(count)")
    }
}
