import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferTesting
import Testing

/// 256-bit keys by tag (a server's data key cached on the device).
@Suite("Encryption keys by tag")
struct EncryptionKeyItemTests {
    @Test func storedFoundAndNeverDuplicated() throws {
        let temporary = try TemporaryKeychain()
        let keychain = temporary.keychain
        let key = try EncryptionKey(bytes: try SecureRandom.bytes(count: 32))
        try keychain.add(key, tag: "com.example.data-key.v1", label: "dk_1 v1")
        let found = try keychain.encryptionKey(tag: "com.example.data-key.v1")
        let foundBytes = found.withUnsafeKeyBytes { Array($0) }
        #expect(foundBytes == key.withUnsafeKeyBytes { Array($0) })
        let item = try #require(try keychain.copyMatching(.key(applicationTag: Array("com.example.data-key.v1".utf8), keyClass: .symmetric)).first).item
        #expect(item.accessibility == .afterFirstUnlockThisDeviceOnly && item.keyType == "aes-256" && item.applicationLabel == key.keyID)
        #expect(throws: KeychainError.duplicateItem) { try keychain.add(key, tag: "com.example.data-key.v1") }
        #expect(throws: KeychainError.itemNotFound) { try keychain.encryptionKey(tag: "com.example.other") }
    }
}
