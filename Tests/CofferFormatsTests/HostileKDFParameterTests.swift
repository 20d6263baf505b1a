import CofferCore
import CofferCrypto
import CofferFormats
import Foundation
import Testing

/// Issue 42: a hostile header costs little. Every reader that takes key-derivation parameters from its
/// input refuses work above its limits before deriving anything, and every writer refuses to make what a
/// reader with the default limits would refuse. The tests assert on the refusal, never on time.
@Suite("Hostile KDF parameters")
struct HostileKDFParameterTests {
    static let password = Array("correct horse".utf8)

    /// A Coffer file of 162 bytes (a 130-byte header with one scrypt stanza, then one 16-byte segment
    /// and its tag) whose stanza asks for scrypt with these parameters. It is written at a cheap cost
    /// and its parameters changed afterwards: the reader must refuse it before the wrap or the header
    /// MAC could tell.
    static func cofferFile(logN: UInt8, r: UInt8, p: UInt8) throws -> [UInt8] {
        var file = try CofferEncryption.encrypt(Array("sixteen bytes!!!".utf8), to: .password(password, .scrypt(logN: 10, r: 8, p: 1)))
        // magic 8, version, cipher, segment log, stanza count; stanza type and length; salt 16.
        let parameters = 12 + 3 + 16
        #expect(file[12] == 1 && Array(file[parameters..<parameters + 3]) == [10, 8, 1], "the scrypt stanza's fields")
        file.replaceSubrange(parameters..<parameters + 3, with: [logN, r, p])
        return file
    }

    @Test func the162ByteFileAskingForP255IsRefusedBeforeDeriving() throws {
        let file = try Self.cofferFile(logN: 20, r: 8, p: 255)
        #expect(file.count == 162)
        let error = try #require(throws: CofferFormatsError.costTooHigh) { try CofferEncryption.decrypt(file, with: .password(Self.password)) }
        #expect(error.reason.contains("N=2^20, r=8, p=255") && (error.reason.contains("limit of work ") || error.reason.contains(" and work ")), "\(error.reason)")
    }

    @Test func writersRefuseWhatTheDefaultReadersRefuse() throws {
        for kdf in [PasswordKDF.scrypt(logN: 19, r: 8, p: 2), .scrypt(logN: 20, r: 8, p: 1), .pbkdf2(iterations: 2_000_001)] {
            #expect(throws: CofferFormatsError.costTooHigh, "\(kdf)") {
                try CofferEncryption.encrypt([1], to: .password(Self.password, kdf))
            }
            let key = try SigningKey.generate(.ed25519)
            #expect(throws: CofferFormatsError.costTooHigh, "\(kdf)") {
                try key.encryptedPKCS8Representation(password: Self.password, kdf: kdf)
            }
        }
        #expect(throws: CofferFormatsError.costTooHigh) {
            try OpenSSLEnc.encrypt([1], password: Self.password, iterations: 2_000_001)
        }
    }

    /// `openssl enc -pbkdf2` derives its key and IV together, 48 bytes: two blocks of PBKDF2-HMAC-SHA256,
    /// twice the iterations' work. 1,500,000 iterations (3,000,000 in all) were read, and written, under
    /// the default limit that counted 1,500,000; both are refused now, before any work.
    @Test func opensslEncCountsItsTwoOutputBlocks() throws {
        let file = Array("Salted__".utf8) + [UInt8](repeating: 1, count: 8) + [UInt8](repeating: 2, count: 32)
        let error = try #require(throws: CofferFormatsError.costTooHigh) { try OpenSSLEnc.decrypt(file, password: Self.password, iterations: 1_500_000) }
        #expect(error.reason.contains("for each of 2 output blocks"), "\(error.reason)")
        #expect(throws: CofferFormatsError.costTooHigh) { try OpenSSLEnc.encrypt([1], password: Self.password, iterations: 1_000_001) }
        #expect(throws: Never.self) { try PasswordKDFLimits().check(.pbkdf2(iterations: 1_000_000), deriving: 48) }
    }

    /// What Coffer writes by default opens under the default limits; the largest cost its writers accept
    /// (scrypt 2^19 at r = 8, 2,000,000 PBKDF2 iterations) is admitted, checked without deriving it.
    @Test func filesAtTheDefaultsStillOpen() throws {
        let sealed = try CofferEncryption.encrypt(Array("at the defaults".utf8), to: .password(Self.password))
        #expect(try CofferEncryption.decrypt(sealed, with: .password(Self.password)) == Array("at the defaults".utf8))
        let pbkdf2 = try CofferEncryption.encrypt([7], to: .password(Self.password, .pbkdf2(iterations: PasswordKDF.minimumPBKDF2Iterations)))
        #expect(try CofferEncryption.decrypt(pbkdf2, with: .password(Self.password)) == [7])
        for largest in [PasswordKDF.scrypt(logN: 19, r: 8, p: 1), .pbkdf2(iterations: 2_000_000), .pbkdf2(.hmacSHA512, iterations: 2_000_000)] {
            #expect(throws: Never.self) { try PasswordKDFLimits().check(largest) }
        }
    }

    /// An encrypted PKCS#8 key may ask for r and p up to 1024: at N = 2^20, r = 8, p = 1024 that was
    /// 1,024 derivations of 1 GiB each. Built here field by field (the writer refuses to make it).
    @Test func aPKCS8KeyAskingForP1024IsRefusedBeforeDeriving() throws {
        let cheap = EncryptedPKCS8DER.scrypt(n: 1 << 10, r: 8, p: 1)
        #expect(throws: CofferFormatsError.wrongPassword, "the builder makes keys the reader parses") {
            try ImportedKey(importing: cheap, password: { Self.password })
        }

        let hostile = EncryptedPKCS8DER.scrypt(n: 1 << 20, r: 8, p: 1024)
        let error = try #require(throws: CofferFormatsError.costTooHigh) { try ImportedKey(importing: hostile, password: { Self.password }) }
        #expect(error.reason.contains("p=1024") && (error.reason.contains("limit of work ") || error.reason.contains(" and work ")), "\(error.reason)")
    }

    /// RNCryptor v3 fixes its cost (two PBKDF2-HMAC-SHA-1 derivations of 10,000 iterations), so no
    /// message can ask for more; the caller's limits still hold, as for every reader.
    @Test func rncryptorsFixedCostIsCheckedAgainstTheLimitsToo() throws {
        let message = try RNCryptor.encrypt(Array("x".utf8), with: .password(Self.password))
        let error = try #require(throws: CofferFormatsError.costTooHigh) {
            try RNCryptor.decrypt(message, with: .password(Self.password), limits: PasswordKDFLimits(maximumPBKDF2Iterations: 9_999))
        }
        #expect(error.reason.contains("10000 PBKDF2 iterations"), "\(error.reason)")
        #expect(try RNCryptor.decrypt(message, with: .password(Self.password)) == Array("x".utf8))
    }

    @Test func openSSLEncPastTheIterationLimitIsRefused() throws {
        let file = try OpenSSLEnc.encrypt(Array("x".utf8), password: Self.password, iterations: 1000)
        let error = try #require(throws: CofferFormatsError.costTooHigh) {
            try OpenSSLEnc.decrypt(file, password: Self.password, iterations: 2_000_001)
        }
        #expect(error.reason.contains("PBKDF2 iterations for each of 2 output blocks (4000002 in all), above the limit of"), "\(error.reason)")
        #expect(try OpenSSLEnc.decrypt(file, password: Self.password, iterations: 1000) == Array("x".utf8))
    }
}

/// The DER of an `EncryptedPrivateKeyInfo` with PBES2, scrypt and AES-256-CBC (RFC 8018, RFC 7914 §7),
/// built from its fields so that a test can ask for any cost without deriving it.
enum EncryptedPKCS8DER {
    static func scrypt(n: Int, r: Int, p: Int) -> [UInt8] {
        let pbes2: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D]
        let scryptOID: [UInt8] = [0x06, 0x09, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x04, 0x0B]
        let aes256CBC: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2A]
        let salt = [UInt8](repeating: 0x5A, count: 16)
        let parameters = sequence(octets(salt) + integer(n) + integer(r) + integer(p))
        let keyDerivation = sequence(scryptOID + parameters)
        let encryption = sequence(aes256CBC + octets([UInt8](repeating: 0x11, count: 16)))
        let algorithm = sequence(pbes2 + sequence(keyDerivation + encryption))
        return sequence(algorithm + octets([UInt8](repeating: 0x22, count: 48)))
    }

    static func sequence(_ content: [UInt8]) -> [UInt8] { [0x30] + length(content.count) + content }
    static func octets(_ content: [UInt8]) -> [UInt8] { [0x04] + length(content.count) + content }

    static func integer(_ value: Int) -> [UInt8] {
        var bytes = withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) }
        while bytes.count > 1, bytes[0] == 0, bytes[1] < 0x80 { bytes.removeFirst() }
        if bytes[0] >= 0x80 { bytes.insert(0, at: 0) }
        return [0x02] + length(bytes.count) + bytes
    }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        return count < 0x100 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
    }
}
