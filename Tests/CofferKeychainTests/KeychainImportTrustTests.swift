import CofferCore
import CofferCrypto
import CofferFormats
@testable import CofferKeychain
import CofferTesting
import Foundation
import Testing

/// Issue 42: an import takes items only from an author it can name. A recipient's public key is
/// public, so an export that only a recipient's private key opens proves nothing about who wrote it.
@Suite("Keychain import: who wrote the export")
struct KeychainImportTrustTests {
    static let exportPassword = Array("export password".utf8)

    /// What an attacker who holds only the victim's public key plants: a `COFFERKC` document of their
    /// own (a password the victim will use, a signing key under a tag the victim signs with), encrypted
    /// to that public key as `coffer encrypt -r` does.
    static func planted(for victim: RecipientPublicKey) throws -> [UInt8] {
        let password = ExportedItem(item: .genericPassword(service: "bank.example", account: "ada"), secret: bytes("attacker's password"))
        let signingKey = try SigningKey.generate(.p256)
        let key = KeychainItem.key(
            tag: "com.example.release", keyClass: .privateKey, keyType: KeychainItem.keyType(for: signingKey.algorithm),
            keySizeInBits: KeychainItem.keySize(of: signingKey.algorithm), applicationLabel: signingKey.verifyingKey.fingerprint.sha256,
            label: nil, accessibility: .whenUnlocked
        )
        let planted = ExportedItem(item: key, secret: try signingKey.pkcs8DERRepresentation)
        return try CofferEncryption.encrypt(ExportDocument.encode([password, planted]), to: .recipients([victim]))
    }

    @Test(arguments: StoreKind.allCases)
    func aDocumentEncryptedToTheImportersPublicKeyIsRefusedByDefault(kind: StoreKind) throws {
        let victim = try Fixture(kind)
        defer { withExtendedLifetime(victim) {} }
        let identity = RecipientPrivateKey.generateX25519()
        let file = try Self.planted(for: identity.publicKey)

        let error = try #require(throws: KeychainError.self) { try victim.keychain.importItems(file, credential: .identity(identity)) }
        #expect(error.code.rawValue == "untrusted-export", "\(error.code): \(error.reason)")
        for itemClass in ItemClass.allCases {
            #expect(try victim.keychain.items(matching: KeychainQuery(itemClass: itemClass)).isEmpty, "nothing imported: \(itemClass)")
        }
    }

    /// An export's password stanza asking for scrypt p = 255 at N = 2^20 is refused before deriving.
    @Test func anExportAskingForHostileWorkIsRefusedBeforeDeriving() throws {
        let source = try Fixture(.memory)
        try source.keychain.add(.genericPassword(service: "s", account: "a"), secret: bytes("secret"))
        var (file, _) = try source.keychain.exportItems(
            keychainPassword: Fixture.password, protection: .password(Self.exportPassword, .scrypt(logN: 10, r: 8, p: 1))
        )
        file.replaceSubrange(31..<34, with: [20, 8, 255])
        let target = try Fixture(.memory)
        let error = try #require(throws: KeychainError.badParameter) { try target.keychain.importItems(file, credential: .password(Self.exportPassword)) }
        #expect(error.reason.contains("limit of work ") || error.reason.contains(" and work "), "\(error.code): \(error.reason)")
    }

    /// A keychain with two items, and the exporter's and importer's keys.
    struct Parties {
        let source: Fixture
        let target: Fixture
        let exporter = try! SigningKey.generate(.ed25519)
        let stranger = try! SigningKey.generate(.p256)
        let importer = RecipientPrivateKey.generateX25519()

        init() throws {
            source = try Fixture(.memory)
            target = try Fixture(.sqlite)
            try source.keychain.add(.genericPassword(service: "bank.example", account: "ada"), secret: bytes("real password"))
            try source.keychain.add(try SigningKey.generate(.p256), tag: "com.example.release")
        }

        func export(to recipients: [RecipientPublicKey], signedBy signer: SigningKey?) throws -> [UInt8] {
            try source.keychain.exportItems(keychainPassword: Fixture.password, protection: .recipients(recipients), signedBy: signer).file
        }

        var isEmpty: Bool {
            get throws { try ItemClass.allCases.allSatisfy { try target.keychain.items(matching: KeychainQuery(itemClass: $0)).isEmpty } }
        }
    }

    @Test func anExportSignedByTheNamedKeyImports() throws {
        let parties = try Parties()
        let file = try parties.export(to: [parties.importer.publicKey], signedBy: parties.exporter)
        let summary = try parties.target.keychain.importItems(file, credential: .identity(parties.importer), author: .signer(parties.exporter.verifyingKey))
        #expect(summary.imported == 2)
        #expect(try parties.target.keychain.secret(matching: .genericPassword(service: "bank.example", account: "ada")) == bytes("real password"))
    }

    @Test func anExportSignedByAnotherKeyThanTheNamedOneIsRefused() throws {
        let parties = try Parties()
        let file = try parties.export(to: [parties.importer.publicKey], signedBy: parties.stranger)
        let error = try #require(throws: KeychainError.untrustedExport) {
            try parties.target.keychain.importItems(file, credential: .identity(parties.importer), author: .signer(parties.exporter.verifyingKey))
        }
        #expect(error.reason.contains(parties.stranger.verifyingKey.fingerprint.keyID) && error.reason.contains(parties.exporter.verifyingKey.fingerprint.keyID))
        #expect(try parties.isEmpty)
    }

    /// A signed export to a recipient still needs the importer to name the signer: the key inside the
    /// export is the exporter's claim, not a proof.
    @Test func aSignedExportWithoutANamedSignerIsRefused() throws {
        let parties = try Parties()
        let file = try parties.export(to: [parties.importer.publicKey], signedBy: parties.stranger)
        let error = try #require(throws: KeychainError.untrustedExport) { try parties.target.keychain.importItems(file, credential: .identity(parties.importer)) }
        #expect(error.reason.contains("no key was named"), "\(error.reason)")
        #expect(try parties.isEmpty)
    }

    /// A recipient who opened a signed export cannot pass it on, encrypted again, as made for another.
    @Test func aForwardedExportIsRefused() throws {
        let parties = try Parties()
        let other = RecipientPrivateKey.generateX25519()
        let file = try parties.export(to: [other.publicKey], signedBy: parties.exporter)
        let document = try CofferEncryption.decrypt(file, with: .identity(other))
        let forwarded = try CofferEncryption.encrypt(document, to: .recipients([parties.importer.publicKey]))
        let error = try #require(throws: KeychainError.untrustedExport) {
            try parties.target.keychain.importItems(forwarded, credential: .identity(parties.importer), author: .signer(parties.exporter.verifyingKey))
        }
        #expect(error.reason.contains("other recipients"), "\(error.reason)")
        let underPassword = try CofferEncryption.encrypt(document, to: .password(Self.exportPassword, .scrypt(logN: 10, r: 8, p: 1)))
        #expect(throws: KeychainError.untrustedExport) {
            try parties.target.keychain.importItems(underPassword, credential: .password(Self.exportPassword))
        }
        #expect(try parties.isEmpty)
    }

    @Test func aChangedSignatureIsRefused() throws {
        let parties = try Parties()
        let file = try parties.export(to: [parties.importer.publicKey], signedBy: parties.exporter)
        var document = try CofferEncryption.decrypt(file, with: .identity(parties.importer))
        document[document.count - 1] ^= 1
        let resealed = try CofferEncryption.encrypt(document, to: .recipients([parties.importer.publicKey]))
        for author in [KeychainExportAuthor.signer(parties.exporter.verifyingKey), .insecureAnyone] {
            let error = try #require(throws: KeychainError.untrustedExport) {
                try parties.target.keychain.importItems(resealed, credential: .identity(parties.importer), author: author)
            }
            #expect(error.reason.contains("does not verify"), "\(error.reason)")
        }
        #expect(try parties.isEmpty)
    }

    /// What Coffer 1.0.0 wrote for recipients (an unsigned version 1 document) imports only when the
    /// caller accepts an unauthenticated export explicitly.
    @Test func aVersion1ExportToARecipientImportsOnlyWhenAcceptedExplicitly() throws {
        let parties = try Parties()
        let items = [ExportedItem(item: .genericPassword(service: "s", account: "a"), secret: bytes("from 1.0.0"))]
        let file = try CofferEncryption.encrypt(ExportDocument.encode(items), to: .recipients([parties.importer.publicKey]))
        for author in [KeychainExportAuthor.credentialHolder, .signer(parties.exporter.verifyingKey)] {
            let error = try #require(throws: KeychainError.untrustedExport) { try parties.target.keychain.importItems(file, credential: .identity(parties.importer), author: author) }
            #expect(error.reason.contains("not signed"), "\(error.reason)")
        }
        #expect(try parties.isEmpty)
        #expect(try parties.target.keychain.importItems(file, credential: .identity(parties.importer), author: .insecureAnyone).imported == 1)
        #expect(try parties.target.keychain.secret(matching: .genericPassword(service: "s", account: "a")) == bytes("from 1.0.0"))
    }

    /// Password and key exports keep working as they did, signed or not; naming a signer makes the
    /// signature required.
    @Test func passwordExportsProveTheirAuthorThemselves() throws {
        let parties = try Parties()
        let protection = EncryptionProtection.password(Self.exportPassword, .scrypt(logN: 10, r: 8, p: 1))
        let unsigned = try parties.source.keychain.exportItems(keychainPassword: Fixture.password, protection: protection).file
        #expect(ExportDocumentV2Tests.documentVersion(unsigned, password: Self.exportPassword) == 1, "unsigned exports stay version 1")
        #expect(throws: KeychainError.untrustedExport) {
            try parties.target.keychain.importItems(unsigned, credential: .password(Self.exportPassword), author: .signer(parties.exporter.verifyingKey))
        }
        #expect(try parties.target.keychain.importItems(unsigned, credential: .password(Self.exportPassword)).imported == 2)

        let signed = try parties.source.keychain.exportItems(keychainPassword: Fixture.password, protection: protection, signedBy: parties.exporter).file
        let again = try Fixture(.memory)
        #expect(try again.keychain.importItems(signed, credential: .password(Self.exportPassword), author: .signer(parties.exporter.verifyingKey)).imported == 2)
    }

    @Test func anExportToRecipientsMustBeSigned() throws {
        let parties = try Parties()
        let error = try #require(throws: KeychainError.badParameter) { try parties.export(to: [parties.importer.publicKey], signedBy: nil) }
        #expect(error.reason.contains("must be signed"), "\(error.reason)")
    }

    /// Every recipient of a signed export can import it, each checked against its own key.
    @Test func everyRecipientOfASignedExportImports() throws {
        let parties = try Parties()
        let second = RecipientPrivateKey.generateX25519()
        let file = try parties.export(to: [parties.importer.publicKey, second.publicKey], signedBy: parties.exporter)
        for identity in [parties.importer, second] {
            let target = try Fixture(.memory)
            #expect(try target.keychain.importItems(file, credential: .identity(identity), author: .signer(parties.exporter.verifyingKey)).imported == 2)
        }
    }
}
