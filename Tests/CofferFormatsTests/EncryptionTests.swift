import CofferCore
import CofferCrypto
import CofferFormats
import CofferTestSupport
import CofferTesting
import Crypto
import Foundation
import Testing

@Suite("Coffer encrypted files")
struct EncryptionTests {
    static let segment = 1 << Int(CofferEncryption.defaultSegmentLog)
    /// Cheap password settings so that the suite stays fast; production defaults are tested once below.
    static let fastPassword = EncryptionProtection.password(Array("correct horse".utf8), .scrypt(logN: 10, r: 8, p: 1))

    static func protections() -> [(EncryptionProtection, DecryptionCredential, String)] {
        let key = EncryptionKey.generate()
        let x25519 = RecipientPrivateKey.generateX25519()
        let p256 = RecipientPrivateKey.p256(.init())
        return [
            (fastPassword, .password(Array("correct horse".utf8)), "password"),
            (.key(key), .key(key), "key"),
            (.recipients([x25519.publicKey, p256.publicKey]), .identity(x25519), "X25519 recipient"),
            (.recipients([x25519.publicKey, p256.publicKey]), .identity(p256), "P-256 recipient"),
        ]
    }

    @Test(arguments: [0, 1, segment - 1, segment, segment + 1, 3 * segment, 3 * segment + 7])
    func roundTripsEveryModeAndCipher(size: Int) throws {
        let plaintext = Fixtures.randomBytes(count: size)
        for (protection, credential, name) in Self.protections() {
            for cipher in EncryptionCipher.allCases {
                let sealed = try CofferEncryption.encrypt(plaintext, to: protection, cipher: cipher)
                let segments = max(1, (size + Self.segment - 1) / Self.segment)
                #expect(sealed.count > size + 16 * segments, "\(name) \(cipher)")
                #expect(try CofferEncryption.decrypt(sealed, with: credential) == plaintext, "\(name) \(cipher) \(size)")
            }
        }
    }

    @Test func hundredMebibyteFilesInEveryModeAndCipher() throws {
        let folder = try TemporaryDirectory()
        let input = try folder.write(Fixtures.randomBytes(count: 100 << 20), to: "big.bin")
        let expected = try DigestAlgorithm.sha256.hash(fileAtPath: input)
        for (protection, credential, name) in Self.protections() {
            for cipher in EncryptionCipher.allCases {
                try CofferEncryption.encryptFile(atPath: input, toPath: folder.path("big.coffer"), to: protection, cipher: cipher, overwrite: true)
                try CofferEncryption.decryptFile(atPath: folder.path("big.coffer"), toPath: folder.path("big.out"), with: credential, overwrite: true)
                #expect(try DigestAlgorithm.sha256.hash(fileAtPath: folder.path("big.out")) == expected, "\(name) \(cipher)")
            }
        }
        #expect(try FileManager.default.attributesOfItem(atPath: folder.path("big.out"))[.posixPermissions] as? Int == 0o600)
    }

    /// File outputs are preallocated from the input's size, then trimmed to what was written: every
    /// file must be exactly as long as the same message encrypted in memory, and decrypt to exactly the
    /// plaintext.
    @Test(arguments: [0, 1, segment - 1, segment, segment + 1, 16 * segment - 1, 16 * segment, 16 * segment + 1, 40 * segment + 7])
    func filesAreExactlyAsLongAsTheirContents(size: Int) throws {
        let folder = try TemporaryDirectory()
        let plaintext = Fixtures.randomBytes(count: size)
        let input = try folder.write(plaintext, to: "plain")
        let key = EncryptionKey.generate()
        for cipher in EncryptionCipher.allCases {
            try CofferEncryption.encryptFile(atPath: input, toPath: folder.path("sealed"), to: .key(key), cipher: cipher, overwrite: true)
            let sealed = try Fixtures.contents(ofFile: folder.path("sealed"))
            #expect(sealed.count == (try CofferEncryption.encrypt(plaintext, to: .key(key), cipher: cipher)).count, "\(cipher) \(size)")
            try CofferEncryption.decryptFile(atPath: folder.path("sealed"), toPath: folder.path("opened"), with: .key(key), overwrite: true)
            let opened = try Fixtures.contents(ofFile: folder.path("opened"))
            #expect(opened.count == size, "\(cipher)")
            let intact = opened == plaintext  // a Bool: Swift Testing would diff megabyte arrays for ever
            #expect(intact, "\(cipher) \(size)")
        }
        #expect(try folder.contents() == ["opened", "plain", "sealed"])
    }

    @Test func everySingleBitFlipIsRejected() throws {
        let key = EncryptionKey.generate()
        let sealed = try CofferEncryption.encrypt(Array("a small secret".utf8), to: .key(key))
        for offset in sealed.indices {
            for bit in [0, 7] {
                var tampered = sealed
                tampered[offset] ^= UInt8(1 << bit)
                #expect(throws: CofferFormatsError.self, "flip at \(offset)") { try CofferEncryption.decrypt(tampered, with: .key(key)) }
            }
        }
    }

    @Test func truncationReorderingDuplicationAndAppendingAreRejected() throws {
        let key = EncryptionKey.generate()
        let plaintext = Fixtures.randomBytes(count: 3 * Self.segment + 100)
        let sealed = try CofferEncryption.encrypt(plaintext, to: .key(key))
        let headerLength = sealed.count - (plaintext.count + 4 * 16)
        let sealedSegment = Self.segment + 16
        let segments = (0..<4).map { index -> [UInt8] in
            let start = headerLength + index * sealedSegment
            return Array(sealed[start..<min(sealed.count, start + sealedSegment)])
        }
        let header = Array(sealed[0..<headerLength])
        var variants: [(String, [UInt8])] = [
            ("header only", header),
            ("swapped", header + segments[1] + segments[0] + segments[2] + segments[3]),
            ("duplicated", header + segments[0] + segments[0] + segments[1] + segments[2] + segments[3]),
            ("appended byte", sealed + [0]),
            ("appended segment", sealed + segments[1]),
            ("last segment dropped", header + segments[0] + segments[1] + segments[2]),
        ]
        for cut in stride(from: headerLength, to: sealed.count, by: 4099) { variants.append(("cut at \(cut)", Array(sealed[0..<cut]))) }
        for boundary in 1...3 { variants.append(("cut at boundary \(boundary)", Array(sealed[0..<(headerLength + boundary * sealedSegment)]))) }
        for (name, bytes) in variants {
            #expect(throws: CofferFormatsError.self, "\(name)") { try CofferEncryption.decrypt(bytes, with: .key(key)) }
        }
    }

    @Test func wrongSecretsAreOneErrorOrNameTheKey() throws {
        let sealed = try CofferEncryption.encrypt(Array("x".utf8), to: Self.fastPassword)
        let wrong = try #require(throws: CofferFormatsError.authenticationFailed) { try CofferEncryption.decrypt(sealed, with: .password(Array("wrong".utf8))) }
        #expect(wrong.reason == "wrong password or key, or the data is corrupted or truncated")
        let keyed = try CofferEncryption.encrypt(Array("x".utf8), to: .key(EncryptionKey.generate()))
        #expect(throws: CofferFormatsError.noMatchingKey) { try CofferEncryption.decrypt(keyed, with: .key(EncryptionKey.generate())) }
        let recipientSealed = try CofferEncryption.encrypt(Array("x".utf8), to: .recipients([RecipientPrivateKey.generateX25519().publicKey]))
        #expect(throws: CofferFormatsError.noMatchingKey) {
            try CofferEncryption.decrypt(recipientSealed, with: .identity(RecipientPrivateKey.generateX25519()))
        }
        #expect(throws: CofferFormatsError.self) { try CofferEncryption.decrypt(sealed, with: .key(EncryptionKey.generate())) }
    }

    @Test func readerLimitsRefuseCostlyHeadersBeforeDerivingAnything() throws {
        let sealed = try CofferEncryption.encrypt(Array("x".utf8), to: .password(Array("pw".utf8), .scrypt(logN: 12, r: 8, p: 1)))
        let error = try #require(throws: CofferFormatsError.costTooHigh) {
            try CofferEncryption.decrypt(sealed, with: .password(Array("pw".utf8)), limits: PasswordKDFLimits(maximumScryptLogN: 11))
        }
        #expect(error.reason.contains("limit of N=2^"))
        #expect(try CofferEncryption.decrypt(sealed, with: .password(Array("pw".utf8))) == Array("x".utf8))
    }

    @Test func defaultPasswordSettingsAndPBKDF2() throws {
        let scrypt = try CofferEncryption.encrypt(Array("x".utf8), to: .password(Array("pw".utf8)))
        #expect(try CofferEncryption.decrypt(scrypt, with: .password(Array("pw".utf8))) == Array("x".utf8))
        let pbkdf2 = try CofferEncryption.encrypt(Array("x".utf8), to: .password(Array("pw".utf8), .pbkdf2(iterations: 600_000)))
        #expect(try CofferEncryption.decrypt(pbkdf2, with: .password(Array("pw".utf8))) == Array("x".utf8))
        #expect(throws: CofferFormatsError.self) { try CofferEncryption.encrypt([], to: .password(Array("pw".utf8), .pbkdf2(iterations: 1000))) }
    }

    @Test func malformedHeadersAreTypedErrors() throws {
        let key = EncryptionKey.generate()
        let sealed = try CofferEncryption.encrypt([1, 2, 3], to: .key(key))
        var version = sealed
        version[8] = 2
        var segmentLog = sealed
        segmentLog[10] = 40
        var stanzaCount = sealed
        stanzaCount[11] = 0
        for (name, bytes) in [("empty", []), ("not coffer", Array("hello world, this is text".utf8)), ("version", version),
                              ("segment size", segmentLog), ("no stanzas", stanzaCount), ("short", Array(sealed.prefix(20)))] {
            #expect(throws: CofferFormatsError.self, "\(name)") { try CofferEncryption.decrypt(bytes, with: .key(key)) }
        }
        let error = try #require(throws: CofferFormatsError.self) { try CofferEncryption.decrypt(version, with: .key(key)) }
        #expect(error.reason == "unsupported encrypted-file version 2; this Coffer reads version 1")
    }

    @Test func failedFileDecryptionLeavesNothingBehind() throws {
        let folder = try TemporaryDirectory()
        let key = EncryptionKey.generate()
        let input = try folder.write(Fixtures.randomBytes(count: 5 * Self.segment), to: "plain")
        try CofferEncryption.encryptFile(atPath: input, toPath: folder.path("sealed"), to: .key(key))
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("sealed"))))
        bytes[bytes.count - 10] ^= 1
        try folder.write(bytes, to: "sealed")
        try folder.write("keep me", to: "out")
        #expect(throws: CofferFormatsError.self) {
            try CofferEncryption.decryptFile(atPath: folder.path("sealed"), toPath: folder.path("out"), with: .key(key), overwrite: true)
        }
        #expect(try String(contentsOfFile: folder.path("out"), encoding: .utf8) == "keep me")
        #expect(try folder.contents() == ["out", "plain", "sealed"])
    }
}

@Suite("Data API")
struct EncryptionDataAPITests {
    @Test func dataInDataOut() throws {
        let key = EncryptionKey.generate()
        let plaintext = Data("a diary entry".utf8)
        let sealed: Data = try CofferEncryption.encrypt(plaintext, to: .key(key))
        #expect(try CofferEncryption.decrypt(sealed, with: .key(key)) == plaintext)
        let rn: Data = try RNCryptor.encrypt(plaintext, with: .password(Array("pw".utf8)))
        #expect(try RNCryptor.decrypt(rn, with: .password(Array("pw".utf8))) == plaintext)
    }
}

/// A file written once by Coffer and pinned here: every future version must still read it, and its header
/// must be laid out exactly as docs/FORMAT-ENCRYPTION.md says (checked field by field, independently of
/// the parser, with the key id recomputed from the spec's derivation).
@Suite("Encrypted format fixed vector")
struct EncryptionFixedVectorTests {
    static let key = try? EncryptionKey(bytes: Array(0..<32) as [UInt8])
    static let file = """
        434f46464552004501011001030048adebf9ca4fd4774a4f39fb8cc85290f86b9f49e9adc662a0f09ef8e661d5ae4aa114\
        c0a7c6d4cae2525fb471ab35bf6cadfe12ea667c59f12adfa3888b78c0c50062d5816f548c6bf3ee9b3c5fe3057437386a\
        6ebf1f51e7904d0a6472d6f8b0b54928395b9db69c1e6fda27708785962ad7ce728e4f89ebae10ec5aee58a19e0fb75adc\
        f0a716af130d8198ffe07f5ea3e15ef553
        """

    @Test func decryptsToTheKnownPlaintext() throws {
        let key = try #require(Self.key)
        #expect(try CofferEncryption.decrypt(Hex.decode(Self.file), with: .key(key)) == Array("hello, coffer".utf8))
    }

    @Test func headerMatchesTheSpecification() throws {
        let bytes = try Hex.decode(Self.file)
        #expect(Array(bytes[0..<8]) == [0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x00, 0x45], "magic")
        #expect(bytes[8] == 1, "version")
        #expect(bytes[9] == 1, "cipher: AES-256-GCM")
        #expect(bytes[10] == 16, "segment-log: 64 KiB")
        #expect(bytes[11] == 1, "one stanza")
        #expect(bytes[12] == 3, "stanza type: 256-bit key")
        #expect(Int(bytes[13]) << 8 | Int(bytes[14]) == 72, "key stanza body: id 8 + salt 16 + wrapped 48")
        let keyID = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Array(0..<32) as [UInt8]), info: Array("coffer-v1 key-id".utf8), outputByteCount: 8
        ).withUnsafeBytes { Array($0) }
        #expect(Array(bytes[15..<23]) == keyID, "key id per the spec's HKDF")
        // Header: 12 fixed + 3 + 72 stanza + 16 payload nonce + 32 MAC = 135; then one final segment of
        // 13 bytes of plaintext and a 16-byte tag.
        #expect(bytes.count == 135 + 13 + 16)
        let key = try #require(Self.key)
        #expect(throws: CofferFormatsError.self, "a truncated copy of the vector is rejected") {
            try CofferEncryption.decrypt(Array(bytes.dropLast()), with: .key(key))
        }
    }
}

/// The in-memory entry points throw `CofferFormatsError` (typed): a caller reads the code without casting.
@Suite("Typed encryption errors")
struct TypedEncryptionErrorTests {
    @Test func aWrongPasswordIsReadWithoutACast() throws {
        let sealed = try CofferEncryption.encrypt(Array("x".utf8), to: .password(Array("right".utf8), .scrypt(logN: 10, r: 8, p: 1)))
        do {
            _ = try CofferEncryption.decrypt(sealed, with: .password(Array("wrong".utf8)))
            Issue.record("a wrong password must not decrypt")
        } catch {
            #expect(error.code == .authenticationFailed || error.code == .noMatchingKey)
        }
        do {
            _ = try RNCryptor.decrypt(Array(repeating: 0, count: 10), with: .password(Array("pw".utf8)))
            Issue.record("ten zero bytes are not an RNCryptor message")
        } catch {
            #expect(error.code == .malformedCiphertext || error.code == .unsupported)
        }
    }
}
