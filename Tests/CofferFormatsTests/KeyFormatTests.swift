import CofferCore
import CofferCrypto
import CofferFormats
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Key formats")
struct KeyFormatTests {
    static let types: [KeyAlgorithm] = [.rsa2048, .p256, .p384, .p521, .ed25519, .mldsa65, .mldsa87]

    static func formats(for type: KeyAlgorithm) -> [KeyFormat] {
        switch type {
        case .rsa: [.pkcs8, .pkcs1Private, .jwk, .appleExternal]
        case .p256, .p384, .p521: [.pkcs8, .sec1, .jwk, .appleExternal]
        case .ed25519, .mldsa65, .mldsa87: [.pkcs8, .jwk]
        }
    }

    static func publicFormats(for type: KeyAlgorithm) -> [KeyFormat] {
        switch type {
        case .rsa: [.spki, .pkcs1Public, .jwk, .appleExternal, .openSSH]
        case .p256, .p384, .p521: [.spki, .jwk, .appleExternal, .openSSH]
        case .ed25519: [.spki, .jwk, .openSSH]
        case .mldsa65, .mldsa87: [.spki, .jwk]
        }
    }

    @Test(arguments: types)
    func privateFormatsRoundTripAndAreDetected(type: KeyAlgorithm) throws {
        let key = try SigningKey.generate(type)
        for format in Self.formats(for: type) {
            for encoding in [KeyEncoding.pem, .der] where encoding == .pem || ![.jwk, .appleExternal].contains(format) {
                let bytes = try key.representation(as: format, encoding: encoding)
                let imported = try ImportedKey(importing: bytes, appleKeyClass: format == .appleExternal ? .privateKey : nil)
                #expect(imported.signingKey != nil, "\(type) \(format)")
                #expect(imported.verifyingKey == key.verifyingKey, "\(type) \(format) \(encoding)")
                // RSA's Apple representation is PKCS#1 DER, and is reported as such.
                let expected = (format == .appleExternal && type == .rsa2048) ? KeyFormat.pkcs1Private : format
                #expect(imported.format == expected, "\(type) \(format)")
            }
        }
    }

    @Test(arguments: types)
    func publicFormatsRoundTripAndAreDetected(type: KeyAlgorithm) throws {
        let key = try SigningKey.generate(type).verifyingKey
        for format in Self.publicFormats(for: type) {
            let bytes = try key.representation(as: format)
            let imported = try ImportedKey(importing: bytes, appleKeyClass: format == .appleExternal ? .publicKey : nil)
            #expect(imported.signingKey == nil)
            #expect(imported.verifyingKey == key, "\(type) \(format)")
        }
        #expect(try VerifyingKey(importing: key.representation(as: .spki, encoding: .der)) == key)
    }

    @Test(arguments: [PasswordKDF.pbkdf2(iterations: 600_000), .pbkdf2(.hmacSHA512, iterations: 600_000), .scrypt(logN: 10, r: 8, p: 1)])
    func encryptedPKCS8RoundTrips(kdf: PasswordKDF) throws {
        let key = try SigningKey.generate(.p256)
        let password = Array("correct horse".utf8)
        for encoding in [KeyEncoding.pem, .der] {
            let bytes = try key.encryptedPKCS8Representation(password: password, kdf: kdf, encoding: encoding)
            var asked = 0
            let imported = try ImportedKey(importing: bytes, password: { asked += 1; return password })
            #expect(asked == 1)
            #expect(imported.format == .encryptedPKCS8)
            #expect(imported.verifyingKey == key.verifyingKey)
            #expect(throws: CofferFormatsError.wrongPassword) { try ImportedKey(importing: bytes, password: { Array("wrong".utf8) }) }
            #expect(throws: CofferFormatsError.passwordRequired) { try ImportedKey(importing: bytes) }
        }
    }

    @Test func unencryptedKeysNeverAskForAPassword() throws {
        let bytes = try SigningKey.generate(.ed25519).representation()
        _ = try ImportedKey(importing: bytes, password: { Issue.record("asked for a password"); return [] })
    }

    @Test func keyDerivationCostIsCapped() throws {
        let key = try SigningKey.generate(.ed25519)
        let heavy = try key.encryptedPKCS8Representation(password: Array("pw".utf8), kdf: .pbkdf2(iterations: 650_000))
        let error = #expect(throws: CofferFormatsError.costTooHigh) {
            try ImportedKey(importing: heavy, password: { Array("pw".utf8) }, limits: PasswordKDFLimits(maximumPBKDF2Iterations: 600_000))
        }
        #expect(error?.reason.contains("650000 PBKDF2 iterations") == true)
        let scrypt = try key.encryptedPKCS8Representation(password: Array("pw".utf8), kdf: .scrypt(logN: 12, r: 8, p: 1))
        #expect(throws: CofferFormatsError.costTooHigh) {
            try ImportedKey(importing: scrypt, password: { Array("pw".utf8) }, limits: PasswordKDFLimits(maximumScryptMemory: 1 << 20))
        }
    }

    @Test func publicKeyWhereAPrivateOneIsNeeded() throws {
        let publicPEM = try SigningKey.generate(.p384).verifyingKey.representation()
        let error = try #require(throws: CofferFormatsError.wrongKeyKind) { try SigningKey(importing: publicPEM) }
        #expect(error.reason == "found a public key (PEM SubjectPublicKeyInfo, P-384) where a private key is needed")
    }

    @Test func appleBytesOfAmbiguousLengthNeedAKeyClass() throws {
        let p256Private = try SigningKey.generate(.p256).representation(as: .appleExternal)
        let p384Public = try SigningKey.generate(.p384).verifyingKey.representation(as: .appleExternal)
        #expect(p256Private.count == 97 && p384Public.count == 97)
        for bytes in [p256Private, p384Public] {
            let error = try #require(throws: CofferFormatsError.self) { try ImportedKey(importing: bytes) }
            #expect(error.reason.contains("P-384 public key or a P-256 private key"))
        }
        #expect(try ImportedKey(importing: p256Private, appleKeyClass: .privateKey).verifyingKey.algorithm == .p256)
        #expect(try ImportedKey(importing: p384Public, appleKeyClass: .publicKey).verifyingKey.algorithm == .p384)
    }

    @Test func malformedInputsAreTypedErrors() throws {
        let good = try SigningKey.generate(.p256).representation()
        let text = String(decoding: good, as: UTF8.self)
        let lines = text.split(separator: "\n")
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("garbage", Fixtures.randomBytes(count: 300)),
            ("truncated PEM", Array(lines.dropLast().joined(separator: "\n").utf8)),
            ("truncated body", Array((lines.prefix(2) + [lines.last ?? ""]).joined(separator: "\n").utf8)),
            ("bad base64", Array(text.replacingOccurrences(of: "M", with: "*").utf8)),
            ("wrong label", Array(text.replacingOccurrences(of: "PRIVATE KEY", with: "SECRET THING").utf8)),
            ("mismatched labels", Array(text.replacingOccurrences(of: "END PRIVATE", with: "END PUBLIC").utf8)),
            ("truncated DER", Array(try SigningKey.generate(.p256).representation(encoding: .der).dropLast(5))),
            ("JSON that is not a JWK", Array(#"{"hello": "world"}"#.utf8)),
            ("JWK with bad base64url", Array(#"{"kty":"OKP","crv":"Ed25519","x":"not base64!"}"#.utf8)),
            ("JWK set", Array(#"{"keys":[]}"#.utf8)),
            ("JWK with a foreign x", Array(#"{"kty":"OKP","crv":"Ed25519","x":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}"#.utf8)),
            ("OpenSSH private key", Array("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n".utf8)),
            ("traditional encrypted PEM", Array("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n".utf8)),
            ("ssh line with bad blob", Array("ssh-ed25519 AAAA comment".utf8)),
            ("Apple bytes not on the curve", [0x04] + [UInt8](repeating: 1, count: 64)),
        ]
        for (name, bytes) in cases {
            #expect(throws: CofferFormatsError.self, "\(name)") { try ImportedKey(importing: bytes) }
        }
    }

    @Test func ed25519JWKFromRFC8037() throws {
        // RFC 8037 Appendix A.1/A.2.
        let jwk = #"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#
        let key = try SigningKey(importing: Array(jwk.utf8))
        #expect(key.algorithm == .ed25519)
        // RFC 8037 A.4 signs "Example of Ed25519 signing" in JWS form; the message and signature:
        let message = Array("eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc".utf8)
        let expected = "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
        #expect(Base64.encodeURLSafe(try key.signature(for: message)) == expected)
    }
}

/// PEM blocks are decoded by swift-asn1 behind Coffer's lenient framing: what decodes is unchanged, and a
/// forged block (an empty body, a body that is not base64, a truncated block) is a typed error.
@Suite("PEM blocks")
struct PEMBlockTests {
    @Test func framingStaysLenientAndDecodingMatchesTheArmor() throws {
        let der = (0..<100).map { UInt8($0) }
        let armored = PEMArmor.encode(der, label: "TEST")
        // CRLF line ends, text around the block, and 76-character lines all still read.
        let long = "-----BEGIN TEST-----\n" + Base64.encode(der) + "\n-----END TEST-----\n"
        for text in [armored, armored.replacingOccurrences(of: "\n", with: "\r\n"), "junk before\n" + armored + "junk after\n", long] {
            let blocks = try PEMBlock.blocks(in: text)
            #expect(blocks.map(\.label) == ["TEST"], "\(text)")
            #expect(blocks.map(\.der) == [der])
        }
    }

    @Test(arguments: [
        "-----BEGIN TEST-----\n-----END TEST-----\n",
        "-----BEGIN TEST-----\nnot*base64\n-----END TEST-----\n",
        "-----BEGIN TEST-----\nAAEC\n",
        "-----BEGIN TEST-----\nAAEC\n-----END OTHER-----\n",
    ])
    func forgedBlocksAreTypedErrors(text: String) {
        #expect(throws: CofferFormatsError.malformedKey) { _ = try PEMBlock.blocks(in: text) }
    }
}
