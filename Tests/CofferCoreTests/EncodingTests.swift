@testable import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Hex")
struct HexTests {
    @Test func encodesLowerCase() {
        #expect(Hex.encode([0x00, 0x0F, 0xA5, 0xFF]) == "000fa5ff")
        #expect(Hex.encode([UInt8]()) == "")
    }

    @Test func decodesBothCases() throws {
        #expect(try Hex.decode("000fA5Ff") == [0x00, 0x0F, 0xA5, 0xFF])
        #expect(try Hex.decode("") == [])
    }

    @Test func roundTripsRandomBytes() throws {
        for count in [1, 2, 31, 32, 33, 1000] {
            let bytes = Fixtures.randomBytes(count: count)
            #expect(try Hex.decode(Hex.encode(bytes)) == bytes)
        }
    }

    @Test(arguments: ["abc", "0", "a"])
    func rejectsOddLengths(_ text: String) {
        #expect(throws: CofferCoreError.invalidLength) { try Hex.decode(text) }
    }

    @Test(arguments: ["0g", "zz", " 00", "00 ", "00\n", "0x00", "0-", "é0"])
    func rejectsBadCharacters(_ text: String) {
        #expect(throws: CofferCoreError.self) { try Hex.decode(text) }
    }

    @Test func errorNamesOffsetWithoutEchoingInput() throws {
        let error = try #require(throws: CofferCoreError.invalidCharacter) { try Hex.decode("abcd0 ") }
        #expect(error.reason == "expected a hex digit (0-9, a-f) at offset 5, found a space")
    }
}

@Suite("Base64")
struct Base64Tests {
    /// RFC 4648 §10.
    static let rfc4648: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test func rfc4648Vectors() throws {
        for (plain, encoded) in Self.rfc4648 {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(try Base64.decode(encoded) == Array(plain.utf8))
            let unpadded = encoded.replacingOccurrences(of: "=", with: "")
            #expect(Base64.encodeURLSafe(Array(plain.utf8)) == unpadded)
            #expect(try Base64.decodeURLSafe(unpadded) == Array(plain.utf8))
        }
    }

    @Test func urlAlphabetUsesDashAndUnderscore() throws {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.encodeURLSafe(bytes) == "-_-_")
        #expect(try Base64.decodeURLSafe("-_-_") == bytes)
    }

    @Test func agreesWithFoundationOnRandomData() throws {
        for count in 0..<70 {
            let bytes = Fixtures.randomBytes(count: count)
            let foundation = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes) == foundation)
            #expect(try Base64.decode(foundation) == bytes)
        }
    }

    @Test(arguments: [
        ("Zm9v\n", CofferCoreError.Code.invalidLength),
        ("Zm 9v", .invalidLength),
        ("Zm9 v", .invalidLength),
        ("Zm9v Zm9v", .invalidLength),
        ("Zg", .invalidLength),
        ("Zm9", .invalidLength),
        ("Zg=", .invalidLength),
        ("Z===", .invalidCharacter),
        ("====", .invalidCharacter),
        ("Zg=a", .invalidCharacter),
        ("-_-_", .invalidCharacter),
        ("Zm9\tv", .invalidLength),
        ("Zh==", .nonCanonicalEncoding),
        ("Zm9=", .nonCanonicalEncoding),
        ("Zm8 ", .invalidCharacter),
    ])
    func standardDecoderIsStrict(_ text: String, _ code: CofferCoreError.Code) {
        #expect(throws: CofferCoreError.matching(code)) { try Base64.decode(text) }
    }

    @Test(arguments: [
        ("Zg==", CofferCoreError.Code.invalidCharacter),
        ("+/+/", .invalidCharacter),
        ("Z", .invalidLength),
        ("Zm9vY", .invalidLength),
        ("Zh", .nonCanonicalEncoding),
        ("Zm9", .nonCanonicalEncoding),
        ("Zm 9", .invalidCharacter),
    ])
    func urlDecoderIsStrict(_ text: String, _ code: CofferCoreError.Code) {
        #expect(throws: CofferCoreError.matching(code)) { try Base64.decodeURLSafe(text) }
    }

    /// The table decoder answers for exactly the texts the per-character one accepts, with the same
    /// bytes, and nil (leaving the refusal and its reason to that one) for everything it refuses: valid
    /// texts of every length, and each with one to three edits from an alphabet of both alphabets'
    /// characters, padding, whitespace and a byte outside ASCII.
    @Test(arguments: [Base64.Alphabet.standard, .urlSafeUnpadded])
    func tableDecoderAgreesWithThePerCharacterOne(_ alphabet: Base64.Alphabet) throws {
        let edits = Array("AZaz09+/-_= \n.".utf8) + [0xC3]
        var generator = SystemRandomNumberGenerator()
        var accepted = 0, refused = 0
        for count in 0..<48 {
            let valid = Array(Base64.encode(Fixtures.randomBytes(count: count), alphabet: alphabet).utf8)
            for trial in 0..<60 {
                var text = valid
                for _ in 0..<(trial == 0 ? 0 : Int.random(in: 1...3, using: &generator)) {
                    let position = Int.random(in: 0...text.count, using: &generator)
                    let byte = edits.randomElement(using: &generator) ?? 0
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0 where position < text.count: text[position] = byte
                    case 1 where position < text.count: text.remove(at: position)
                    default: text.insert(byte, at: position)
                    }
                }
                let quick = text.withUnsafeBufferPointer { Base64.decodeQuickly($0, alphabet: alphabet) }
                let bySextets = text.withUnsafeBufferPointer { try? Base64.decodeBySextets($0, alphabet: alphabet) }
                #expect(quick == bySextets, "\(String(decoding: text, as: UTF8.self).debugDescription)")
                if bySextets == nil { refused += 1 } else { accepted += 1 }
            }
        }
        #expect(accepted > 100 && refused > 100, "both kinds of text were tried: \(accepted) accepted, \(refused) refused")
    }
}

@Suite("Constant-time comparison")
struct ConstantTimeTests {
    @Test func comparesContents() {
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [0, 2, 3] as [UInt8]))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
    }

    @Test func differentLengthsAreUnequal() {
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2] as [UInt8], [1, 2, 0] as [UInt8]))
        #expect(!ConstantTime.equals([] as [UInt8], [0] as [UInt8]))
    }

    @Test func acceptsMixedCollections() {
        let bytes: [UInt8] = [9, 8, 7, 6]
        #expect(ConstantTime.equals(bytes[1...], Data([8, 7, 6])))
    }
}
