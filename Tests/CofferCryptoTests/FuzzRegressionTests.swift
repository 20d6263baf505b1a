import CofferCrypto
import Testing

/// Inputs the fuzzers (Fuzz/, Fuzz/fuzz) found mishandled, kept so that they never are again.
@Suite("Fuzzer findings (password hashes)")
struct PasswordHashFuzzRegressionTests {
    /// password-hash, 2026-11-21: passlib's bare iteration count was read with `Int(_:)`, unbounded and
    /// signed, so a hash could be read that its own PHC string (`i=` at most 10 digits) could not.
    @Test func passlibIterationCountsFollowThePHCRule() throws {
        let found = "$pbkdf2-sha256$2666666666666900$p0AA$BBBBBDouBBBBB////BzBBBBBBB//"
        #expect(throws: CofferCryptoError.self) { try PasswordHash(phcString: found) }
        let salt = "c2FsdHNhbHRzYWx0c2FsdA", hash = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        #expect(throws: CofferCryptoError.self) { try PasswordHash(phcString: "$pbkdf2-sha256$+29000$\(salt)$\(hash)") }
        // The largest count either form reads survives its own PHC string.
        let largest = try PasswordHash(phcString: "$pbkdf2-sha256$9999999999$\(salt)$\(hash)")
        #expect(try PasswordHash(phcString: largest.phcString).phcString == largest.phcString)
    }
}
