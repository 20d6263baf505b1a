import CofferCore
import CofferCrypto
import CofferFormats
@testable import CofferKeychain
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Keychain export and import")
struct KeychainExportTests {
    static let exportPassword = Array("export password".utf8)
    /// scrypt at 2^10 keeps the tests fast; the default cost is the format's own business (issue 4's tests).
    static let protection = EncryptionProtection.password(exportPassword, .scrypt(logN: 10, r: 8, p: 1))

    /// A keychain with one item of each class, an application-password item, a user-presence item and
    /// two this-device-only items.
    func populated(_ kind: StoreKind) throws -> Fixture {
        let fixture = try Fixture(kind)
        let keychain = fixture.keychain
        var generic = KeychainItem.genericPassword(service: "com.example.app", account: "ada@example.com")
        generic.label = "Ada"
        generic.comment = "signed in 2026"
        try keychain.add(generic, secret: bytes("token"))
        try keychain.add(.internetPassword(server: "db.example.com", account: "app", protocol: "postgres", port: 5432, path: "/main",
                                           accessibility: .afterFirstUnlock), secret: bytes("db password"))
        try keychain.add(.key(applicationTag: bytes("com.example.aes"), keyClass: .symmetric, keyType: "aes", keySizeInBits: 256),
                         secret: [UInt8](repeating: 7, count: 32))
        try keychain.add(.certificate(issuer: [0x30, 0x00], serialNumber: [0x01, 0x02]), secret: bytes("certificate DER"))
        try keychain.add(.genericPassword(service: "vault", account: "a"), secret: bytes("inner"), accessControl: AccessControl(applicationPassword: "app pw"))
        try keychain.add(.genericPassword(service: "presence", account: "a"), secret: bytes("present"), accessControl: AccessControl(requiresUserPresence: true))
        try keychain.add(.genericPassword(service: "device", account: "a", accessibility: .whenUnlockedThisDeviceOnly), secret: bytes("stays"))
        try keychain.add(.genericPassword(service: "device", account: "b", accessibility: .afterFirstUnlockThisDeviceOnly), secret: bytes("stays too"))
        return fixture
    }

    @Test(arguments: StoreKind.allCases)
    func roundTripKeepsItemsAndLeavesThisDeviceOnlyOut(kind: StoreKind) throws {
        let source = try populated(kind)
        let (file, summary) = try source.keychain.exportItems(keychainPassword: Fixture.password, protection: Self.protection)
        #expect(summary == KeychainExportSummary(exported: 6, skippedThisDeviceOnly: 2))
        #expect(EncryptedFormat.detect(Array(file.prefix(16))) == .coffer, "an export is a Coffer encrypted file")
        #expect(file.occurrences(of: bytes("token")) == 0 && file.occurrences(of: bytes("com.example.app")) == 0)

        let target = try Fixture(kind)
        let imported = try target.keychain.importItems(file, credential: .password(Self.exportPassword))
        #expect(imported == KeychainImportSummary(imported: 6, skippedExisting: 0))
        let keychain = target.keychain
        #expect(try keychain.secret(matching: .genericPassword(service: "com.example.app", account: "ada@example.com")) == bytes("token"))
        #expect(try keychain.secret(matching: .internetPassword(server: "db.example.com", account: "app")) == bytes("db password"))
        #expect(try keychain.secret(matching: .key(applicationTag: bytes("com.example.aes"))) == [UInt8](repeating: 7, count: 32))
        #expect(try keychain.secret(matching: .certificate(issuer: [0x30, 0x00], serialNumber: [0x01, 0x02])) == bytes("certificate DER"))
        #expect(try keychain.items(matching: .genericPassword(service: "device")).isEmpty)

        // Attributes and dates as they were.
        for itemClass in ItemClass.allCases {
            let before = try source.keychain.items(matching: KeychainQuery(itemClass: itemClass)).filter { !$0.accessibility.isThisDeviceOnly }
            let after = try keychain.items(matching: KeychainQuery(itemClass: itemClass))
            #expect(Set(before) == Set(after), "\(itemClass)")
        }

        // The application password still guards its item; user presence still asks.
        var vault = KeychainQuery.genericPassword(service: "vault", account: "a")
        #expect(throws: KeychainError.self) { try keychain.secret(matching: vault) }
        vault.applicationPassword = "app pw"
        #expect(try keychain.secret(matching: vault) == bytes("inner"))
        #expect(throws: KeychainError.self) { try keychain.secret(matching: .genericPassword(service: "presence", account: "a")) }
        keychain.presencePrompt = { _ in Fixture.password }
        #expect(try keychain.secret(matching: .genericPassword(service: "presence", account: "a")) == bytes("present"))
        withExtendedLifetime((source, target)) {}
    }

    @Test func exportNeedsTheKeychainPasswordEvenWhenUnlocked() throws {
        let fixture = try populated(.memory)
        #expect(throws: KeychainError.authenticationFailed) {
            try fixture.keychain.exportItems(keychainPassword: "wrong", protection: Self.protection)
        }
    }

    @Test func wrongPasswordOrTamperedExportImportsNothing() throws {
        let source = try populated(.memory)
        let (file, _) = try source.keychain.exportItems(keychainPassword: Fixture.password, protection: Self.protection)
        let target = try Fixture(.sqlite)
        defer { withExtendedLifetime(target) {} }
        #expect(throws: KeychainError.authenticationFailed) {
            try target.keychain.importItems(file, credential: .password(bytes("wrong")))
        }
        for offset in [file.count / 2, file.count - 1] {
            var tampered = file
            tampered[offset] ^= 0x01
            #expect(throws: KeychainError.authenticationFailed) {
                try target.keychain.importItems(tampered, credential: .password(Self.exportPassword))
            }
        }
        let truncated = try #require(throws: KeychainError.self) {
            try target.keychain.importItems(Array(file.dropLast(10)), credential: .password(Self.exportPassword))
        }
        #expect(truncated.code == .authenticationFailed || truncated.code == .dataCorrupted)
        #expect(throws: KeychainError.self) { try target.keychain.importItems(bytes("not an export"), credential: .password(Self.exportPassword)) }
        for itemClass in ItemClass.allCases {
            #expect(try target.keychain.items(matching: KeychainQuery(itemClass: itemClass)).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func duplicatesFailWholeOrAreSkipped(kind: StoreKind) throws {
        let source = try populated(.memory)
        let (file, _) = try source.keychain.exportItems(keychainPassword: Fixture.password, protection: Self.protection)
        let target = try Fixture(kind)
        defer { withExtendedLifetime(target) {} }
        try target.keychain.add(.genericPassword(service: "com.example.app", account: "ada@example.com"), secret: bytes("mine"))
        #expect(throws: KeychainError.duplicateItem) {
            try target.keychain.importItems(file, credential: .password(Self.exportPassword))
        }
        #expect(try target.keychain.items(matching: .internetPassword()).isEmpty, "all or nothing")
        let summary = try target.keychain.importItems(file, credential: .password(Self.exportPassword), ifExists: .skipExisting)
        #expect(summary == KeychainImportSummary(imported: 5, skippedExisting: 1))
        #expect(try target.keychain.secret(matching: .genericPassword(service: "com.example.app", account: "ada@example.com")) == bytes("mine"))
    }

    @Test func importIntoALockedKeychainIsRefused() throws {
        let source = try populated(.memory)
        let (file, _) = try source.keychain.exportItems(keychainPassword: Fixture.password, protection: Self.protection)
        let target = try Fixture(.memory)
        target.keychain.lock()
        #expect(throws: KeychainError.interactionNotAllowed) {
            try target.keychain.importItems(file, credential: .password(Self.exportPassword))
        }
    }

    @Test func exportToAFileIsPrivateAndRefusesToOverwrite() throws {
        let source = try populated(.sqlite)
        let path = source.folder.path("backup.coffer")
        try source.keychain.exportItems(toPath: path, keychainPassword: Fixture.password, protection: Self.protection)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(throws: KeychainError.self) {
            try source.keychain.exportItems(toPath: path, keychainPassword: Fixture.password, protection: Self.protection)
        }
        let target = try Fixture(.memory)
        #expect(try target.keychain.importItems(fromPath: path, credential: .password(Self.exportPassword)).imported == 6)
    }
}

@Suite("Keychain export document (docs/KEYCHAIN.md, Export file)")
struct ExportDocumentTests {
    /// The spec's vector: one generic password (service "s", account "a", after-first-unlock, created
    /// 1,000,000,000 and modified 1,000,000,001 seconds after 1970) with the secret "hi".
    static let vector = try! Hex.decode(
        "434f464645524b43" + "01" + "00000001" + "010200" + "41cdcd6500000000" + "41cdcd6500800000"
            + "00" + "010000000173" + "010000000161" + String(repeating: "00", count: 13) + "00000002" + "6869"
    )

    static var vectorItem: ExportedItem {
        var item = KeychainItem.genericPassword(service: "s", account: "a", accessibility: .afterFirstUnlock)
        item.creationDate = Date(timeIntervalSince1970: 1_000_000_000)
        item.modificationDate = Date(timeIntervalSince1970: 1_000_000_001)
        return ExportedItem(item: item, secret: bytes("hi"))
    }

    @Test func encodesTheSpecVector() {
        #expect(ExportDocument.encode([Self.vectorItem]) == Self.vector)
    }

    @Test func decodesTheSpecVector() throws {
        let items = try ExportDocument.decode(Self.vector)
        #expect(items.count == 1)
        #expect(items.first?.item == Self.vectorItem.item && items.first?.secret == bytes("hi"))
    }

    @Test func everyTruncationIsRefused() {
        for length in 0..<Self.vector.count {
            #expect(throws: KeychainError.self) { try ExportDocument.decode(Array(Self.vector.prefix(length))) }
        }
    }

    @Test(arguments: [
        (0, 0x00, "magic"), (8, 0x02, "version"), (12, 0x02, "count says two items"), (13, 0x05, "class"),
        (14, 0x09, "accessibility"), (15, 0x08, "flags"), (32, 0x02, "presence byte"), (58, 0xff, "secret length"),
    ])
    func damagedFieldsAreRefused(offset: Int, value: UInt8, what: String) throws {
        var damaged = Self.vector
        damaged[offset] = value
        #expect(throws: KeychainError.dataCorrupted, "\(what)") { try ExportDocument.decode(damaged) }
    }

    @Test func trailingBytesAndHugeCountsAreRefused() {
        #expect(throws: KeychainError.self) { try ExportDocument.decode(Self.vector + [0]) }
        var huge = Self.vector
        huge.replaceSubrange(9..<13, with: [0xff, 0xff, 0xff, 0xff])
        #expect(throws: KeychainError.self) { try ExportDocument.decode(huge) }
    }

    @Test func invalidItemsAreRefused() {
        // A generic password without its account (field 2 absent).
        var item = Self.vectorItem
        item.item.account = nil
        #expect(throws: KeychainError.self) { try ExportDocument.decode(ExportDocument.encode([item])) }
    }
}

@Suite("Signing keys by application tag")
struct SigningKeyItemTests {
    @Test(arguments: [KeyAlgorithm.p256, .ed25519, .rsa2048])
    func storeFindSignDelete(type: KeyAlgorithm) throws {
        let fixture = try Fixture(.sqlite)
        let keychain = fixture.keychain
        let key = try SigningKey.generate(type)
        try keychain.add(key, tag: "com.example.signing", label: "request signing")
        let item = try #require(try keychain.items(matching: .key(applicationTag: bytes("com.example.signing"))).first)
        #expect(item.keyClass == .privateKey && item.keyType == KeychainItem.keyType(for: key.algorithm))
        #expect(item.applicationLabel == key.verifyingKey.fingerprint.sha256)

        let found = try keychain.signingKey(tag: "com.example.signing")
        let message = bytes("GET /orders")
        let signature = try found.signature(for: message)
        #expect(key.verifyingKey.isValidSignature(signature, for: message))

        #expect(throws: KeychainError.duplicateItem) { try keychain.add(key, tag: "com.example.signing") }
        #expect(throws: KeychainError.self) { try keychain.signingKey(tag: "com.example.other") }
        #expect(try keychain.deleteSigningKey(tag: "com.example.signing") == 1)
        #expect(throws: KeychainError.self) { try keychain.signingKey(tag: "com.example.signing") }
        withExtendedLifetime(fixture) {}
    }

    @Test func aKeyWithAnApplicationPasswordNeedsIt() throws {
        let fixture = try Fixture(.memory)
        let key = try SigningKey.generate(.p256)
        try fixture.keychain.add(key, tag: "t", accessControl: AccessControl(applicationPassword: "pin"))
        #expect(throws: KeychainError.self) { try fixture.keychain.signingKey(tag: "t") }
        #expect(try fixture.keychain.signingKey(tag: "t", applicationPassword: "pin").verifyingKey == key.verifyingKey)
    }

    @Test func aStoredNonKeyIsReportedAsCorrupted() throws {
        let fixture = try Fixture(.memory)
        try fixture.keychain.add(.key(applicationTag: bytes("t"), keyClass: .privateKey, keyType: "ec-p256"), secret: bytes("not a key"))
        #expect(throws: KeychainError.dataCorrupted) { try fixture.keychain.signingKey(tag: "t") }
    }
}
