import CofferCore
import CofferCrypto
import CofferFormats
import CofferTestSupport
import CofferTesting
import Crypto
import Foundation
import Testing

/// The two signing families say what they sign, and both still make the signatures they made before
/// they were named apart (fixed vectors recorded from the previous `signature(for:)` and
/// `signature(forFileAtPath:)`).
@Suite("Signing forms")
struct SigningFormsTests {
    static let message = Array("Coffer signs what it says it signs.\n".utf8)

    /// RFC 8032 test 1's key.
    static func ed25519() throws -> SigningKey {
        let prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]
        return try SigningKey(pkcs8DERRepresentation: prefix + Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
    }

    /// RFC 9421's `test-key-rsa` (B.1.1).
    static func rsa() throws -> SigningKey {
        try SigningKey(importing: Array(Data(contentsOf: TestVectors.url("rfc9421/keys/test-key-rsa.key.pem"))))
    }

    /// RFC 6979 A.2.5's P-256 private key.
    static func p256() throws -> SigningKey {
        try SigningKey(.p256(P256.Signing.PrivateKey(rawRepresentation: Hex.decode("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721"))))
    }

    /// A folder holding ``message`` in `message.txt`, and that file's path.
    static func messageFile() throws -> (folder: TemporaryDirectory, path: String) {
        let folder = try TemporaryDirectory()
        return (folder, try folder.write(Self.message, to: "message.txt"))
    }

    /// Ed25519 is deterministic: both forms are fixed vectors, and they differ (pure Ed25519 over the
    /// bytes, against Ed25519 over their SHA-512).
    @Test func ed25519FixedVectors() throws {
        let key = try Self.ed25519()
        let whole = "0733a61d98bda108293c1ff9f5cf13004b84bcdfa75fbd1c571af43a8e0a4d34ffd2c2d333c448e90fab9251b6969dcc6eb1d5e1ff435bbc95702a3dadf8bf0f"
        let digest = "42177f6a34eca90d2d8cd6b4d60bd6b5d75500c3f9109b38fb9088c321ecec53c5da19fba8408f3acb4b538fe079db1c67e32eb892f78ddca850accfe4e6d607"
        #expect(try Hex.encode(key.signature(for: Self.message)) == whole)
        #expect(try Hex.encode(key.signature(forDigestOf: Self.message)) == digest)
        let (folder, path) = try Self.messageFile()
        #expect(try Hex.encode(key.signature(forDigestOfFileAtPath: path)) == digest)
        #expect(try key.verifyingKey.isValidSignature(Hex.decode(digest), forDigestOfFileAtPath: path))
        #expect(try !key.verifyingKey.isValidSignature(Hex.decode(whole), forDigestOfFileAtPath: path), "one form's signature is not the other's")
        _ = folder
        #expect(try key.verifyingKey.isValidSignature(Hex.decode(whole), for: Self.message))
        #expect(try !key.verifyingKey.isValidSignature(Hex.decode(digest), for: Self.message))
        #expect(try key.verifyingKey.isValidSignature(Hex.decode(digest), forDigestOf: Self.message))
    }

    /// RSA PKCS#1 v1.5 with SHA-512 is deterministic; for RSA the two forms agree by default.
    @Test func rsaFixedVector() throws {
        let key = try Self.rsa()
        let expected = "3b2aac49b26d5ae6c71d314f7db8e9941006854b43d058d6a1b62315605355e1618c2b9e1d64e5615d26ee46224407ede6066a2cb6baa95e7f78a13351393c0f28eb987bf72494a0f0c4c7fb5c5dd5b5469e07167b76fa72feb1be3d09622abf1045ead003af7dbdceac9dceb9fdb73d41f2862453bdc37892ca65ce9d048b5452f84657b54eeead6e62e616b18cd5b635707f9b1c4499996a281190ae2aaaf884451299322e0879f942d5c7975f76b30928c8a04e5d58fad8274a9591d7143b3fb671aac2900f1545a8c1b247d9643fe6022ba711edf74261f7d9e4f68225c030d1988921ec95fbe78403e65874ccb8ea6566dbfd77f8d4a47adbb7c35312b3"
        #expect(try Hex.encode(key.signature(for: Self.message)) == expected)
        #expect(try Hex.encode(key.signature(forDigestOf: Self.message)) == expected)
        let (folder, path) = try Self.messageFile()
        #expect(try Hex.encode(key.signature(forDigestOfFileAtPath: path)) == expected)
        _ = folder
    }

    /// ECDSA signatures are randomised, so the fixed vectors are signatures made before the rename:
    /// each still verifies in its own form and only there (P-256's own SHA-256 against SHA-512).
    @Test func p256SignaturesFromBeforeStillVerify() throws {
        let key = try Self.p256().verifyingKey
        let whole = try Hex.decode("30440220708922f7e366ea1ed7ec5c03e78121e7ba7aadfae9529a2b15e4463b6a5ca9110220140be1eeaf351fb433da22a43ca16756e50f7e86ced231e21227c4074e464d67")
        let digest = try Hex.decode("3045022100ce4f277942bb6ceaed1bb402805899182ca7cb89a580fe9d47b3de9b7e4766be022039c87ec3e15625583aec789ccf1616bcc20c34f06cd36f8ead5c4cd8027fc463")
        #expect(key.isValidSignature(whole, for: Self.message))
        #expect(!key.isValidSignature(digest, for: Self.message))
        #expect(key.isValidSignature(digest, forDigestOf: Self.message))
        #expect(!key.isValidSignature(whole, forDigestOf: Self.message))
        let (folder, path) = try Self.messageFile()
        #expect(try key.isValidSignature(digest, forDigestOfFileAtPath: path))
        #expect(try !key.isValidSignature(whole, forDigestOfFileAtPath: path))
        _ = folder
    }

    /// For every key type and hash, the digest forms agree between memory and file: same bytes, same
    /// options, same signature (deterministic types) or a signature the other form accepts.
    @Test(arguments: [KeyAlgorithm.ed25519, .p256, .p384, .p521, .rsa2048, .mldsa65])
    func digestFormsAgree(type: KeyAlgorithm) throws {
        let key = try SigningKey.generate(type)
        for hash in DigestValue.signableAlgorithms {
            let options = SignatureOptions(hash: hash)
            let (folder, path) = try Self.messageFile()
            let fromMemory = try key.signature(forDigestOf: Self.message, options: options)
            let fromFile = try key.signature(forDigestOfFileAtPath: path, options: options)
            if type == .ed25519 || type == .rsa2048 { #expect(fromMemory == fromFile, "\(type) \(hash)") }
            #expect(try key.verifyingKey.isValidSignature(fromMemory, forDigestOfFileAtPath: path, options: options), "\(type) \(hash)")
            #expect(key.verifyingKey.isValidSignature(fromFile, forDigestOf: Self.message, options: options), "\(type) \(hash)")
            _ = folder
        }
    }

    /// Which algorithms sign messages whole, as the CLI's raw mode needs to know (it was CLI logic).
    @Test func whichAlgorithmsSignMessagesWhole() throws {
        let whole = KeyAlgorithm.allCases.filter { $0.signsMessagesWhole }
        #expect(whole == [.ed25519, .mldsa65, .mldsa87])
        // For Ed25519 that is visible: the message form and the digest form differ.
        let key = try Self.ed25519()
        #expect(try key.signature(for: Self.message) != key.signature(forDigestOf: Self.message))
    }

    /// Signing throws `CofferCryptoError` (typed): a caller reads the code without casting, and no
    /// swift-crypto error escapes unwrapped.
    @Test func signingErrorsAreTyped() throws {
        let key = try Self.p256()
        do {
            _ = try key.signature(for: Self.message, options: SignatureOptions(hash: .insecureSHA1))
            Issue.record("SHA-1 must be refused for a signature")
        } catch {
            #expect(error.code == .unknownAlgorithm)
        }
    }
}

/// `DigestValue` is the one digest type: what Coffer computes signs; bytes received from elsewhere
/// compare and print but are refused by signing, and a hash function signatures do not use is refused
/// whatever its origin.
@Suite("One digest type")
struct OneDigestTypeTests {
    @Test(arguments: DigestValue.signableAlgorithms)
    func computedDigestsSignAndBytesDoNot(hash: DigestAlgorithm) throws {
        let computed = hash.hash(SigningFormsTests.message)
        #expect(computed.isSignable)
        let received = try DigestValue(algorithm: hash, bytes: computed.bytes)
        #expect(received == computed, "equal digests, whatever their origin")
        #expect(!received.isSignable)
        for key in [try SigningFormsTests.ed25519(), try SigningFormsTests.rsa(), try SigningFormsTests.p256()] {
            let options = SignatureOptions(hash: hash)
            let signature = try key.signature(for: computed, options: options)
            #expect(key.verifyingKey.isValidSignature(signature, for: computed, options: options))
            #expect(signature == (try key.signature(forDigestOf: SigningFormsTests.message, options: options)) || key.algorithm != .ed25519)
            #expect(throws: CofferCryptoError.invalidArgument) { try key.signature(for: received, options: options) }
            #expect(!key.verifyingKey.isValidSignature(signature, for: received, options: options), "an unsignable digest verifies nothing")
        }
    }

    @Test(arguments: [DigestAlgorithm.sha3_256, .sha512_256, .insecureSHA1, .insecureMD5])
    func otherHashFunctionsAreRefused(hash: DigestAlgorithm) throws {
        let key = try SigningFormsTests.ed25519()
        let digest = hash.hash(SigningFormsTests.message)
        #expect(!digest.isSignable)
        #expect(throws: CofferCryptoError.unknownAlgorithm) { try key.signature(for: digest) }
        #expect(throws: CofferFormatsError.unsupported, "a SHA3-256 digest must not be recorded as SHA-512") { try SignatureFile.sign(digest: digest, with: key, comment: "") }
    }

    /// The signature file signs a message holding the digest's bytes, so a digest received as bytes
    /// (a build server's SHA-512 of an artefact) makes the same file as one Coffer computed.
    @Test func signatureFilesTakeReceivedDigests() throws {
        let key = try SigningFormsTests.ed25519()
        let computed = DigestAlgorithm.sha512.hash(SigningFormsTests.message)
        let received = try DigestValue(algorithm: .sha512, bytes: computed.bytes)
        let fromComputed = try SignatureFile.sign(digest: computed, with: key, comment: "c")
        let fromReceived = try SignatureFile.sign(digest: received, with: key, comment: "c")
        #expect(fromComputed.binary == fromReceived.binary)
        #expect(fromReceived.verify(digest: computed, with: key.verifyingKey) == .valid(comment: "c"))
    }
}
