import CofferCore
import CofferCrypto
import CofferFormats
@testable import CofferKeychain
import Foundation
import Testing

/// The version 2 document (docs/KEYCHAIN.md, "Who wrote an export"), held to fixed bytes.
@Suite("Keychain export document, version 2")
struct ExportDocumentV2Tests {
    /// Fixed keys, so that the document (Ed25519 signatures are deterministic) is a fixed vector.
    static let signer = try! SigningKey(importing: Array("""
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIEJtb8Wexl9u2U1fngoZp6jXPgPqG2NuI4h0x3ILYjd9
        -----END PRIVATE KEY-----
        """.utf8))
    static let recipient = try! RecipientPrivateKey(importing: Array("""
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VuBCIEILCFjWPDMUqX4pF/pI0aGk7g463CH12dvvpd8PIWC219
        -----END PRIVATE KEY-----
        """.utf8))

    static var audience: [[UInt8]] { [KeyFingerprint(subjectPublicKeyInfo: recipient.publicKey.derRepresentation).sha256] }

    /// The version byte of an export's document.
    static func documentVersion(_ file: [UInt8], password: [UInt8]) -> UInt8? {
        (try? CofferEncryption.decrypt(file, with: .password(password)))?.dropFirst(8).first
    }

    @Test func encodesAndReadsBack() throws {
        let document = try ExportDocument.encode([ExportDocumentTests.vectorItem], signedBy: Self.signer, audience: Self.audience)
        #expect(Hex.encode(document) == Self.vector)
        let contents = try ExportDocument.read(document)
        #expect(contents.items.count == 1 && contents.items.first?.secret == bytes("hi"))
        let proof = try #require(contents.proof)
        #expect(proof.signer == Self.signer.verifyingKey && proof.audience == Self.audience)
        #expect(Self.signer.verifyingKey.isValidSignature(proof.signature, for: proof.signedBytes))
        #expect(proof.signedBytes.starts(with: Array("coffer-keychain-export v2".utf8) + [0]))
    }

    /// Every kind of key Coffer signs with fits the document's limits and verifies (ML-DSA-87 has the
    /// largest key and signature: 2,614 and 4,627 bytes).
    @Test(arguments: [KeyAlgorithm.rsa2048, .p256, .p384, .p521, .ed25519, .mldsa65, .mldsa87])
    func everySignerKindSignsADocument(type: KeyAlgorithm) throws {
        let signer = try SigningKey.generate(type)
        let document = try ExportDocument.encode([ExportDocumentTests.vectorItem], signedBy: signer, audience: Self.audience)
        let proof = try #require(try ExportDocument.read(document).proof)
        #expect(proof.signer == signer.verifyingKey)
        #expect(signer.verifyingKey.isValidSignature(proof.signature, for: proof.signedBytes))
    }

    @Test func everyTruncationAndTrailingByteIsRefused() throws {
        let document = try Hex.decode(Self.vector)
        for length in 0..<document.count {
            #expect(throws: KeychainError.self) { try ExportDocument.read(Array(document.prefix(length))) }
        }
        #expect(throws: KeychainError.self) { try ExportDocument.read(document + [0]) }
    }

    @Test func aSignerKeyThatDoesNotParseIsRefused() throws {
        var document = try Hex.decode(Self.vector)
        document[11] ^= 0xFF
        #expect(throws: KeychainError.dataCorrupted) { try ExportDocument.read(document) }
    }

    /// docs/KEYCHAIN.md's version 2 vector: the spec's version 1 item, signed by the Ed25519 key above
    /// for the X25519 recipient above.
    static let vector = "434f464645524b43" + "02"
        + "002c" + "302a300506032b657003210071b011069f1c88b790ef21ecc9ef2ddce7b200381ae4e12553c9c7b400aa0185"
        + "01" + "d92caf3663ede6825bdc8de6e033686eb43ba1e378eaf3079f2782cebce3e9df"
        + "00000001" + "010200" + "41cdcd650000000041cdcd6500800000"
        + "0001000000017301000000016100000000000000000000000000" + "000000026869"
        + "0040" + "78441810b5b624e9195d215ee15018d56042a4a995716fcd1df2190607c050aa3a613d1c18f1248707e1fc9003ae20f43ea0fd47d95e16da3d1f1a5eeda9110e"
}
