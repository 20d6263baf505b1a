import CofferCrypto
import CofferFormats
import CofferTestSupport
import CofferTesting
import PropertyBased
import Testing

/// Properties of key import/export and signing that must hold for every key, not only the one a unit test
/// happened to generate. Keys come from the generator's randomness (`SeededKeys`), so a failure replays
/// from the seed that PropertyBased prints.
@Suite("Key formats: properties")
struct KeyFormatPropertyTests {
    /// A signing key of any type Coffer signs with.
    static let keys = Generator { rng in
        let type = SeededKeys.types.randomElement(using: &rng) ?? .p256
        return try? SeededKeys.key(type, seed: rng.bytes(count: SeededKeys.seedLength))
    }.compactMap { $0 }

    /// One step of a conversion chain: a format and an encoding, chosen by index among those the key has.
    struct Step: CustomStringConvertible {
        let format: KeyFormat
        let encoding: KeyEncoding
        var description: String { "\(format)/\(encoding)" }
    }

    static func privateSteps(for type: KeyAlgorithm) -> [Step] {
        var steps: [Step] = []
        for format in KeyFormatTests.formats(for: type) + [.encryptedPKCS8] {
            steps.append(Step(format: format, encoding: .pem))
            if ![.jwk, .appleExternal].contains(format) { steps.append(Step(format: format, encoding: .der)) }
        }
        return steps
    }

    static func publicSteps(for type: KeyAlgorithm) -> [Step] {
        var steps: [Step] = []
        for format in KeyFormatTests.publicFormats(for: type) {
            steps.append(Step(format: format, encoding: .pem))
            if [.spki, .pkcs1Public].contains(format) { steps.append(Step(format: format, encoding: .der)) }
        }
        return steps
    }

    static let password = Array("correct horse battery".utf8)

    static func type(of key: SigningKey) -> KeyAlgorithm {
        SeededKeys.types.first { $0 == key.algorithm } ?? .p256
    }

    /// A private key passed through any chain of private formats is the same key: same public half, and a
    /// signature made by the last copy verifies under the original public key. Every unencrypted export is
    /// a fixed point: importing it and exporting again gives the same bytes.
    @Test func privateKeySurvivesAnyChainOfFormats() async throws {
        await propertyCheck(count: 60, input: Self.keys, Gen.int(in: 0...1_000).array(of: 1...5)) { key, choices in
            let steps = Self.privateSteps(for: Self.type(of: key))
            var current = key
            for choice in choices {
                let step = steps[choice % steps.count]
                let bytes: [UInt8]
                if step.format == .encryptedPKCS8 {
                    bytes = try current.encryptedPKCS8Representation(password: Self.password, kdf: .scrypt(logN: 10, r: 8, p: 1), encoding: step.encoding)
                } else {
                    bytes = try current.representation(as: step.format, encoding: step.encoding)
                }
                let imported = try ImportedKey(importing: bytes, password: { Self.password }, appleKeyClass: step.format == .appleExternal ? .privateKey : nil)
                let next = try #require(imported.signingKey, "\(step) read back as a public key")
                #expect(next.verifyingKey == key.verifyingKey, "\(step)")
                if step.format != .encryptedPKCS8 {
                    #expect(try next.representation(as: step.format, encoding: step.encoding) == bytes, "\(step) is not a fixed point")
                }
                current = next
            }
            let message = Array("signed after \(choices.count) conversions".utf8)
            #expect(key.verifyingKey.isValidSignature(try current.signature(for: message), for: message))
        }
    }

    /// The same for public keys and the public formats, including OpenSSH lines and Apple's bytes.
    @Test func publicKeySurvivesAnyChainOfFormats() async throws {
        await propertyCheck(count: 60, input: Self.keys, Gen.int(in: 0...1_000).array(of: 1...6)) { key, choices in
            let steps = Self.publicSteps(for: Self.type(of: key))
            var current = key.verifyingKey
            for choice in choices {
                let step = steps[choice % steps.count]
                let bytes = try current.representation(as: step.format, encoding: step.encoding)
                let imported = try ImportedKey(importing: bytes, appleKeyClass: step.format == .appleExternal ? .publicKey : nil)
                #expect(imported.signingKey == nil, "\(step)")
                #expect(imported.verifyingKey == key.verifyingKey, "\(step)")
                #expect(try imported.verifyingKey.representation(as: step.format, encoding: step.encoding) == bytes, "\(step) is not a fixed point")
                current = imported.verifyingKey
            }
        }
    }

    /// A signature verifies for its message, with the options it was made with, under the public key read
    /// back from any public format; it does not verify after any single bit of the message or of the
    /// signature changes. ECDSA signatures convert between DER and raw without changing their meaning.
    @Test func signaturesVerifyAndAnyBitFlipBreaksThem() async throws {
        let options = Generator { rng in
            SignatureOptions(
                hash: [DigestAlgorithm.sha256, .sha384, .sha512].randomElement(using: &rng),
                rsaPadding: RSAPadding.allCases.randomElement(using: &rng) ?? .pss,
                ecdsaEncoding: ECDSAEncoding.allCases.randomElement(using: &rng) ?? .der
            )
        }
        let messages = Gen.uint8().array(of: 0...2_048)
        await propertyCheck(count: 80, input: Self.keys, options, messages, Gen.int(in: 0...Int.max)) { key, options, message, flip in
            let signature = try key.signature(for: message, options: options)
            let steps = Self.publicSteps(for: Self.type(of: key))
            let step = steps[flip % steps.count]
            let bytes = try key.verifyingKey.representation(as: step.format, encoding: step.encoding)
            let verifier = try ImportedKey(importing: bytes, appleKeyClass: step.format == .appleExternal ? .publicKey : nil).verifyingKey
            #expect(verifier.isValidSignature(signature, for: message, options: options))

            if !message.isEmpty {
                var tampered = message
                tampered[flip % message.count] ^= 1 << ((flip / message.count) % 8)
                #expect(!verifier.isValidSignature(signature, for: tampered, options: options), "message bit flip accepted")
            }
            var forged = signature
            forged[flip % signature.count] ^= 1 << ((flip / signature.count) % 8)
            #expect(!verifier.isValidSignature(forged, for: message, options: options), "signature bit flip accepted")

            if key.algorithm.isECDSA {
                let algorithm = key.algorithm
                let der = options.ecdsaEncoding == .der ? signature : try ECDSASignatureConversion.der(fromRaw: signature, algorithm: algorithm)
                let raw = options.ecdsaEncoding == .raw ? signature : try ECDSASignatureConversion.raw(fromDER: signature, algorithm: algorithm)
                #expect(try ECDSASignatureConversion.der(fromRaw: raw, algorithm: algorithm) == der)
                #expect(try ECDSASignatureConversion.raw(fromDER: der, algorithm: algorithm) == raw)
                for (bytes, encoding) in [(der, ECDSAEncoding.der), (raw, .raw)] {
                    var converted = options
                    converted.ecdsaEncoding = encoding
                    #expect(verifier.isValidSignature(bytes, for: message, options: converted), "\(encoding)")
                }
            }
        }
    }
}
