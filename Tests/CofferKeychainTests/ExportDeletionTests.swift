import CofferCore
import CofferCrypto
import CofferFormats
@testable import CofferKeychain
import CofferTesting
import Foundation
import Testing

/// Signed exports carry the time they were made (version 3, docs/KEYCHAIN.md), and a keychain remembers
/// what it deleted: an old export no longer brings back a secret deleted after it was made.
@Suite("Keychain export: dated documents and deleted items")
struct ExportDeletionTests {
    static let exportPassword = Array("export password".utf8)
    static let madeAt = Date(timeIntervalSince1970: 1_764_000_000)

    static func query(service: String) -> KeychainQuery {
        var query = KeychainQuery(itemClass: .genericPassword)
        query.service = service
        return query
    }

    /// docs/KEYCHAIN.md's version 3 vector: version 2's item, key and recipient, made at 1,764,000,000 s
    /// (the signature computed independently, with Python's `cryptography`).
    static let vector = "434f464645524b43" + "03"
        + "002c" + "302a300506032b657003210071b011069f1c88b790ef21ecc9ef2ddce7b200381ae4e12553c9c7b400aa0185"
        + "01" + "d92caf3663ede6825bdc8de6e033686eb43ba1e378eaf3079f2782cebce3e9df"
        + "41da492040000000"
        + "00000001" + "010200" + "41cdcd650000000041cdcd6500800000"
        + "0001000000017301000000016100000000000000000000000000" + "000000026869"
        + "0040" + "8d04822e80615a73595894ec1c146ca5c6764379f2cef15c5dded1b7f50aead8072ef8126b2b8e8b2ff1477986e5912eab1f1517f795e837fc171368dddc6201"

    @Test func theDatedDocumentIsTheDocumentedOne() throws {
        let document = try ExportDocument.encode(
            [ExportDocumentTests.vectorItem], signedBy: ExportDocumentV2Tests.signer, audience: ExportDocumentV2Tests.audience, madeAt: Self.madeAt
        )
        #expect(Hex.encode(document) == Self.vector)
        let contents = try ExportDocument.read(document)
        #expect(contents.madeAt == Self.madeAt && contents.items.first?.secret == bytes("hi"))
        let proof = try #require(contents.proof)
        #expect(proof.signedBytes.starts(with: Array("coffer-keychain-export v3".utf8) + [0]))
        #expect(ExportDocumentV2Tests.signer.verifyingKey.isValidSignature(proof.signature, for: proof.signedBytes))
        for length in 0..<document.count {
            #expect(throws: KeychainError.self) { try ExportDocument.read(Array(document.prefix(length))) }
        }
        // The time is under the signature: changed, the document no longer verifies.
        var moved = document
        moved[8 + 1 + 2 + 44 + 1 + 32] ^= 0x01
        let changed = try #require(try ExportDocument.read(moved).proof)
        #expect(!ExportDocumentV2Tests.signer.verifyingKey.isValidSignature(changed.signature, for: changed.signedBytes))
    }

    /// The reproduction: an item exported (signed), then deleted, then the old export imported: the
    /// secret came back. Now the import is refused and nothing is imported; `skipExisting` leaves the
    /// item out, `restoringDeleted` brings it back on purpose.
    @Test(arguments: StoreKind.allCases)
    func anOldExportDoesNotBringBackADeletedItem(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        let revoked = KeychainItem.genericPassword(service: "api.example", account: "deploy")
        try keychain.add(revoked, secret: bytes("old token"))
        try keychain.add(.genericPassword(service: "mail.example", account: "ada"), secret: bytes("mail"))
        let signer = try SigningKey.generate(.ed25519)
        let (file, _) = try keychain.exportItems(keychainPassword: Fixture.password, protection: .password(Self.exportPassword, .scrypt(logN: 10, r: 8, p: 1)), signedBy: signer)
        #expect(try ExportDocument.read(CofferEncryption.decrypt(file, with: .password(Self.exportPassword))).madeAt != nil)

        #expect(try keychain.delete(matching: Self.query(service: "api.example")) == 1)
        try keychain.delete(matching: Self.query(service: "mail.example"))

        let refused = try #require(throws: KeychainError.self) { try keychain.importItems(file, credential: .password(Self.exportPassword)) }
        #expect(refused.code.rawValue == "untrusted-export" && (refused.reason.contains("api.example") || refused.reason.contains("mail.example")), "\(refused.reason)")
        #expect(try keychain.items(matching: KeychainQuery(itemClass: .genericPassword)).isEmpty, "nothing imported")

        let skipped = try keychain.importItems(file, credential: .password(Self.exportPassword), ifExists: .skipExisting)
        #expect(skipped.imported == 0 && skipped.skippedDeleted == 2)
        let restored = try keychain.importItems(file, credential: .password(Self.exportPassword), restoringDeleted: true)
        #expect(restored.imported == 2)
        #expect(try keychain.secret(matching: Self.query(service: "api.example")) == bytes("old token"))
    }

    /// An export made after the deletion brings the item back (it is newer than the deletion); one that
    /// does not say when it was made (version 1 or 2) does not, since it may be older.
    @Test(arguments: StoreKind.allCases)
    func onlyANewerExportRestoresADeletedIdentity(kind: StoreKind) throws {
        let target = try Fixture(kind)
        let source = try Fixture(.memory)
        defer { withExtendedLifetime((target, source)) {} }
        let item = KeychainItem.genericPassword(service: "vpn.example", account: "ops")
        try target.keychain.add(item, secret: bytes("first"))
        try target.keychain.delete(matching: Self.query(service: "vpn.example"))

        try source.keychain.add(item, secret: bytes("second"))
        let protection = EncryptionProtection.password(Self.exportPassword, .scrypt(logN: 10, r: 8, p: 1))
        let undated = try source.keychain.exportItems(keychainPassword: Fixture.password, protection: protection).file
        #expect(throws: KeychainError.self) { try target.keychain.importItems(undated, credential: .password(Self.exportPassword)) }
        let dated = try source.keychain.exportItems(keychainPassword: Fixture.password, protection: protection, signedBy: try SigningKey.generate(.p256)).file
        #expect(try target.keychain.importItems(dated, credential: .password(Self.exportPassword)).imported == 1)
        #expect(try target.keychain.secret(matching: Self.query(service: "vpn.example")) == bytes("second"))
    }

    /// An export dated more than a day ahead of this machine's clock counts as undated: it would
    /// otherwise override every later deletion of its items.
    @Test func anExportFromTheFutureIsNotBelieved() throws {
        let fixture = try Fixture(.memory)
        defer { withExtendedLifetime(fixture) {} }
        let item = KeychainItem.genericPassword(service: "db.example", account: "root")
        try fixture.keychain.add(item, secret: bytes("pw"))
        try fixture.keychain.delete(matching: Self.query(service: "db.example"))
        let protection = EncryptionProtection.password(Self.exportPassword, .scrypt(logN: 10, r: 8, p: 1))
        for (days, restores) in [(10.0, false), (0.5, true)] {
            let document = try ExportDocument.encode(
                [ExportedItem(item: item, secret: bytes("pw"))], signedBy: try SigningKey.generate(.ed25519), audience: [],
                madeAt: Date().addingTimeInterval(days * 86_400)
            )
            let file = try CofferEncryption.encrypt(document, to: protection)
            let summary = try fixture.keychain.importItems(file, credential: .password(Self.exportPassword), ifExists: .skipExisting)
            #expect(summary.imported == (restores ? 1 : 0) && summary.skippedDeleted == (restores ? 0 : 1), "\(days) days ahead: \(summary)")
        }
    }

    /// An update that changes an item's identity gives the old identity up as a deletion would.
    @Test(arguments: StoreKind.allCases)
    func anUpdateThatRenamesAnItemRemembersTheOldName(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        try keychain.add(.genericPassword(service: "old.example", account: "a"), secret: bytes("s"))
        let (file, _) = try keychain.exportItems(
            keychainPassword: Fixture.password, protection: .password(Self.exportPassword, .scrypt(logN: 10, r: 8, p: 1)), signedBy: try SigningKey.generate(.ed25519)
        )
        var change = KeychainChanges()
        change.service = "new.example"
        try keychain.update(matching: Self.query(service: "old.example"), with: change)
        let refused = try #require(throws: KeychainError.self) { try keychain.importItems(file, credential: .password(Self.exportPassword)) }
        #expect(refused.reason.contains("old.example"), "\(refused.reason)")
    }
}
