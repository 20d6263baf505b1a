import CofferCore
import CofferCrypto
import CofferFormats
import Crypto
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
        let wrongKey = #expect(throws: CofferFormatsError.noMatchingKey) { try CofferEncryption.decrypt(file, with: .key(key)) }
        #expect(wrongKey?.reason.contains("an impossible amount of memory") == true)
        let tooCostly = #expect(throws: CofferFormatsError.costTooHigh) { try CofferEncryption.decrypt(file, with: .password(Array("pw".utf8))) }
        #expect(tooCostly?.reason.contains("limit of N=2^") == true)
    }

    /// key-differential, 2026-11-27: an Ed25519 public key in DER (SPKI) whose 44 bytes are all below
    /// 0x80 and whose key bytes spell "-----BEGIN PUBLI". As a whole it is valid UTF-8 text holding
    /// "-----BEGIN ", so import read it as PEM and refused it ("PEM text without a complete key
    /// block"), where swift-crypto reads the key.
    static let derKeyThatReadsAsPEMText = "MCowBQYDK2VwAyEAPUBbbwNJQ0MtLS0tLUJFR0lOIFBVQkxJY0RRZ0FFZg0="

    @Test func aDERKeyWhoseBytesLookLikePEMIsReadAsDER() throws {
        let der = try Base64.decode(Self.derKeyThatReadsAsPEMText)
        #expect(String(validating: der, as: UTF8.self)?.contains("-----BEGIN ") == true)
        let theirs = try Curve25519.Signing.PublicKey(derRepresentation: der)
        let ours = try ImportedKey(importing: der)
        #expect(ours.format == .spki && ours.encoding == .der)
        #expect(try ours.verifyingKey.representation(as: .spki, encoding: .der) == Array(theirs.derRepresentation))
        #expect(try VerifyingKey(importing: der).representation(as: .spki, encoding: .der) == der)
    }

    /// The same bytes under X25519's OID, as an encryption recipient: the recipient importer had the
    /// same test for PEM text and refused the key.
    @Test func anX25519DERKeyWhoseBytesLookLikePEMIsReadAsDER() throws {
        var der = try Base64.decode(Self.derKeyThatReadsAsPEMText)
        der[8] = 0x6e  // 1.3.101.112 (Ed25519) -> 1.3.101.110 (X25519)
        let theirs = try Curve25519.KeyAgreement.PublicKey(derRepresentation: der)
        #expect(try RecipientPublicKey(importing: der) == .x25519(theirs))
    }

    @Test func scryptMemoryReportsOverflowInsteadOfTrapping() throws {
        #expect(PasswordKDF.scrypt(logN: 17, r: 8, p: 1).memoryCost == 128 << 20)
        #expect(PasswordKDF.scrypt(logN: 52, r: 52, p: 1).memoryCost == nil)
        #expect(PasswordKDF.scrypt(logN: 255, r: 255, p: 1).memoryCost == nil)
        #expect(throws: CofferCryptoError.self) { try PasswordKDF.scrypt(logN: 60, r: 8, p: 1).derive(password: [1], salt: [2], limits: .unbounded) }
    }
}
