#if canImport(CryptoKit) && !os(Linux)
import CofferCrypto
import Foundation
import Testing

/// The Secure Enclave case of a hardware key (issue 24). These tests run only on Apple hardware with a
/// Secure Enclave: Coffer's CI is Linux, so they are written and compiled there, not run.
@Suite("Secure Enclave keys", .enabled(if: SecureEnclaveSigningKey.isAvailable, "needs a Secure Enclave"))
struct SecureEnclaveSigningKeyTests {
    @Test func signsAsASoftwareP256KeyDoes() throws {
        let key = try SecureEnclaveSigningKey.generate()
        let message = Array("release 1.2\n".utf8)
        let signature = try key.signature(for: message, options: SignatureOptions())
        #expect(key.verifyingKey.isValidSignature(signature, for: message))
        let digest = DigestAlgorithm.sha256.hash(message)
        let raw = try key.signature(for: digest, options: SignatureOptions(hash: .sha256, ecdsaEncoding: .raw))
        #expect(key.verifyingKey.isValidSignature(raw, for: digest, options: SignatureOptions(hash: .sha256, ecdsaEncoding: .raw)))
        #expect(throws: CofferCryptoError.self) { try key.signature(for: message, options: SignatureOptions(hash: .sha512)) }
    }

    @Test func reopensFromItsHandleOnTheSameDevice() throws {
        let key = try SecureEnclaveSigningKey.generate()
        let again = try SecureEnclaveSigningKey(dataRepresentation: key.dataRepresentation)
        #expect(again.verifyingKey == key.verifyingKey)
        #expect(throws: CofferCryptoError.self) { try SecureEnclaveSigningKey(dataRepresentation: Data(repeating: 0, count: 64)) }
    }
}
#endif
