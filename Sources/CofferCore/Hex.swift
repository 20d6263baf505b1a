/// Lower-case hexadecimal (base 16), as printed by `sha256sum` and `openssl dgst`.
///
/// The decoder is strict: it accepts upper- and lower-case digits but rejects odd lengths, whitespace,
/// separators and `0x` prefixes with a ``CofferCoreError``, so a value that decodes is exactly what was meant.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lower-case hex, two digits per byte.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        // Generic code from another module runs unspecialised; one pass over a plain buffer keeps
        // encoding allocation-free whatever collection the caller holds.
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: UnsafeRawBufferPointer($0)) }) {
            return encoded
        }
        return Array(bytes).withUnsafeBytes { encode(buffer: $0) }
    }

    private static func encode(buffer: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: buffer.count * 2) { output in
            digits.withUnsafeBufferPointer { digits in
                for (index, byte) in buffer.enumerated() {
                    output[2 * index] = digits[Int(byte >> 4)]
                    output[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
            }
            return buffer.count * 2
        }
    }

    /// Decodes hex text.
    /// - Throws: ``CofferCoreError`` with code `.invalidLength` for an odd number of digits, or
    ///   `.invalidCharacter` naming the first offending position.
    public static func decode(_ text: some StringProtocol) throws(CofferCoreError) -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else {
            throw CofferCoreError(.invalidLength, "expected an even number of hex digits, found \(utf8.count)")
        }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(of: utf8[index]) else { throw invalidCharacter(utf8[index], at: index) }
            guard let low = value(of: utf8[index + 1]) else { throw invalidCharacter(utf8[index + 1], at: index + 1) }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Whether the text is a well-formed hex string (even length, hex digits only).
    public static func isValid(_ text: some StringProtocol) -> Bool {
        (try? decode(text)) != nil
    }

    @inline(__always)
    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    private static func invalidCharacter(_ character: UInt8, at offset: Int) -> CofferCoreError {
        CofferCoreError(
            .invalidCharacter,
            "expected a hex digit (0-9, a-f) at offset \(offset), found \(describe(character))"
        )
    }
}

/// Names a byte for an error message without echoing arbitrary input: printable ASCII is quoted,
/// everything else is shown as a code.
func describe(_ character: UInt8) -> String {
    switch character {
    case UInt8(ascii: " "): "a space"
    case UInt8(ascii: "\n"): "a line feed"
    case UInt8(ascii: "\r"): "a carriage return"
    case UInt8(ascii: "\t"): "a tab"
    case 0x21...0x7E: "'\(Character(Unicode.Scalar(character)))'"
    default: "byte 0x\(Hex.encode([character]))"
    }
}
