#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// A string or an integer: the values of the servers' small JSON answers.
package enum FlatJSONValue: Sendable, Encodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case integer(Int64)

    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .integer(value) }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        }
    }
}

/// A JSON object of strings and integers, written with sorted keys and unescaped slashes: the same
/// bytes `JSONEncoder` writes with `.sortedKeys` and `.withoutEscapingSlashes` (a test holds the two
/// together), written directly.
///
/// Not `JSONSerialization`: on Linux it sorts keys with a locale-aware (ICU) comparison and casts every
/// value dynamically, about 43 µs for a four-field answer. Not `JSONEncoder` either: its boxing and
/// dynamic dispatch measured 8 µs per answer of a signed request's server CPU; this writer does the
/// same in well under one.
package struct FlatJSONObject: Sendable, Encodable {
    package let fields: [String: FlatJSONValue]

    package init(_ fields: [String: FlatJSONValue]) { self.fields = fields }

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in fields { try container.encode(value, forKey: Key(stringValue: name)) }
    }

    /// The UTF-8 JSON text.
    package var encoded: Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + fields.reduce(0) { $0 + $1.key.utf8.count + 8 + ($1.value.stringValue?.utf8.count ?? 20) })
        bytes.append(UInt8(ascii: "{"))
        // Sorted as JSONEncoder sorts: by the keys' UTF-8 bytes.
        for (index, name) in fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendString(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            switch fields[name] {
            case .string(let text): Self.appendString(text, to: &bytes)
            case .integer(let number): bytes.append(contentsOf: String(number).utf8)
            case nil: bytes.append(contentsOf: "null".utf8)  // unreachable: the key came from `fields`
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string: `"` and `\` escaped, the control characters as JSONEncoder writes them, every
    /// other byte of the UTF-8 as it is.
    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension FlatJSONValue {
    var stringValue: String? { if case .string(let text) = self { text } else { nil } }
}
