import CofferCore
import CofferFormats
import CofferTestSupport
import CofferTesting
import Crypto
import PropertyBased
import Testing

/// Properties of the encrypted formats at sizes and positions chosen at random, weighted towards segment and
/// block boundaries where off-by-one errors live. Keys and plaintexts come from the generator, so a failure
/// replays from the seed PropertyBased prints.
@Suite("Encrypted formats: properties")
struct EncryptionPropertyTests {
    static let segment = 1 << Int(CofferEncryption.defaultSegmentLog)

    /// A way to protect a file and the credential that opens it.
    struct Mode: CustomStringConvertible {
        let protection: EncryptionProtection
        let credential: DecryptionCredential
        let description: String
    }

    static let modes = Generator { rng in
        let password = Array("pass \(rng.next() % 1000)".utf8)
        switch rng.next() % 4 {
        case 0:
            return Mode(protection: .password(password, .scrypt(logN: 10, r: 8, p: 1)), credential: .password(password), description: "password")
        case 1:
            let key = try? EncryptionKey(bytes: rng.bytes(count: 32))
            return key.map { Mode(protection: .key($0), credential: .key($0), description: "key") }
        case 2:
            let identity = (try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: rng.bytes(count: 32))).map(RecipientPrivateKey.x25519)
            return identity.map { Mode(protection: .recipients([$0.publicKey]), credential: .identity($0), description: "X25519 recipient") }
        default:
            let identity = (try? P256.KeyAgreement.PrivateKey(rawRepresentation: rng.bytes(count: 32))).map(RecipientPrivateKey.p256)
            return identity.map { Mode(protection: .recipients([$0.publicKey]), credential: .identity($0), description: "P-256 recipient") }
        }
    }.compactMap { $0 }

    static let ciphers = Generator { rng in EncryptionCipher.allCases.randomElement(using: &rng) ?? .aes256GCM }

    /// Sizes up to three segments: half of them within 3 bytes of a segment boundary, half anywhere.
    static func sizes(unit: Int, upTo units: Int) -> Generator<Int, Shrink.None<Int>> {
        Generator { rng in
            if Bool.random(using: &rng) {
                return max(0, Int.random(in: 0...units, using: &rng) * unit + Int.random(in: -3...3, using: &rng))
            }
            return Int.random(in: 0...(units * unit + 3), using: &rng)
        }
    }

    /// Plaintexts of those sizes, from the generator's randomness.
    static func plaintexts(unit: Int, upTo units: Int) -> Generator<[UInt8], Shrink.None<[UInt8]>> {
        let sizes = sizes(unit: unit, upTo: units)
        return Generator { rng in rng.bytes(count: sizes.run(using: &rng)) }
    }

    static func segmentCount(_ size: Int) -> Int { max(1, (size + segment - 1) / segment) }

    /// Decryption gives back the plaintext, and the file is exactly header + plaintext + one tag per segment
    /// (an empty plaintext is one empty segment; a multiple of the segment size has no empty segment after it).
    @Test func roundTripsAtAnySizeWithExactOverhead() async throws {
        await propertyCheck(count: 60, input: Self.modes, Self.ciphers, Self.plaintexts(unit: Self.segment, upTo: 3)) { mode, cipher, plaintext in
            let sealed = try CofferEncryption.encrypt(plaintext, to: mode.protection, cipher: cipher)
            let header = try CofferEncryption.encrypt([], to: mode.protection, cipher: cipher).count - 16
            #expect(sealed.count == header + plaintext.count + 16 * Self.segmentCount(plaintext.count), "\(mode) \(cipher) \(plaintext.count)")
            #expect(try CofferEncryption.decrypt(sealed, with: mode.credential) == plaintext, "\(mode) \(cipher) \(plaintext.count)")
        }
    }

    static func isRefused(_ ciphertext: [UInt8], _ credential: DecryptionCredential) -> Bool {
        (try? CofferEncryption.decrypt(ciphertext, with: credential)) == nil
    }

    /// Any one bit flipped, any truncation, anything appended, and (with two or more segments) two segments
    /// swapped or one duplicated: all refused.
    @Test func anyTamperingIsRefused() async throws {
        await propertyCheck(count: 60, input: Self.modes, Self.ciphers, Self.plaintexts(unit: Self.segment, upTo: 2), Gen.int(in: 0...Int.max)) {
            mode, cipher, plaintext, position in
            let sealed = try CofferEncryption.encrypt(plaintext, to: mode.protection, cipher: cipher)
            var flipped = sealed
            flipped[position % sealed.count] ^= 1 << ((position / sealed.count) % 8)
            #expect(Self.isRefused(flipped, mode.credential), "bit \(position % 8) of byte \(position % sealed.count) flipped")
            #expect(Self.isRefused(Array(sealed.prefix(position % sealed.count)), mode.credential), "truncated to \(position % sealed.count)")
            #expect(Self.isRefused(sealed + [UInt8(position & 0xff)] + Array(sealed.suffix(position % 32)), mode.credential), "appended")

            let segments = Self.segmentCount(plaintext.count)
            guard plaintext.count > Self.segment else { return }
            let header = sealed.count - plaintext.count - 16 * segments
            let full = Self.segment + 16
            let first = Array(sealed[header..<header + full]), second = Array(sealed[header + full..<min(sealed.count, header + 2 * full)])
            let rest = Array(sealed[(header + first.count + second.count)...])
            if second.count == full {
                #expect(Self.isRefused(Array(sealed[..<header]) + second + first + rest, mode.credential), "segments 0 and 1 swapped")
            }
            #expect(Self.isRefused(Array(sealed[..<header]) + first + first + second + rest, mode.credential), "segment 0 duplicated")
        }
    }

    /// The file API agrees with the in-memory one, and a damaged file leaves nothing behind: no output, no
    /// temporary file.
    @Test func filesRoundTripAndFailuresLeaveNothing() async throws {
        let folder = try TemporaryDirectory()
        await propertyCheck(count: 25, input: Self.modes, Self.plaintexts(unit: Self.segment, upTo: 3), Gen.int(in: 0...Int.max)) { mode, plaintext, position in
            let input = try folder.write(plaintext, to: "plain")
            try CofferEncryption.encryptFile(atPath: input, toPath: folder.path("sealed"), to: mode.protection, overwrite: true)
            try CofferEncryption.decryptFile(atPath: folder.path("sealed"), toPath: folder.path("opened"), with: mode.credential, overwrite: true)
            #expect(try folder.read("opened") == plaintext)

            var damaged = try folder.read("sealed")
            damaged[position % damaged.count] ^= 0x80
            _ = try folder.write(damaged, to: "damaged")
            #expect(throws: (any Error).self) {
                try CofferEncryption.decryptFile(atPath: folder.path("damaged"), toPath: folder.path("from-damaged"), with: mode.credential)
            }
            #expect(try folder.contents() == ["damaged", "opened", "plain", "sealed"])
        }
    }

    /// RNCryptor v3 in key mode and password mode at sizes around AES blocks: round trip, exact length
    /// (34-byte header or 18 without salts, PKCS#7 padding, 32-byte HMAC), and any bit flip refused before
    /// any plaintext is released.
    @Test func rncryptorRoundTripsAndRefusesBitFlips() async throws {
        let credentials = Generator { rng in
            if rng.next() % 4 == 0 { return RNCryptor.Credential.password(Array("pass \(rng.next() % 1000)".utf8)) }
            return (try? RNCryptor.Keys(encryptionKey: rng.bytes(count: 32), hmacKey: rng.bytes(count: 32))).map(RNCryptor.Credential.keys)
        }.compactMap { $0 }
        await propertyCheck(count: 60, input: credentials, Self.plaintexts(unit: 16, upTo: 200), Gen.int(in: 0...Int.max)) { credential, plaintext, position in
            let sealed = try RNCryptor.encrypt(plaintext, with: credential)
            let header = if case .password = credential { 34 } else { 18 }
            #expect(sealed.count == header + (plaintext.count / 16 + 1) * 16 + 32)
            #expect(try RNCryptor.decrypt(sealed, with: credential) == plaintext)
            var flipped = sealed
            flipped[position % sealed.count] ^= 1 << ((position / sealed.count) % 8)
            #expect((try? RNCryptor.decrypt(flipped, with: credential)) == nil, "byte \(position % sealed.count)")
        }
    }

    /// OpenSSL `enc` (`Salted__`, AES-256-CBC, PBKDF2): round trip and exact length at sizes around AES blocks.
    @Test func openSSLEncRoundTrips() async throws {
        await propertyCheck(count: 60, input: Self.plaintexts(unit: 16, upTo: 200), Gen.int(in: 1...2_000)) { plaintext, iterations in
            let password = Array("pass \(iterations)".utf8)
            let sealed = try OpenSSLEnc.encrypt(plaintext, password: password, iterations: iterations)
            #expect(sealed.count == 16 + (plaintext.count / 16 + 1) * 16)
            #expect(try OpenSSLEnc.decrypt(sealed, password: password, iterations: iterations) == plaintext)
        }
    }
}
