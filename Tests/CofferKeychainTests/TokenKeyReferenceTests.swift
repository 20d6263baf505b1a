import CofferCore
import CofferCrypto
import CofferKeychain
import CofferTesting
import Testing

/// Keys on hardware tokens are found by tag like any key (issue 24): the keychain keeps the key's
/// pkcs11: URI, never key material, and says so when asked for a software key.
@Suite("Token key references by tag")
struct TokenKeyReferenceTests {
    @Test func aTokenKeyIsFoundByTagAsItsURI() throws {
        let temporary = try TemporaryKeychain()
        let keychain = temporary.keychain
        let publicKey = try SigningKey.generate(.p256).verifyingKey
        let uri = "pkcs11:token=release;object=signing;id=%01;type=private"
        try keychain.addTokenKeyReference(uri, publicKey: publicKey, tag: "com.example.signing", label: "release signing")
        guard case .token(let found) = try keychain.storedSigningKey(tag: "com.example.signing") else {
            Issue.record("the reference did not read back as a token key")
            return
        }
        #expect(found == uri)
        // The item describes the key as any key item does: type, size, the public key's fingerprint.
        let item = try #require(try keychain.copyMatching(.key(applicationTag: Array("com.example.signing".utf8), keyClass: .privateKey)).first).item
        #expect(item.keyType == "ec-p256" && item.applicationLabel == publicKey.fingerprint.sha256 && item.label == "release signing")
        // Asked for a software key, the keychain says where the key is instead of failing obscurely.
        let error = try #require(throws: KeychainError.badParameter) { try keychain.signingKey(tag: "com.example.signing") }
        #expect(error.reason.contains("on a hardware token") && error.reason.contains(uri))
        // A software key under another tag still reads as one.
        let software = try SigningKey.generate(.ed25519)
        try keychain.add(software, tag: "com.example.software")
        guard case .software(let key) = try keychain.storedSigningKey(tag: "com.example.software") else {
            Issue.record("a software key read back as a token key")
            return
        }
        #expect(key.verifyingKey == software.verifyingKey)
    }

    @Test func onlyPKCS11URIsAreReferences() throws {
        let temporary = try TemporaryKeychain()
        let publicKey = try SigningKey.generate(.p256).verifyingKey
        #expect(throws: KeychainError.badParameter) {
            try temporary.keychain.addTokenKeyReference("file:/etc/key.pem", publicKey: publicKey, tag: "t")
        }
    }
}
