import CofferCore
import CofferCrypto
import CofferFormats
import Testing

/// Inputs the fuzzers (Fuzz/, scripts/fuzz) found crashing Coffer, kept so that they never do again.
/// Each must be answered with a typed error.
@Suite("Fuzzer findings")
struct FuzzRegressionTests {
    /// coffer-decrypt, 2026-11-21: a scrypt stanza asking for log2 N = 52 and r = 52 overflowed the
    /// memory computation (128·N·r) in the header summary that the "not encrypted to this key" error
    /// quotes, and in the cost check before the limit was compared.
    static let hugeScryptCost = "434f4646455200450101100101004334bf61ffffffffffdc3148d180e2841a34343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434343434344d8ecdbf6ff611b407ea774d777bba84f8e41f341f"

    @Test func hugeScryptCostIsATypedErrorNotATrap() throws {
        let file = try Hex.decode(Self.hugeScryptCost)
        let key = try EncryptionKey(bytes: [UInt8](repeating: 0x42, count: 32))
        let wrongKey = #expect(throws: CofferFormatsError.self) { try CofferEncryption.decrypt(file, with: .key(key)) }
        #expect(wrongKey?.code == .noMatchingKey)
        #expect(wrongKey?.reason.contains("an impossible amount of memory") == true)
        let tooCostly = #expect(throws: CofferFormatsError.self) { try CofferEncryption.decrypt(file, with: .password(Array("pw".utf8))) }
        #expect(tooCostly?.code == .costTooHigh)
        #expect(tooCostly?.reason.contains("maximumScryptLogN") == true)
    }

    @Test func scryptMemoryReportsOverflowInsteadOfTrapping() throws {
        #expect(PasswordKDF.scrypt(logN: 17, r: 8, p: 1).memoryCost == 128 << 20)
        #expect(PasswordKDF.scrypt(logN: 52, r: 52, p: 1).memoryCost == nil)
        #expect(PasswordKDF.scrypt(logN: 255, r: 255, p: 1).memoryCost == nil)
        #expect(throws: CofferCryptoError.self) { try PasswordKDF.scrypt(logN: 60, r: 8, p: 1).derive(password: [1], salt: [2], limits: .unbounded) }
    }
}
