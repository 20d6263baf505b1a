import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// RFC 4231 §4 vectors, loaded from Tests/Vectors/rfc (see its README for provenance).
struct RFC4231File: Decodable {
    struct Case: Decodable {
        let id: Int
        let key: String
        let data: String
        let truncate_bits: Int?
        let sha256: String
        let sha384: String
        let sha512: String
    }
    let tests: [Case]
}

@Suite("HMAC")
struct HMACTests {
    @Test func rfc4231() throws {
        let file = try TestVectors.load(RFC4231File.self, from: "rfc/rfc4231_hmac_sha2.json")
        #expect(file.tests.count == 7)
        var checked = 0
        for test in file.tests {
            let key = try MACKey(bytes: Hex.decode(test.key))
            let data = try Hex.decode(test.data)
            let truncation = test.truncate_bits.map { $0 / 8 }
            for (algorithm, expected) in [(MACAlgorithm.hmacSHA256, test.sha256), (.hmacSHA384, test.sha384), (.hmacSHA512, test.sha512)] {
                let tag = try algorithm.authenticationCode(for: data, using: key, truncatedTo: truncation)
                #expect(tag.hex == expected, "case \(test.id) \(algorithm)")
                #expect(try algorithm.isValidAuthenticationCode(Hex.decode(expected), for: data, using: key, truncatedTo: truncation))
                checked += 1
            }
        }
        #expect(checked == 21)
    }

    @Test(arguments: [
        ("hmac_sha1_test.json", MACAlgorithm.insecureHMACSHA1),
        ("hmac_sha256_test.json", .hmacSHA256),
        ("hmac_sha512_test.json", .hmacSHA512),
    ])
    func wycheproof(file name: String, algorithm: MACAlgorithm) throws {
        let file = try TestVectors.load(WycheproofMACFile.self, from: "wycheproof/testvectors_v1/\(name)")
        var valid = 0
        var invalid = 0
        for group in file.testGroups {
            let length = group.tagSize / 8
            let truncation = length == algorithm.tagByteCount ? nil : length
            for test in group.tests {
                let key = try MACKey(bytes: Hex.decode(test.key))
                let message = try Hex.decode(test.msg)
                let tag = try Hex.decode(test.tag)
                let accepted = try algorithm.isValidAuthenticationCode(tag, for: message, using: key, truncatedTo: truncation)
                switch test.result {
                case "valid":
                    #expect(accepted, "tcId \(test.tcId): \(test.comment)")
                    #expect(try algorithm.authenticationCode(for: message, using: key, truncatedTo: truncation).bytes == tag)
                    valid += 1
                case "invalid":
                    #expect(!accepted, "tcId \(test.tcId): \(test.comment)")
                    invalid += 1
                default:
                    Issue.record("unexpected result '\(test.result)' in tcId \(test.tcId)")
                }
            }
        }
        #expect(valid + invalid == file.numberOfTests)
        #expect(valid == 66)
    }

    @Test func incrementalEqualsOneShot() throws {
        let key = try MACKey.generate()
        let bytes = Fixtures.randomBytes(count: 1000)
        for algorithm in MACAlgorithm.allCases {
            var authenticator = MessageAuthenticator(algorithm, key: key)
            authenticator.update(bytes[..<333])
            authenticator.update(Data(bytes[333...]))
            #expect(try authenticator.finalize() == algorithm.authenticationCode(for: bytes, using: key))
        }
    }

    /// The HTTP verifier keys one computation per key and copies it for each request: copies must carry
    /// on independently, from the state they were copied in, and never disturb the original.
    @Test func aCopiedComputationCarriesOnAlone() throws {
        let key = try MACKey.generate()
        let first = Fixtures.randomBytes(count: 200)
        let second = Fixtures.randomBytes(count: 70)
        for algorithm in MACAlgorithm.allCases {
            let keyed = MessageAuthenticator(algorithm, key: key)
            var a = keyed
            var b = keyed
            a.update(first)
            b.update(second)
            var c = a  // copied mid-way: shares what a had, then goes its own way
            c.update(second)
            #expect(try a.finalize() == algorithm.authenticationCode(for: first, using: key))
            #expect(try b.finalize() == algorithm.authenticationCode(for: second, using: key))
            #expect(try c.finalize() == algorithm.authenticationCode(for: first + second, using: key))
            #expect(try keyed.finalize() == algorithm.authenticationCode(for: [UInt8](), using: key))
            #expect(try a.finalize(truncatedTo: 10).bytes == Array(try algorithm.authenticationCode(for: first, using: key).bytes.prefix(10)))
        }
    }

    @Test func fileTagEqualsMemoryTag() throws {
        let folder = try TemporaryDirectory()
        let bytes = Fixtures.randomBytes(count: FileReader.defaultChunkSize + 1)
        let path = try folder.write(bytes, to: "message")
        let key = try MACKey.generate(byteCount: 64)
        for algorithm in MACAlgorithm.allCases {
            let tag = try algorithm.authenticationCode(forFileAtPath: path, using: key)
            #expect(tag == (try algorithm.authenticationCode(for: bytes, using: key)))
            #expect(try algorithm.isValidAuthenticationCode(tag.bytes, forFileAtPath: path, using: key))
        }
    }

    @Test func truncationHasAFloorOfTenBytes() throws {
        let key = try MACKey.generate()
        let tag = try MACAlgorithm.hmacSHA256.authenticationCode(for: "message", using: key, truncatedTo: 10)
        #expect(tag.bytes.count == 10)
        #expect(tag.isTruncated)
        for bad in [0, 9, 33] {
            #expect(throws: CofferCryptoError.invalidTagLength) { try MACAlgorithm.hmacSHA256.authenticationCode(for: "message", using: key, truncatedTo: bad) }
        }
        #expect(throws: CofferCryptoError.self) { try tag.truncated(to: 9) }
        #expect(throws: CofferCryptoError.self) { try tag.truncated(to: 11) }
    }

    @Test func aShorterTagNeverPassesForAFullOne() throws {
        let key = try MACKey.generate()
        let full = try MACAlgorithm.hmacSHA256.authenticationCode(for: "message", using: key)
        // The received tag cannot choose its own length: a correct prefix is rejected unless the caller asked for truncation.
        #expect(try !MACAlgorithm.hmacSHA256.isValidAuthenticationCode(full.bytes.prefix(16), for: "message".utf8, using: key))
        #expect(try MACAlgorithm.hmacSHA256.isValidAuthenticationCode(full.bytes.prefix(16), for: "message".utf8, using: key, truncatedTo: 16))
        #expect(try !MACAlgorithm.hmacSHA256.isValidAuthenticationCode(full.bytes, for: "message".utf8, using: key, truncatedTo: 16))
    }

    @Test func wrongKeyOrMessageFails() throws {
        let key = try MACKey.generate()
        let other = try MACKey.generate()
        let tag = try MACAlgorithm.hmacSHA512.authenticationCode(for: "message", using: key)
        #expect(try !MACAlgorithm.hmacSHA512.isValidAuthenticationCode(tag.bytes, for: "message".utf8, using: other))
        #expect(try !MACAlgorithm.hmacSHA512.isValidAuthenticationCode(tag.bytes, for: "messagE".utf8, using: key))
    }
}

@Suite("Keys and randomness")
struct KeyTests {
    @Test func generatedKeysHaveTheRequestedSizeAndDiffer() throws {
        let first = try MACKey.generate()
        let second = try MACKey.generate()
        #expect(first.byteCount == 32)
        #expect(try MACKey.generate(byteCount: 16).byteCount == 16)
        let a = first.withUnsafeKeyBytes { Array($0) }
        let b = second.withUnsafeKeyBytes { Array($0) }
        #expect(a != b)
    }

    @Test func weakOrEmptyKeysAreRefused() {
        #expect(throws: CofferCryptoError.invalidKey) { try MACKey.generate(byteCount: 15) }
        #expect(throws: CofferCryptoError.invalidKey) { try MACKey(bytes: [UInt8]()) }
    }

    @Test func descriptionDoesNotRevealTheKey() throws {
        let key = try MACKey(bytes: Array("super-secret-key".utf8))
        #expect(key.description == "MACKey(16 bytes)")
        #expect(!"\(key)".contains("secret"))
    }

    @Test func randomBytes() throws {
        #expect(try SecureRandom.bytes(count: 0) == [])
        let a = try SecureRandom.bytes(count: 32)
        let b = try SecureRandom.bytes(count: 32)
        #expect(a.count == 32 && a != b)
        #expect(throws: CofferCryptoError.self) { try SecureRandom.bytes(count: -1) }
        #expect(throws: CofferCryptoError.self) { try SecureRandom.bytes(count: SecureRandom.maximumByteCount + 1) }
        // A buffer larger than one request is filled completely (no zero tail).
        var big = [UInt8](repeating: 0, count: SecureRandom.maximumByteCount + 4096)
        big.withUnsafeMutableBytes { SecureRandom.fill($0) }
        #expect(big.suffix(4096).contains { $0 != 0 })
    }
}
