@testable import CofferHummingbird
import Foundation
import Testing

/// The servers' small JSON answers are written by hand for speed; they must be the very bytes
/// JSONEncoder writes (sorted keys, unescaped slashes), escapes included.
@Suite("Flat JSON answers")
struct FlatJSONTests {
    static func viaEncoder(_ object: FlatJSONObject) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(object)
    }

    @Test func theSameBytesAsJSONEncoder() throws {
        var awkward = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        awkward += ["", "a/b", "é", "日本", "🔑", "\u{2028}\u{2029}", "\u{7F}", #"\"quoted\""#, "k_0123456789abcdef", "line\r\nbreak\t"]
        for (index, text) in awkward.enumerated() {
            let object = FlatJSONObject(["value": .string(text), "key\(index % 3)": .integer(Int64(index) - 40), "detail": .string(text + text)])
            #expect(object.encoded == (try Self.viaEncoder(object)), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        for number in [Int64.min, -1, 0, 1, 42, Int64.max] {
            let object = FlatJSONObject(["n": .integer(number)])
            #expect(object.encoded == (try Self.viaEncoder(object)))
        }
        #expect(FlatJSONObject([:]).encoded == (try Self.viaEncoder(FlatJSONObject([:]))))
    }

    @Test func keysInTheEncodersOrder() throws {
        let object = FlatJSONObject(["type": "t", "title": "T", "status": 401, "reason": "r", "detail": "d", "Zed": "z", "_x": "x", "a-b": "c"])
        #expect(object.encoded == (try Self.viaEncoder(object)))
        #expect(String(decoding: object.encoded, as: UTF8.self).hasPrefix(#"{"Zed":"z","_x":"x","a-b":"c","detail""#))
    }
}
