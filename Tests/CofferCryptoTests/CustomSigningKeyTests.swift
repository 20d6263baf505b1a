import CofferCore
import CofferCrypto
import Crypto
import Foundation
import Testing

/// A key Coffer does not hold, wrapped as a `SigningKey` (`SigningKey(_:)` of a `CustomSigningKey`):
/// what it reports is not trusted. A signature that its reported public key does not verify is never
/// returned, a failure is typed with the key's own error underneath, and a key that misreports its
/// algorithm is refused when it is wrapped. (Real token keys: CofferPKCS11Tests.)
@Suite("Custom signing keys")
struct CustomSigningKeyTests {
    /// A software key posing as hardware: it signs with `signer` and reports `reported` as its public
    /// key (the same key for an honest one), `algorithm` as its algorithm.
    struct PosingKey: CustomSigningKey {
        let signer: SigningKey
        let reported: VerifyingKey
        var claimed: KeyAlgorithm?

        init(signer: SigningKey, reporting reported: VerifyingKey? = nil, claiming algorithm: KeyAlgorithm? = nil) {
            self.signer = signer
            self.reported = reported ?? signer.verifyingKey
            self.claimed = algorithm
        }

        var algorithm: KeyAlgorithm { claimed ?? reported.algorithm }
        var verifyingKey: VerifyingKey { reported }
        func signature(for message: [UInt8], options: SignatureOptions) throws(CofferCryptoError) -> [UInt8] {
            try signer.signature(for: message, options: options)
        }
        func signature(for digest: DigestValue, options: SignatureOptions) throws(CofferCryptoError) -> [UInt8] {
            try signer.signature(for: digest, options: options)
        }
    }

    /// A key that fails as a removed token does, with an error type of its own.
    struct RemovedToken: CustomSigningKey {
        struct Removed: Error, CustomStringConvertible { var description: String { "CKR_DEVICE_REMOVED" } }
        let verifyingKey: VerifyingKey
        func signature(for message: [UInt8], options: SignatureOptions) throws(Removed) -> [UInt8] { throw Removed() }
        func signature(for digest: DigestValue, options: SignatureOptions) throws(Removed) -> [UInt8] { throw Removed() }
    }

    @Test(arguments: [KeyAlgorithm.p256, .p384, .p521, .ed25519, .rsa2048, .mldsa65])
    func anHonestCustomKeySignsEveryFormAsItsSoftwareKeyDoes(algorithm: KeyAlgorithm) throws {
        let software = try SigningKey.generate(algorithm)
        let key = try SigningKey(PosingKey(signer: software))
        #expect(key.isCustom && !software.isCustom)
        #expect(key.algorithm == algorithm && key.verifyingKey == software.verifyingKey)
        #expect(key.description.contains(software.verifyingKey.fingerprint.keyID))
        let message = Array("release 1.2\n".utf8)
        #expect(key.verifyingKey.isValidSignature(try key.signature(for: message), for: message))
        let digest = DigestAlgorithm.sha384.hash(message)
        let options = SignatureOptions(hash: .sha384, rsaPadding: .pss)
        #expect(key.verifyingKey.isValidSignature(try key.signature(for: digest, options: options), for: digest, options: options))
        #expect(key.verifyingKey.isValidSignature(try key.signature(forDigestOf: message), forDigestOf: message))
    }

    /// The attack: a custom key reports one public key and signs with another. Nothing it signs is
    /// returned, and its signature (taken directly) does not verify with the public key it reported.
    @Test func aKeyThatSignsWithAnotherKeyThanItReportsIsRefused() throws {
        let reported = try SigningKey.generate(.p256)
        let actual = try SigningKey.generate(.p256)
        let liar = PosingKey(signer: actual, reporting: reported.verifyingKey)
        let key = try SigningKey(liar)
        let message = Array("pay 100 to mallory".utf8)
        let forms: [() throws -> [UInt8]] = [
            { try key.signature(for: message) },
            { try key.signature(for: DigestAlgorithm.sha256.hash(message)) },
            { try key.signature(forDigestOf: message) },
        ]
        for form in forms {
            let error = #expect(throws: CofferCryptoError.self) { try form() }
            #expect(error?.code == .customKeyFailed && error?.reason.contains("does not") == true, "\(error?.reason ?? "")")
        }
        // Verification is the only trust: the liar's own signature fails under the key it reported.
        let forged = try liar.signature(for: message, options: SignatureOptions())
        #expect(!reported.verifyingKey.isValidSignature(forged, for: message))
    }

    @Test func aKeyThatMisreportsItsAlgorithmIsRefusedWhenWrapped() throws {
        let software = try SigningKey.generate(.p256)
        let error = #expect(throws: CofferCryptoError.self) { try SigningKey(PosingKey(signer: software, claiming: .ed25519)) }
        #expect(error?.code == .invalidKey && error?.reason.contains("P-256") == true, "\(error?.reason ?? "")")
    }

    /// A token removed mid-use: the signature fails typed, naming the key's own error, and the error
    /// is the custom key's, reachable as the underlying one.
    @Test func aFailingKeyThrowsTypedWithItsOwnErrorUnderneath() throws {
        let key = try SigningKey(RemovedToken(verifyingKey: try SigningKey.generate(.ed25519).verifyingKey))
        let error = #expect(throws: CofferCryptoError.self) { try key.signature(for: Array("x".utf8)) }
        #expect(error?.code == .customKeyFailed && error?.reason.contains("CKR_DEVICE_REMOVED") == true, "\(error?.reason ?? "")")
        #expect(error?.underlying is RemovedToken.Removed)
        let digest = #expect(throws: CofferCryptoError.self) { try key.signature(for: DigestAlgorithm.sha512.hash([1])) }
        #expect(digest?.code == .customKeyFailed)
    }

    /// Exporting a custom key's private key is a typed refusal that says why, never an empty result.
    @Test func aCustomKeysPrivateKeyIsNotExported() throws {
        let key = try SigningKey(PosingKey(signer: try SigningKey.generate(.ed25519)))
        let error = #expect(throws: CofferCryptoError.self) { try key.pkcs8DERRepresentation }
        #expect(error?.code == .keyNotExportable && error?.reason.contains("held outside Coffer") == true, "\(error?.reason ?? "")")
    }

    /// `KeyType` and `KeyAlgorithm` are one enum: the command line's names round-trip, and generating
    /// an RSA size Coffer does not make is refused.
    @Test func keyAlgorithmsCarryTheCommandLinesNames() throws {
        #expect(KeyAlgorithm.allCases.map(\.name) == ["rsa2048", "rsa3072", "rsa4096", "p256", "p384", "p521", "ed25519", "mldsa65", "mldsa87"])
        for algorithm in KeyAlgorithm.allCases { #expect(KeyAlgorithm(name: algorithm.name) == algorithm) }
        #expect(KeyAlgorithm(name: "rsa1024") == nil && KeyAlgorithm(name: "x25519") == nil)
        #expect(KeyAlgorithm.rsa4096 == .rsa(bits: 4096) && KeyAlgorithm.rsa4096.description == "RSA-4096")
        let error = #expect(throws: CofferCryptoError.self) { try SigningKey.generate(.rsa(bits: 1024)) }
        #expect(error?.code == .unknownAlgorithm)
    }

    /// Per-type initialisers wrap swift-crypto keys; RSA below 2048 bits is refused as before.
    @Test func oneInitialiserPerKeyType() throws {
        let p256 = P256.Signing.PrivateKey()
        #expect(SigningKey(p256).verifyingKey.derRepresentation == Array(p256.publicKey.derRepresentation))
        #expect(SigningKey(Curve25519.Signing.PrivateKey()).algorithm == .ed25519)
        #expect(SigningKey(P521.Signing.PrivateKey()).algorithm == .p521)
        #expect(SigningKey(try MLDSA87.PrivateKey()).algorithm == .mldsa87)
    }
}
