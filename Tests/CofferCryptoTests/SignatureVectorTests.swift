import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Every applicable Wycheproof signature file, through Coffer's public verify API.
@Suite("Signature vectors")
struct SignatureVectorTests {
    static func hash(_ name: String?) -> DigestAlgorithm? {
        switch name {
        case "SHA-256": .sha256
        case "SHA-384": .sha384
        case "SHA-512": .sha512
        default: nil
        }
    }

    @Test(arguments: [
        "ecdsa_secp256r1_sha256_test", "ecdsa_secp256r1_sha256_p1363_test",
        "ecdsa_secp384r1_sha384_test", "ecdsa_secp384r1_sha384_p1363_test",
        "ecdsa_secp521r1_sha512_test", "ecdsa_secp521r1_sha512_p1363_test",
        "ed25519_test",
        "rsa_signature_2048_sha256_test", "rsa_signature_3072_sha512_test", "rsa_signature_4096_sha512_test",
        "rsa_pss_2048_sha256_mgf1_32_test", "rsa_pss_4096_sha512_mgf1_64_test",
    ])
    func wycheproof(_ name: String) throws {
        let file = try TestVectors.load(WycheproofSignatureFile.self, from: "wycheproof/testvectors_v1/\(name).json")
        var counts: [String: Int] = [:]
        for group in file.testGroups {
            let key = try VerifyingKey(derRepresentation: Hex.decode(group.publicKeyDer))
            var options = SignatureOptions(hash: Self.hash(group.sha))
            switch group.type {
            case "EcdsaP1363Verify": options.ecdsaEncoding = .raw
            case "RsassaPssVerify":
                options.rsaPadding = .pss
                // Coffer's PSS uses MGF1 with the message hash and a salt as long as the hash; these
                // files are exactly that configuration.
                #expect(group.mgfSha == group.sha && group.sLen == options.hash?.byteCount)
            default: break
            }
            for test in group.tests {
                let accepted = try key.isValidSignature(Hex.decode(test.sig), for: Hex.decode(test.msg), options: options)
                counts[test.result, default: 0] += 1
                switch test.result {
                case "valid": #expect(accepted, "tcId \(test.tcId): \(test.comment)")
                case "invalid": #expect(!accepted, "tcId \(test.tcId): \(test.comment) \(test.flags)")
                case "acceptable":
                    // The only acceptable cases are RSA PKCS#1 v1.5 DigestInfo without the NULL parameter
                    // (flag MissingNull). Coffer (BoringSSL) rejects them: only the canonical encoding verifies.
                    #expect(test.flags == ["MissingNull"])
                    #expect(!accepted, "tcId \(test.tcId): Coffer rejects the non-canonical DigestInfo")
                default: Issue.record("unknown result \(test.result)")
                }
            }
        }
        #expect(counts.values.reduce(0, +) == file.numberOfTests)
    }

    struct RFC8032File: Decodable {
        struct Case: Decodable {
            let name: String
            let secret_key: String
            let public_key: String
            let message: String
            let signature: String
        }
        let tests: [Case]
    }

    @Test func rfc8032Ed25519() throws {
        let file = try TestVectors.load(RFC8032File.self, from: "rfc/rfc8032_ed25519.json")
        #expect(file.tests.count == 5)
        for test in file.tests {
            let pkcs8Prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]
            let key = try SigningKey(pkcs8DERRepresentation: pkcs8Prefix + Hex.decode(test.secret_key))
            let message = try Hex.decode(test.message)
            #expect(try Hex.encode(key.signature(for: message)) == test.signature, "\(test.name)")
            let spkiPrefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]
            #expect(key.verifyingKey.derRepresentation == spkiPrefix + (try Hex.decode(test.public_key)))
            #expect(key.verifyingKey.isValidSignature(try Hex.decode(test.signature), for: message))
        }
    }
}
