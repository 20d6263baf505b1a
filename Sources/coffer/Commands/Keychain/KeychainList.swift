import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List items' attributes (never their secrets); works while locked.", discussion: """
            Examples:
              coffer keychain list
              coffer keychain list --service com.example.api --json
            """)

    @OptionGroup var options: KeychainOptions

    @Option(help: "Only this service's generic passwords.") var service: String?
    @Flag(help: "One JSON array of objects.") var json = false

    func run() throws {
        let keychain = try options.open()
        var items: [KeychainItem] = []
        if let service {
            items = try keychain.items(matching: .genericPassword(service: service))
        } else {
            for itemClass in ItemClass.allCases { items += try keychain.items(matching: KeychainQuery(itemClass: itemClass)) }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(items)
            Terminal.writeLine(String(decoding: data, as: UTF8.self))
            return
        }
        for item in items {
            let kind: String = item.itemClass.description
            let name: String = Self.name(of: item)
            let access: String = item.accessibility.description
            var line = "\(kind)  \(name)  \(access)"
            if let label = item.label { line += "  \"\(label)\"" }
            Terminal.writeLine(line)
        }
    }

    static func name(of item: KeychainItem) -> String {
        let account: String = item.account ?? ""
        switch item.itemClass {
        case .genericPassword:
            let service: String = item.service ?? ""
            return "\(service)  \(account)"
        case .internetPassword:
            let scheme: String = item.protocol ?? ""
            let server: String = item.server ?? ""
            let port: String = item.port.map { ":\($0)" } ?? ""
            let path: String = item.path ?? ""
            return "\(scheme)://\(account)@\(server)\(port)\(path)"
        case .key:
            // Text as it reads; a binary tag (or one that would print invisible or control characters
            // to the terminal) in hex, as 0x….
            let tag = item.applicationTagText ?? item.applicationTag.map { "0x" + Hex.encode($0) } ?? ""
            let keyClass: String = item.keyClass?.rawValue ?? ""
            let keyType: String = item.keyType ?? ""
            return "tag \(tag)  \(keyClass) \(keyType)"
        case .certificate:
            let serial: String = Hex.encode(item.serialNumber ?? [])
            return "serial \(serial)"
        }
    }
}
