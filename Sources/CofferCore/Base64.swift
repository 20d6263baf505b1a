/// Base64 in the two alphabets of RFC 4648: standard (§4, with `=` padding) and URL-safe (§5, unpadded,
/// as JOSE and HTTP signatures use it).
///
/// Decoders are strict. They reject whitespace and line breaks, characters of the other alphabet,
/// missing or misplaced padding, impossible lengths, and non-canonical encodings (non-zero bits in the
/// last character's unused positions), so every byte string has exactly one accepted text form. That
/// matters for anything compared or signed as text.
public enum Base64 {
    /// Which of the two RFC 4648 alphabets and padding rules to use.
    public enum Alphabet: Sendable {
        /// `A-Z a-z 0-9 + /`, padded with `=` to a multiple of four characters.
        case standard
        /// `A-Z a-z 0-9 - _`, never padded.
        case urlSafeUnpadded
    }

    private static let standardTable: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlTable: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes in the chosen alphabet (standard by default).
    public static func encode<Bytes: Collection>(_ bytes: Bytes, alphabet: Alphabet = .standard) -> String
    where Bytes.Element == UInt8 {
        let table = alphabet == .standard ? standardTable : urlTable
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            out.append(table[Int(group >> 18 & 0x3F)])
            out.append(table[Int(group >> 12 & 0x3F)])
            if second != nil {
                out.append(table[Int(group >> 6 & 0x3F)])
            } else if alphabet == .standard {
                out.append(UInt8(ascii: "="))
            }
            if third != nil {
                out.append(table[Int(group & 0x3F)])
            } else if alphabet == .standard {
                out.append(UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes bytes as unpadded base64url (RFC 4648 §5).
    public static func encodeURLSafe<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(bytes, alphabet: .urlSafeUnpadded)
    }

    /// Decodes base64 text in the chosen alphabet (standard by default).
    /// - Throws: ``CofferCoreError`` with code `.invalidCharacter`, `.invalidLength` or
    ///   `.nonCanonicalEncoding`, naming the offending position but never echoing the input.
    public static func decode(_ text: some StringProtocol, alphabet: Alphabet = .standard) throws(CofferCoreError) -> [UInt8] {
        var utf8 = Array(text.utf8)
        let name = alphabet == .standard ? "base64" : "base64url"
        switch alphabet {
        case .standard:
            guard utf8.count % 4 == 0 else {
                throw CofferCoreError(
                    .invalidLength,
                    "expected \(name) text whose length is a multiple of 4, found \(utf8.count) characters"
                )
            }
            var padding = 0
            while padding < 2, let last = utf8.last, last == UInt8(ascii: "=") {
                utf8.removeLast()
                padding += 1
            }
        case .urlSafeUnpadded:
            guard utf8.count % 4 != 1 else {
                throw CofferCoreError(.invalidLength, "\(name) text cannot have \(utf8.count) characters (4n+1 is impossible)")
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for (offset, character) in utf8.enumerated() {
            guard let value = sextet(character, alphabet: alphabet) else {
                let what = character == UInt8(ascii: "=") ? "misplaced padding '='" : describe(character)
                throw CofferCoreError(.invalidCharacter, "expected a \(name) character at offset \(offset), found \(what)")
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // A final group of 2 or 3 characters leaves 4 or 2 unused bits; canonical encoders set them to zero.
        if accumulator != 0 {
            throw CofferCoreError(.nonCanonicalEncoding, "\(name) text has non-zero bits after its last byte (not canonical)")
        }
        return out
    }

    /// Decodes unpadded base64url text (RFC 4648 §5).
    public static func decodeURLSafe(_ text: some StringProtocol) throws(CofferCoreError) -> [UInt8] {
        try decode(text, alphabet: .urlSafeUnpadded)
    }

    @inline(__always)
    private static func sextet(_ character: UInt8, alphabet: Alphabet) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character &- UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character &- UInt8(ascii: "a") &+ 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character &- UInt8(ascii: "0") &+ 52
        case UInt8(ascii: "+") where alphabet == .standard: 62
        case UInt8(ascii: "/") where alphabet == .standard: 63
        case UInt8(ascii: "-") where alphabet == .urlSafeUnpadded: 62
        case UInt8(ascii: "_") where alphabet == .urlSafeUnpadded: 63
        default: nil
        }
    }
}
