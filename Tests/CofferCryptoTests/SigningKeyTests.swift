import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Signing keys")
struct SigningKeyTests {
    /// One signature, one meaning: a message that begins with one of Coffer's signing labels is not
    /// signed as a plain message (its signature could pass for a keychain export's or a signature
    /// file's), by any kind of key; the labels' shape is all that is looked at.
    @Test(arguments: [KeyAlgorithm.ed25519, .p256, .rsa2048])
    func messagesThatBeginWithASigningLabelAreNotSigned(type: KeyAlgorithm) throws {
        let key = try SigningKey.generate(type)
        for label in ["coffer-keychain-export v2", "coffer-signature-v1", "coffer-keychain-export v3", "coffer-some-future-purpose v9"] {
            let message = Array(label.utf8) + [0] + Array("COFFERKC".utf8)
            let error = try #require(throws: CofferCryptoError.self) { try key.signature(for: message) }
            #expect(error.code == .invalidArgument && error.reason.contains("'\(label)'"), "\(error.reason)")
        }
        for alike in ["coffer-keychain-export v2 without its zero byte", "Coffer-signature-v1\u{0}", "coffer-\u{1}\u{0}", "xcoffer-signature-v1\u{0}"] {
            #expect(throws: Never.self, "\(alike.debugDescription)") { try key.signature(for: Array(alike.utf8)) }
        }
        #expect(SigningLabel.label(beginning: Array("coffer-signature-v1".utf8) + [0, 1, 2]) == "coffer-signature-v1")
        #expect(SigningLabel.label(beginning: Array("coffer-".utf8) + Array(repeating: 0x61, count: 60) + [0]) == nil, "longer than a label")
    }

    @Test(arguments: KeyAlgorithm.allCases)
    func generateSignVerifyAndRoundTripDER(type: KeyAlgorithm) throws {
        let key = try SigningKey.generate(type)
        #expect(key.algorithm == type)
        let message = Array("attack at dawn".utf8)
        let signature = try key.signature(for: message)
        let publicKey = key.verifyingKey
        #expect(publicKey.isValidSignature(signature, for: message))
        #expect(!publicKey.isValidSignature(signature, for: Array("attack at dusk".utf8)))

        // PKCS#8 and SPKI round trips keep the same key and fingerprint.
        let reread = try SigningKey(pkcs8DERRepresentation: key.pkcs8DERRepresentation)
        #expect(reread.verifyingKey == publicKey)
        let rereadPublic = try VerifyingKey(derRepresentation: publicKey.derRepresentation)
        #expect(rereadPublic.fingerprint == publicKey.fingerprint)
        #expect(rereadPublic.isValidSignature(signature, for: message))

        // Another key of the same type does not verify it.
        let other = try SigningKey.generate(type)
        #expect(!other.verifyingKey.isValidSignature(signature, for: message))
    }

    @Test(arguments: [KeyAlgorithm.rsa2048, .p256, .p521, .ed25519, .mldsa65])
    func filesAreSignedAsTheirStreamedDigest(type: KeyAlgorithm) throws {
        let folder = try TemporaryDirectory()
        let bytes = Fixtures.randomBytes(count: FileReader.defaultChunkSize * 5 + 3)
        let path = try folder.write(bytes, to: "release.bin")
        let key = try SigningKey.generate(type)
        let signature = try key.signature(forDigestOfFileAtPath: path)
        #expect(try key.verifyingKey.isValidSignature(signature, forDigestOfFileAtPath: path))
        let digest = DigestAlgorithm.sha512.hash(bytes)
        #expect(key.verifyingKey.isValidSignature(signature, for: digest))
        var tampered = bytes
        tampered[tampered.count / 2] ^= 1
        try folder.write(tampered, to: "release.bin")
        #expect(try !key.verifyingKey.isValidSignature(signature, forDigestOfFileAtPath: path))
    }

    @Test func rsaPaddingAndECDSAEncodingsAreDistinct() throws {
        let rsa = try SigningKey.generate(.rsa2048)
        let message = Array("m".utf8)
        let pkcs1 = try rsa.signature(for: message)
        let pss = try rsa.signature(for: message, options: SignatureOptions(rsaPadding: .pss))
        #expect(try rsa.signature(for: message) == pkcs1, "PKCS#1 v1.5 is deterministic")
        #expect(rsa.verifyingKey.isValidSignature(pss, for: message, options: SignatureOptions(rsaPadding: .pss)))
        #expect(!rsa.verifyingKey.isValidSignature(pss, for: message))
        #expect(!rsa.verifyingKey.isValidSignature(pkcs1, for: message, options: SignatureOptions(rsaPadding: .pss)))

        let ec = try SigningKey.generate(.p384)
        let raw = try ec.signature(for: message, options: SignatureOptions(ecdsaEncoding: .raw))
        #expect(raw.count == 96)
        #expect(ec.verifyingKey.isValidSignature(raw, for: message, options: SignatureOptions(ecdsaEncoding: .raw)))
        #expect(!ec.verifyingKey.isValidSignature(raw, for: message))
    }

    @Test func malformedSignaturesAreInvalidNotFatal() throws {
        for type in KeyAlgorithm.allCases where type != .rsa3072 && type != .rsa4096 {
            let key = try SigningKey.generate(type).verifyingKey
            for signature in [[], [0], [UInt8](repeating: 0xFF, count: 10), [UInt8](repeating: 0, count: 5000)] {
                #expect(!key.isValidSignature(signature, for: Array("x".utf8)), "\(type)")
                #expect(!key.isValidSignature(signature, for: Array("x".utf8), options: SignatureOptions(rsaPadding: .pss, ecdsaEncoding: .raw)))
            }
        }
    }

    @Test func garbageKeysAreTypedErrors() {
        for bytes in [[], [0x30], [0x30, 0x03, 0x02, 0x01, 0x00], Fixtures.randomBytes(count: 100)] {
            #expect(throws: CofferCryptoError.self) { try VerifyingKey(derRepresentation: bytes) }
            #expect(throws: CofferCryptoError.self) { try SigningKey(pkcs8DERRepresentation: bytes) }
        }
    }

    @Test func fingerprintFormsAreStable() throws {
        // The Ed25519 public key of RFC 8032 test 1.
        let spki = try Hex.decode("302a300506032b6570032100d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let fingerprint = try VerifyingKey(derRepresentation: spki).fingerprint
        #expect(fingerprint.hex == DigestAlgorithm.sha256.hash(spki).hex)
        #expect(fingerprint.keyID == String(fingerprint.hex.prefix(16)))
        let groups = fingerprint.readAloud.split(separator: " ")
        #expect(groups.count == 6 && groups.allSatisfy { $0.count == 5 && $0.allSatisfy(\.isNumber) })
        #expect(fingerprint.base64.hasPrefix("SPKI-SHA256:") && !fingerprint.base64.hasSuffix("="))
    }

    @Test func privateKeyNeverPrints() throws {
        let key = try SigningKey.generate(.p256)
        #expect("\(key)".hasPrefix("SigningKey(P-256, id "))
    }
}
