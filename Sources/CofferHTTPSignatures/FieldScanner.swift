/// A reader of the structured-field dictionaries (RFC 9651 §4.2) that `Signature-Input`, `Signature`
/// and `Content-Digest` carry in their everyday shapes, byte by byte.
///
/// swift-http-structured-headers stays the parser of record. Its parser is generic and not inlinable,
/// so outside its module it runs unspecialized, through witness tables for every byte: 31 µs of a
/// 54 µs HMAC verification on 2026-11-26's host. This reader answers only for the shapes it knows and
/// returns nil for anything else (an escape in a string, a token, a decimal, a boolean written out, a
/// repeated key, a parameter where none is expected, any syntax error); the caller then asks the full
/// parser, which accepts or refuses with its own reasons. So what it reads, it reads as that parser
/// does, and what it does not, costs one wasted pass (`FieldScannerTests` hold the two equal on valid,
/// mutated and random fields).
struct FieldScanner {
    /// A parameter's value in the shapes read here: `;created=1618884473`, `;keyid="k"`, or `;req`.
    enum Value: Equatable {
        case integer(Int64)
        case string(String)
        case `true`
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// The members of a dictionary, in order, each read by `member` (which starts after the key and its
    /// `=`, and returns false for a shape it does not read); nil when `member` declined one, a key
    /// repeats, a member has no `=`, or the separators or the end are not RFC 9651's. Callers bound the
    /// members and parameters first (``extent(of:)``): a key is looked for among all those before it.
    mutating func dictionary(_ member: (inout FieldScanner, String) -> Bool) -> [String]? {
        skip(" ")
        var keys: [String] = []
        keys.reserveCapacity(4)   // one allocation for the usual field of one to four members
        while index < bytes.count {
            guard let key = key(), !keys.contains(key), take("="), member(&self, key) else { return nil }
            keys.append(key)
            skipWhitespace()
            guard index < bytes.count else { break }
            guard take(",") else { return nil }
            skipWhitespace()
            guard index < bytes.count else { return nil }   // a trailing comma
        }
        return keys
    }

    /// An inner list of strings, each with its parameters, and the list's parameters:
    /// `("@method" "content-digest";req);created=1`.
    mutating func innerListOfStrings() -> (items: [(String, [(String, Value)])], parameters: [(String, Value)])? {
        guard take("(") else { return nil }
        var items: [(String, [(String, Value)])] = []
        items.reserveCapacity(8)
        while true {
            skip(" ")
            if take(")") { break }
            guard let item = string(), let parameters = parameters() else { return nil }
            items.append((item, parameters))
            guard peek(" ") || peek(")") else { return nil }
        }
        guard let parameters = parameters() else { return nil }
        return (items, parameters)
    }

    /// A byte sequence without parameters, as its base64 text: `:AAEC:` reads `AAEC`.
    mutating func byteSequence() -> String? {
        guard take(":") else { return nil }
        let start = index
        while index < bytes.count, Self.isBase64(bytes[index]) { index += 1 }
        let end = index
        guard take(":"), !peek(";") else { return nil }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// Parameters whose values are integers, strings or bare (true); nil on a repeated name.
    mutating func parameters() -> [(String, Value)]? {
        var parameters: [(String, Value)] = []
        while take(";") {
            if parameters.isEmpty { parameters.reserveCapacity(8) }   // items without parameters allocate nothing
            skip(" ")
            guard let name = key(), !parameters.contains(where: { $0.0 == name }) else { return nil }
            guard take("=") else {
                parameters.append((name, .true))
                continue
            }
            if let value = string() {
                parameters.append((name, .string(value)))
            } else if let value = integer() {
                parameters.append((name, .integer(value)))
            } else {
                return nil
            }
        }
        return parameters
    }

    /// How many members a structured field has at most (its commas outside strings, plus one) and the
    /// most parameters on one item or inner list (a run of semicolons outside strings), in one pass
    /// and without reading anything else. Counted before any parser sees a field: the maps of
    /// swift-http-structured-headers look each new key up among those before it, so a field of many
    /// members or parameters costs the square of their number (80 KiB of parameters, a second of CPU).
    static func extent(of text: String) -> (members: Int, parameters: Int) {
        // Over the string's own UTF-8 buffer: iterating `text.utf8` costs an index step per byte.
        var text = text
        return text.withUTF8 { extent(ofBytes: $0) }
    }

    private static func extent(ofBytes bytes: UnsafeBufferPointer<UInt8>) -> (members: Int, parameters: Int) {
        var members = 1, parameters = 0, run = 0
        var inString = false, escaped = false
        var previous: UInt8 = 0   // the last byte outside strings other than whitespace
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: ","): members += 1; run = 0
            case UInt8(ascii: ";"): run += 1; parameters = max(parameters, run)
            case UInt8(ascii: "("), UInt8(ascii: ")"): run = 0
            // Whitespace ends an item's parameters, except right after a semicolon (`; key`).
            case UInt8(ascii: " "), UInt8(ascii: "\t"): if previous != UInt8(ascii: ";") { run = 0 }
            default: break
            }
            if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { previous = byte }
        }
        return (members, parameters)
    }

    // MARK: - Items

    /// A key: a lowercase letter or `*`, then lowercase letters, digits, `_`, `-`, `.` and `*`.
    private mutating func key() -> String? {
        guard index < bytes.count, Self.isLowercase(bytes[index]) || bytes[index] == UInt8(ascii: "*") else { return nil }
        let start = index
        while index < bytes.count, Self.isKeyByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A string of printable ASCII without escapes.
    private mutating func string() -> String? {
        guard peek("\"") else { return nil }
        var end = index + 1
        while end < bytes.count {
            switch bytes[end] {
            case UInt8(ascii: "\""):
                let text = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                index = end + 1
                return text
            case 0x20...0x7E where bytes[end] != UInt8(ascii: "\\"):
                end += 1
            default:
                return nil
            }
        }
        return nil
    }

    /// An integer of at most 15 digits, optionally negative; nil for a decimal.
    private mutating func integer() -> Int64? {
        var end = index
        let negative = end < bytes.count && bytes[end] == UInt8(ascii: "-")
        if negative { end += 1 }
        let digitsStart = end
        var value: Int64 = 0
        while end < bytes.count, Self.isDigit(bytes[end]), end - digitsStart < 15 {
            value = value * 10 + Int64(bytes[end] - UInt8(ascii: "0"))
            end += 1
        }
        guard end > digitsStart, end == bytes.count || !(Self.isDigit(bytes[end]) || bytes[end] == UInt8(ascii: ".")) else { return nil }
        index = end
        return negative ? -value : value
    }

    // MARK: - Bytes

    private func peek(_ byte: Unicode.Scalar) -> Bool {
        index < bytes.count && bytes[index] == UInt8(ascii: byte)
    }

    private mutating func take(_ byte: Unicode.Scalar) -> Bool {
        guard peek(byte) else { return false }
        index += 1
        return true
    }

    private mutating func skip(_ byte: Unicode.Scalar) {
        while peek(byte) { index += 1 }
    }

    /// Skips RFC 9110's optional whitespace: spaces and tabs.
    private mutating func skipWhitespace() {
        while peek(" ") || peek("\t") { index += 1 }
    }

    static func isLowercase(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Whether a byte may follow a key's first (RFC 9651 §3.1.2): lowercase letters, digits, `_`, `-`, `.`, `*`.
    static func isKeyByte(_ byte: UInt8) -> Bool {
        isLowercase(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "*")
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        isLowercase(byte) || isDigit(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
}
