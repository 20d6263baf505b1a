import CofferCore
import CofferCrypto
import CofferTestSupport
import Foundation
import Testing

/// `PasswordKDF`, the one password-stretching vocabulary: fixed vectors through `derive`, and limits that
/// refuse before any work is done.
@Suite("Password KDF")
struct PasswordKDFTests {
    /// RFC 7914's vectors, as the PHC tests load them.
    static let file = PasswordHashVectorTests.file

    static func hex(_ key: some ContiguousBytes) -> String { key.withUnsafeBytes { Hex.encode(Array($0)) } }

    @Test func rfc7914VectorsThroughDerive() throws {
        let file = try #require(Self.file)
        for vector in file.pbkdf2_hmac_sha256 {
            let dk = try Hex.decode(vector.dk)
            let key = try PasswordKDF.pbkdf2(iterations: vector.c).derive(
                password: Array(vector.password.utf8), salt: Array(vector.salt.utf8), byteCount: dk.count
            )
            #expect(Self.hex(key) == vector.dk)
        }
        for vector in file.scrypt where vector.N <= 1 << 14 {
            let dk = try Hex.decode(vector.dk)
            let kdf = PasswordKDF.scrypt(logN: vector.N.trailingZeroBitCount, r: vector.r, p: vector.p)
            let key = try kdf.derive(password: Array(vector.password.utf8), salt: Array(vector.salt.utf8), byteCount: dk.count)
            #expect(Self.hex(key) == vector.dk)
        }
    }

    /// RFC 6070 §2 (PBKDF2-HMAC-SHA-1, c = 4096), and PBKDF2-HMAC-SHA-512 of "password"/"salt", c = 1, as
    /// `openssl kdf` and Python's `hashlib.pbkdf2_hmac` compute it.
    @Test func otherPseudorandomFunctions() throws {
        let sha1 = try PasswordKDF.pbkdf2(.hmacSHA1, iterations: 4096).derive(password: Array("password".utf8), salt: Array("salt".utf8), byteCount: 20)
        #expect(Self.hex(sha1) == "4b007901b765489abead49d926f721d065a429c1")
        let sha512 = try PasswordKDF.pbkdf2(.hmacSHA512, iterations: 1).derive(password: Array("password".utf8), salt: Array("salt".utf8), byteCount: 64)
        #expect(
            Self.hex(sha512)
                == "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce"
        )
    }

    /// A hostile cost is refused by the check, before swift-crypto is asked for anything: 2^40 with
    /// r = 8 would need 128 TiB, and 2^31 iterations would run for minutes.
    @Test(arguments: [
        PasswordKDF.scrypt(logN: 21, r: 8, p: 1), .scrypt(logN: 40, r: 8, p: 1), .scrypt(logN: 52, r: 52, p: 1),
        .scrypt(logN: 18, r: 64, p: 1), .pbkdf2(iterations: 10_000_001), .pbkdf2(.hmacSHA512, iterations: Int(Int32.max)),
    ])
    func costsAboveTheLimitsAreRefused(kdf: PasswordKDF) {
        let error = #expect(throws: CofferCryptoError.costTooHigh) { try kdf.derive(password: [1], salt: [2]) }
        #expect(error?.reason.contains("above the limit of") == true)
    }

    @Test func limitsAreTheCallers() throws {
        let limits = PasswordKDFLimits(maximumScryptLogN: 10, maximumScryptMemory: 1 << 30, maximumPBKDF2Iterations: 999)
        #expect(throws: Never.self) { try limits.check(.scrypt(logN: 10, r: 8, p: 1)) }
        let scrypt = #expect(throws: CofferCryptoError.self) { try limits.check(.scrypt(logN: 11, r: 8, p: 1), subject: "the file") }
        #expect(scrypt?.reason.hasPrefix("the file asks for scrypt N=2^11, r=8, p=1 (2 MiB, work N·r·p = 16384), above the limit of N=2^10") == true, "\(scrypt?.reason ?? "")")
        let pbkdf2 = #expect(throws: CofferCryptoError.self) { try limits.check(.pbkdf2(iterations: 1000)) }
        #expect(pbkdf2?.reason.contains("1000 PBKDF2 iterations, above the limit of 999") == true)
        #expect(throws: Never.self) { try PasswordKDFLimits.unbounded.check(.pbkdf2(iterations: Int.max)) }
    }

    @Test(arguments: [
        PasswordKDF.scrypt(logN: 0, r: 8, p: 1), .scrypt(logN: 10, r: 0, p: 1), .scrypt(logN: 10, r: 8, p: 0),
        .scrypt(logN: -3, r: 8, p: 1), .pbkdf2(iterations: 0), .pbkdf2(iterations: -1),
    ])
    func impossibleParametersAreTypedErrors(kdf: PasswordKDF) {
        let error = #expect(throws: CofferCryptoError.self) { try kdf.derive(password: [1], salt: [2], limits: .unbounded) }
        #expect(error?.code == .invalidArgument || error?.code == .costTooHigh)
    }

    @Test func byteCountIsBounded() {
        for count in [0, -1, 1025] {
            #expect(throws: CofferCryptoError.invalidArgument) { try PasswordKDF.pbkdf2(iterations: 1).derive(password: [1], salt: [2], byteCount: count) }
        }
    }

    @Test func theFloorForNewSecrets() {
        #expect(throws: Never.self) { try PasswordKDF.default.checkStrengthForNewSecret() }
        #expect(throws: Never.self) { try PasswordKDF.pbkdf2(iterations: PasswordKDF.minimumPBKDF2Iterations).checkStrengthForNewSecret() }
        for weak in [PasswordKDF.pbkdf2(iterations: PasswordKDF.minimumPBKDF2Iterations - 1), .pbkdf2(.hmacSHA1, iterations: 10_000_000)] {
            #expect(throws: CofferCryptoError.weakParameters) { try weak.checkStrengthForNewSecret() }
        }
    }

    @Test func descriptionsNameFunctionAndCost() {
        #expect(PasswordKDF.default.description == "scrypt (N=2^17, r=8, p=1)")
        #expect(PasswordKDF.pbkdf2(iterations: 600_000).description == "PBKDF2-HMAC-SHA256 (600000 iterations)")
        #expect(PasswordKDF.pbkdf2(.hmacSHA1, iterations: 10_000).description == "PBKDF2-HMAC-SHA1 (10000 iterations)")
        #expect(PasswordKDF.scrypt(logN: 17, r: 8, p: 1).memoryCost == 128 << 20)
        #expect(PasswordKDF.pbkdf2(iterations: 1).memoryCost == 0)
    }
}
