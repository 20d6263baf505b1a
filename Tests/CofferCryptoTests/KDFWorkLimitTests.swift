import CofferCore
import CofferCrypto
import Foundation
import Testing

/// Issue 42: the limits bound time as well as memory. scrypt's time is N·r·p (each of p lanes mixes N
/// blocks of 128·r bytes), so a limit on N and on 128·N·r alone let p multiply the work: N = 2^20, r = 8,
/// p = 255 passed at 1 GiB and cost 255 times the largest accepted derivation. Every test here asserts
/// on the refusal, never on time.
@Suite("KDF limits bound work")
struct KDFWorkLimitTests {
    /// What a header or a stored record may ask for and the default limits must refuse, without
    /// deriving anything: p and r multiply the work at a memory the limits admit.
    static let hostile: [PasswordKDF] = [
        .scrypt(logN: 20, r: 8, p: 255), .scrypt(logN: 19, r: 8, p: 2), .scrypt(logN: 17, r: 8, p: 16),
        .scrypt(logN: 14, r: 64, p: 64), .scrypt(logN: 10, r: 1024, p: 1024),
    ]

    @Test(arguments: hostile)
    func scryptWorkAboveTheDefaultsIsRefused(kdf: PasswordKDF) throws {
        let error = try #require(throws: CofferCryptoError.costTooHigh) { try PasswordKDFLimits().check(kdf, subject: "the file") }
        #expect(error.reason.contains("N·r·p"), "the reason names the work asked for: \(error.reason)")
        #expect((error.reason.contains("limit of work ") || error.reason.contains(" and work ")), "and the limit that refused it: \(error.reason)")
    }

    /// Every cost Coffer and the formats' other writers make by default, and the largest Coffer's own
    /// writers let a user choose, pass the defaults.
    @Test(arguments: [
        PasswordKDF.default, .scrypt(logN: 19, r: 8, p: 1), .scrypt(logN: 18, r: 8, p: 1), .scrypt(logN: 14, r: 8, p: 1),
        .scrypt(logN: 15, r: 8, p: 1), .pbkdf2(iterations: 600_000), .pbkdf2(.hmacSHA1, iterations: 10_000),
        .pbkdf2(iterations: 10_000), .pbkdf2(.hmacSHA256, iterations: 2048), .pbkdf2(.hmacSHA512, iterations: 2_000_000),
    ])
    func theWritersDefaultsPass(kdf: PasswordKDF) {
        #expect(throws: Never.self) { try PasswordKDFLimits().check(kdf) }
    }

    /// A stored PHC string may ask for r and p up to 64: at ln = 20 that is 64 times the 1 GiB derivation.
    @Test(arguments: ["$scrypt$ln=20,r=8,p=64$", "$scrypt$ln=17,r=64,p=2$", "$scrypt$ln=20,r=8,p=2$"])
    func aStoredHashAskingForMoreWorkIsRefusedUnverified(prefix: String) throws {
        let hostile = try PasswordHash(phcString: prefix + "c2FsdHNhbHRzYWx0c2FsdA$" + String(repeating: "A", count: 43))
        let error = try #require(throws: CofferCryptoError.costTooHigh) { try PasswordHasher().verify(password: "pw", against: hostile) }
        #expect((error.reason.contains("limit of work ") || error.reason.contains(" and work ")), "\(error.reason)")
    }

    /// PBKDF2 runs its iterations once for each block of its hash's size that it derives, so its work is
    /// the iterations times the output blocks: 1,500,000 iterations deriving 64 bytes of
    /// PBKDF2-HMAC-SHA256 is 3,000,000, above the default limit that counted 1,500,000.
    @Test func pbkdf2WorkIsIterationsTimesOutputBlocks() throws {
        let limits = PasswordKDFLimits()
        #expect(throws: Never.self) { try limits.check(.pbkdf2(iterations: 1_500_000), deriving: 32) }
        let error = try #require(throws: CofferCryptoError.costTooHigh) { try limits.check(.pbkdf2(iterations: 1_500_000), deriving: 64) }
        #expect(error.reason.contains("for each of 2 output blocks (3000000 in all)"), "\(error.reason)")
        // SHA-1's blocks are 20 bytes: 32 bytes are two of them.
        #expect(throws: CofferCryptoError.costTooHigh) { try limits.check(.pbkdf2(.hmacSHA1, iterations: 1_000_001), deriving: 32) }
        #expect(throws: CofferCryptoError.costTooHigh) { try PasswordKDF.pbkdf2(iterations: 1_500_000).derive(password: [1], salt: [2], byteCount: 33) }
        // A stored hash of 64 bytes is two blocks: refused before anything is derived.
        let hostile = try PasswordHash(phcString: "$pbkdf2-sha256$i=1500000$c2FsdHNhbHRzYWx0c2FsdA$" + String(repeating: "A", count: 86))
        #expect(throws: CofferCryptoError.costTooHigh) { try PasswordHasher().verify(password: "pw", against: hostile) }
    }

    /// A hasher does not make a hash that its own policy refuses to verify.
    @Test(arguments: [PasswordKDF.scrypt(logN: 21, r: 8, p: 1), .scrypt(logN: 20, r: 8, p: 2), .pbkdf2(iterations: 2_000_001)])
    func aHasherRefusesToMakeWhatItWouldNotVerify(kdf: PasswordKDF) throws {
        let hasher = PasswordHasher(policy: PasswordHashPolicy(kdf: kdf))
        #expect(throws: CofferCryptoError.costTooHigh) { try hasher.hash(password: "pw") }
    }
}
