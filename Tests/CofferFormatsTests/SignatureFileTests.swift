import CofferCore
import CofferCrypto
import CofferFormats
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Coffer signature files")
struct SignatureFileTests {
    /// RFC 8032 test 1's key, so that Ed25519 signatures are fixed vectors.
    static func fixedKey() throws -> SigningKey {
        let prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]
        return try SigningKey(pkcs8DERRepresentation: prefix + Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
    }

    /// The spec's layout and signed message, rebuilt here independently of the implementation.
    @Test func fixedVectorMatchesTheSpecification() throws {
        let key = try Self.fixedKey()
        let digest = DigestAlgorithm.sha512.hash(Array("abc".utf8))
        let file = try SignatureFile.sign(digest: digest, with: key, comment: "fixed vector")
        let keyID = Array(key.verifyingKey.fingerprint.sha256.prefix(8))
        let comment = Array("fixed vector".utf8)
        let message = Array("coffer-signature-v1".utf8) + [0, 0x01, 0x03] + keyID + [0, UInt8(comment.count)] + comment + digest.bytes
        #expect(key.verifyingKey.isValidSignature(file.signature, for: message), "the signature covers M as specified")
        let expectedBinary = Array("CSIG".utf8) + [0x01, 0x01, 0x03] + keyID + [0, UInt8(comment.count)] + comment + [0, 64] + file.signature
        #expect(file.binary == expectedBinary)
        // Ed25519 is deterministic: the whole file is a fixed vector.
        #expect(file.armored == """
            -----BEGIN COFFER SIGNATURE-----
            Q1NJRwEBAwbj/Y/aKbtgAAxmaXhlZCB2ZWN0b3IAQHhxZCjpzdkbrIa2SSqA1NB0
            BcxjeRw4NGNZXwuVNuacJdbWrDhRXmjIwlOfvwWqDI91QemGW6+7U84nmb5paQs=
            -----END COFFER SIGNATURE-----

            """)
    }

    @Test(arguments: [KeyAlgorithm.ed25519, .p256, .p384, .p521, .rsa2048, .mldsa65, .mldsa87])
    func signAndVerifyFiles(type: KeyAlgorithm) throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(Fixtures.randomBytes(count: 100_000), to: "data")
        let key = try SigningKey.generate(type)
        for padding in type == .rsa2048 ? [RSAPadding.pss, .pkcs1v15] : [.pss] {
            let file = try SignatureFile.sign(fileAtPath: path, with: key, comment: "release ✓", rsaPadding: padding)
            let reparsed = try SignatureFile(parsing: file.armored)
            #expect(reparsed == file)
            #expect(try reparsed.verify(fileAtPath: path, with: key.verifyingKey) == .valid(comment: "release ✓"))
            let other = try SigningKey.generate(type).verifyingKey
            if case .wrongKey = try reparsed.verify(fileAtPath: path, with: other) {} else { Issue.record("another key must be named") }
        }
    }

    @Test func everyHeaderOrCommentChangeInvalidates() throws {
        let key = try Self.fixedKey()
        let digest = DigestAlgorithm.sha512.hash(Array("abc".utf8))
        let binary = try SignatureFile.sign(digest: digest, with: key, comment: "fixed vector").binary
        // Flip one bit at every offset: the result must fail to parse or fail to verify, never pass.
        for offset in binary.indices {
            var tampered = binary
            tampered[offset] ^= 0x01
            guard let parsed = try? SignatureFile(binary: tampered) else { continue }
            let outcome = parsed.verify(digest: digest, with: key.verifyingKey)
            #expect(outcome != .valid(comment: parsed.unverifiedComment), "a flip at offset \(offset) verified")
        }
        let otherDigest = DigestAlgorithm.sha512.hash(Array("abd".utf8))
        #expect(try SignatureFile(binary: binary).verify(digest: otherDigest, with: key.verifyingKey) == .invalid)
    }

    @Test func algorithmCannotBeSwitchedForAKey() throws {
        let key = try SigningKey.generate(.p256)
        let digest = DigestAlgorithm.sha512.hash(Array("x".utf8))
        var binary = try SignatureFile.sign(digest: digest, with: key, comment: "").binary
        binary[5] = SignatureFile.Algorithm.ecdsaP384.rawValue
        // P-384 signatures are 96 bytes; the parser refuses the length before anything else.
        #expect(throws: CofferFormatsError.self) { try SignatureFile(binary: binary) }
        binary[5] = SignatureFile.Algorithm.ed25519.rawValue
        let parsed = try SignatureFile(binary: binary)
        #expect(parsed.verify(digest: digest, with: key.verifyingKey) == .wrongAlgorithm(signature: .ed25519, key: .p256))
    }

    @Test func malformedFilesAreTypedErrors() throws {
        let key = try Self.fixedKey()
        let good = try SignatureFile.sign(digest: DigestAlgorithm.sha512.hash(Array("abc".utf8)), with: key, comment: "c").binary
        var wrongVersion = good
        wrongVersion[4] = 2
        var badHash = good
        badHash[6] = 9
        var nulComment = good
        nulComment[17] = 0
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("bad magic", Array("XSIG".utf8) + good.dropFirst(4)),
            ("version 2", wrongVersion),
            ("unknown hash", badHash),
            ("NUL in comment", nulComment),
            ("truncated", Array(good.dropLast(1))),
            ("trailing byte", good + [0]),
            ("huge comment length", Array(good.prefix(15)) + [0xFF, 0xFF]),
        ]
        for (name, bytes) in cases {
            #expect(throws: CofferFormatsError.self, "\(name)") { try SignatureFile(binary: bytes) }
        }
        let wrongVersionError = try #require(throws: CofferFormatsError.self) { try SignatureFile(binary: wrongVersion) }
        #expect(wrongVersionError.reason == "unsupported signature version 2; this Coffer reads version 1")
        #expect(throws: CofferFormatsError.self) { try SignatureFile(parsing: "not a signature") }
        #expect(throws: CofferFormatsError.self) { try SignatureFile(parsing: "-----BEGIN COFFER SIGNATURE-----\nQ1NJ\n") }
        #expect(throws: CofferFormatsError.self) { try SignatureFile(parsing: PEMArmor.encode(good, label: "PUBLIC KEY")) }
    }

    @Test func commentLimits() throws {
        let key = try Self.fixedKey()
        let digest = DigestAlgorithm.sha512.hash(Array("abc".utf8))
        #expect(throws: CofferFormatsError.self) { try SignatureFile.sign(digest: digest, with: key, comment: String(repeating: "x", count: 1025)) }
        #expect(throws: CofferFormatsError.self) { try SignatureFile.sign(digest: digest, with: key, comment: "a\u{0}b") }
        _ = try SignatureFile.sign(digest: digest, with: key, comment: String(repeating: "x", count: 1024))
    }
}

extension SignatureFile.Verification {
    static func != (lhs: Self, rhs: Self) -> Bool { !(lhs == rhs) }
}
