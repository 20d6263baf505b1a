import CofferCore
import CofferKeychain
import CofferTesting
import Foundation
import Testing

/// `KeychainItem`'s JSON: the schema `coffer keychain list --json` has always printed, now from the
/// library, read back as well as written.
@Suite("Keychain item JSON")
struct KeychainItemCodableTests {
    static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The bytes `coffer keychain list --json` printed for these items before the schema moved into the
    /// library (slashes escaped, as JSONSerialization wrote them).
    @Test func fixedVectorsRoundTrip() throws {
        let printed = [
            #"{"accessibility":"when-unlocked","account":"ada","applicationPassword":false,"class":"internet-password","created":"2026-11-23T17:09:55Z","label":"L\/1","modified":"2026-11-23T17:09:55Z","path":"\/a\/b","port":8443,"protocol":"https","server":"example.com","userPresence":false}"#,
            #"{"accessibility":"when-unlocked","applicationPassword":false,"applicationTag":"Pz8+","class":"key","created":"2026-11-23T17:09:57Z","keyClass":"private","keyType":"ec-p256","modified":"2026-11-23T17:09:57Z","userPresence":false}"#,
        ]
        // What they print now: the same, plus a text tag as text (issue 43), which reading ignores.
        let printedNow = [
            printed[0],
            printed[1].replacingOccurrences(of: #""applicationTag":"Pz8+","#, with: #""applicationTag":"Pz8+","applicationTagText":"??>","#),
        ]
        for (text, now) in zip(printed, printedNow) {
            let item = try JSONDecoder().decode(KeychainItem.self, from: Data(text.utf8))
            #expect(try Self.encoded(item) == now)
            #expect(try JSONDecoder().decode(KeychainItem.self, from: Data(now.utf8)) == item)
        }
        let key = try JSONDecoder().decode(KeychainItem.self, from: Data(printed[1].utf8))
        #expect(key.itemClass == .key && key.applicationTag == Array("??>".utf8) && key.keyClass == .privateKey)
        #expect(key.creationDate == Date(timeIntervalSince1970: 1_795_453_797))
    }

    /// An application tag is given as text only when it prints as it reads; escape sequences, invalid
    /// UTF-8, invisible characters and padding stay base64 alone.
    @Test(arguments: [
        ("com.example.release", "com.example.release"), ("tâg-ü", "tâg-ü"), ("\u{1B}[2J", nil), ("a\u{200B}b", nil),
        (" padded", nil), ("line\nbreak", nil), ("", nil),
    ] as [(String, String?)])
    func applicationTagText(tag: String, text: String?) {
        var item = KeychainItem.key(applicationTag: Array(tag.utf8), keyClass: .privateKey, keyType: "ec-p256")
        #expect(item.applicationTagText == text)
        item.applicationTag = [0xFF, 0x61]
        #expect(item.applicationTagText == nil)
    }

    /// Every attribute of every class survives a round trip through a real keychain and JSON.
    @Test func itemsFromAKeychainRoundTrip() throws {
        let temporary = try TemporaryKeychain()
        let keychain = temporary.keychain
        var generic = KeychainItem.genericPassword(service: "com.example", account: "ada", accessibility: .afterFirstUnlock)
        generic.label = "API token"
        generic.comment = "rotated monthly"
        generic.accessGroup = "group.example"
        generic.synchronizable = true
        var key = KeychainItem.key(applicationTag: [0, 1, 0xFF], keyClass: .symmetric, keyType: "aes", keySizeInBits: 256)
        key.applicationLabel = [9, 8, 7]
        let certificate = KeychainItem.certificate(issuer: [0x30, 0x00], serialNumber: [0x00, 0x80, 0x01], accessibility: .whenUnlockedThisDeviceOnly)
        let internet = KeychainItem.internetPassword(server: "example.com", account: "bob", port: 443, path: "/login")
        for item in [generic, key, certificate, internet] { try keychain.add(item, secret: [1, 2, 3]) }
        var stored: [KeychainItem] = []
        for itemClass in ItemClass.allCases { stored += try keychain.items(matching: KeychainQuery(itemClass: itemClass)) }
        #expect(stored.count == 4)
        let decoded = try JSONDecoder().decode([KeychainItem].self, from: Data(Self.encoded(stored).utf8))
        // Dates are kept to the second in JSON.
        #expect(decoded.map(\.creationDate) == stored.map { $0.creationDate.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)) } })
        #expect(zip(decoded, stored).allSatisfy { Self.sameAttributes($0, $1) })
        #expect(try Self.encoded(stored).contains(#""synchronizable":true"#))
        #expect(try !Self.encoded([internet]).contains("synchronizable"))
    }

    static func sameAttributes(_ a: KeychainItem, _ b: KeychainItem) -> Bool {
        a.itemClass == b.itemClass && a.accessibility == b.accessibility && a.service == b.service && a.account == b.account
            && a.server == b.server && a.protocol == b.protocol && a.port == b.port && a.path == b.path
            && a.applicationTag == b.applicationTag && a.applicationLabel == b.applicationLabel && a.keyClass == b.keyClass
            && a.keyType == b.keyType && a.keySizeInBits == b.keySizeInBits && a.issuer == b.issuer && a.serialNumber == b.serialNumber
            && a.label == b.label && a.comment == b.comment && a.accessGroup == b.accessGroup && a.synchronizable == b.synchronizable
            && a.hasApplicationPassword == b.hasApplicationPassword && a.requiresUserPresence == b.requiresUserPresence
    }

    @Test(arguments: [
        #"{"class":"password","accessibility":"when-unlocked"}"#,
        #"{"class":"key","accessibility":"always"}"#,
        #"{"class":"key","accessibility":"when-unlocked","applicationTag":"***"}"#,
        #"{"class":"key","accessibility":"when-unlocked","keyClass":"secret"}"#,
        #"{"class":"key","accessibility":"when-unlocked","created":"yesterday"}"#,
        #"{"accessibility":"when-unlocked"}"#,
    ])
    func malformedJSONIsADecodingError(text: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(KeychainItem.self, from: Data(text.utf8)) }
    }

    @Test func namesReadBackAsWritten() {
        for itemClass in ItemClass.allCases { #expect(ItemClass(itemClass.description) == itemClass) }
        for accessibility in Accessibility.allCases { #expect(Accessibility(accessibility.description) == accessibility) }
        #expect(Accessibility("whenUnlocked") == .whenUnlocked, "the case name is accepted too")
    }
}

/// The keychain's default file follows the one data-location rule.
@Suite("Keychain default path")
struct KeychainDefaultPathTests {
    #if !canImport(Darwin)
    @Test func defaultPathFollowsTheDataLocation() throws {
        #expect(try Keychain.defaultPath(environment: ["XDG_DATA_HOME": "/data"]) == "/data/coffer/keychain.db")
        #expect(try Keychain.defaultPath(environment: ["XDG_DATA_HOME": "rel", "HOME": "/home/u"]) == "/home/u/.local/share/coffer/keychain.db")
        let error = try #require(throws: KeychainError.noSuchKeychain, "no data location must be an error") { _ = try Keychain.defaultPath(environment: [:]) }
        #expect(error.underlying is CofferCoreError)
    }
    #endif
}
