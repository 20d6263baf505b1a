import CofferCore
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
        #expect { try Hex.decode(text) } throws: { ($0 as? CofferCoreError)?.code == .invalidLength }
    }

    @Test(arguments: ["0g", "zz", " 00", "00 ", "00\n", "0x00", "0-", "é0"])
    func rejectsBadCharacters(_ text: String) {
        #expect(throws: CofferCoreError.self) { try Hex.decode(text) }
    }

    @Test func errorNamesOffsetWithoutEchoingInput() throws {
        let error = try #require(throws: CofferCoreError.self) { try Hex.decode("abcd0 ") }
        #expect(error.code == .invalidCharacter)
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
        #expect { try Base64.decode(text) } throws: { ($0 as? CofferCoreError)?.code == code }
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
        #expect { try Base64.decodeURLSafe(text) } throws: { ($0 as? CofferCoreError)?.code == code }
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
