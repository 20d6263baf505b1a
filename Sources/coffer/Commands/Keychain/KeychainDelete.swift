import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainDelete: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an item (generic password, internet password, or every key under a tag).", discussion: """
            Examples:
              coffer keychain delete --service com.example.api --account ci
              coffer keychain delete --tag com.example.release-signing
            """)

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    func run() throws {
        let keychain = try options.open()
        var query = try name.query()
        query.matchLimit = .all
        let count = try keychain.delete(matching: query)
        Terminal.writeError("deleted \(count) item\(count == 1 ? "" : "s")\n")
    }
}
