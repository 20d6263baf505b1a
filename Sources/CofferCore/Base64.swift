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
        // Generic code from another module runs unspecialised; one pass over a plain buffer keeps
        // encoding allocation-free whatever collection the caller holds.
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: UnsafeRawBufferPointer($0), alphabet: alphabet) }) {
            return encoded
        }
        return Array(bytes).withUnsafeBytes { encode(buffer: $0, alphabet: alphabet) }
    }

    private static func encode(buffer: UnsafeRawBufferPointer, alphabet: Alphabet) -> String {
        let padded = alphabet == .standard
        let fullGroups = buffer.count / 3
        let remainder = buffer.count % 3
        let length = fullGroups * 4 + (remainder == 0 ? 0 : (padded ? 4 : remainder + 1))
        let table = padded ? standardTable : urlTable
        return String(unsafeUninitializedCapacity: length) { output in
            table.withUnsafeBufferPointer { table in
                var written = 0
                var index = 0
                while index + 3 <= buffer.count {
                    let group = UInt32(buffer[index]) << 16 | UInt32(buffer[index + 1]) << 8 | UInt32(buffer[index + 2])
                    output[written] = table[Int(group >> 18 & 0x3F)]
                    output[written + 1] = table[Int(group >> 12 & 0x3F)]
                    output[written + 2] = table[Int(group >> 6 & 0x3F)]
                    output[written + 3] = table[Int(group & 0x3F)]
                    written += 4
                    index += 3
                }
                if remainder > 0 {
                    let second = remainder == 2 ? UInt32(buffer[index + 1]) : 0
                    let group = UInt32(buffer[index]) << 16 | second << 8
                    output[written] = table[Int(group >> 18 & 0x3F)]
                    output[written + 1] = table[Int(group >> 12 & 0x3F)]
                    written += 2
                    if remainder == 2 {
                        output[written] = table[Int(group >> 6 & 0x3F)]
                        written += 1
                    } else if padded {
                        output[written] = UInt8(ascii: "=")
                        written += 1
                    }
                    if padded {
                        output[written] = UInt8(ascii: "=")
                        written += 1
                    }
                }
                return written
            }
        }
    }

    /// Encodes bytes as unpadded base64url (RFC 4648 §5).
    public static func encodeURLSafe<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(bytes, alphabet: .urlSafeUnpadded)
    }

    /// Decodes base64 text in the chosen alphabet (standard by default).
    /// - Throws: ``CofferCoreError`` with code `.invalidCharacter`, `.invalidLength` or
    ///   `.nonCanonicalEncoding`, naming the offending position but never echoing the input.
    public static func decode(_ text: some StringProtocol, alphabet: Alphabet = .standard) throws(CofferCoreError) -> [UInt8] {
        // Native strings are read in place; only text without contiguous UTF-8 is copied first.
        let decoded = text.utf8.withContiguousStorageIfAvailable { utf8 in
            Result { () throws(CofferCoreError) in try decode(utf8: utf8, alphabet: alphabet) }
        }
        if let decoded { return try decoded.get() }
        return try Array(text.utf8).withUnsafeBufferPointer { utf8 in
            Result { () throws(CofferCoreError) in try decode(utf8: utf8, alphabet: alphabet) }
        }.get()
    }

    private static func decode(utf8 text: UnsafeBufferPointer<UInt8>, alphabet: Alphabet) throws(CofferCoreError) -> [UInt8] {
        if let bytes = decodeQuickly(text, alphabet: alphabet) { return bytes }
        return try decodeBySextets(text, alphabet: alphabet)
    }

    /// The standard alphabet's values by character, 0xFF for a character outside it (`=` included).
    private static let standardValues = values(of: standardTable)
    /// The URL-safe alphabet's values by character.
    private static let urlValues = values(of: urlTable)

    private static func values(of table: [UInt8]) -> [UInt8] {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in table.enumerated() { values[Int(character)] = UInt8(value) }
        return values
    }

    /// Decodes text that ``decodeBySextets(_:alphabet:)`` accepts, four characters at a time through
    /// a table, into one buffer of the exact size; nil for anything else, which that decoder then
    /// refuses with its reason. (What both accept, they decode alike: `Base64Tests` hold them equal on
    /// valid and mutated texts.)
    static func decodeQuickly(_ text: UnsafeBufferPointer<UInt8>, alphabet: Alphabet) -> [UInt8]? {
        var count = text.count
        switch alphabet {
        case .standard:
            guard count % 4 == 0 else { return nil }
            if count > 0 && text[count - 1] == UInt8(ascii: "=") { count -= 1 }
            if count > 0 && text[count - 1] == UInt8(ascii: "=") { count -= 1 }
        case .urlSafeUnpadded:
            guard count % 4 != 1 else { return nil }
        }
        let fullGroups = count / 4
        let tail = count % 4   // 0, 2 or 3 characters: 0, 1 or 2 more bytes
        guard tail != 1 else { return nil }
        let length = fullGroups * 3 + (tail == 0 ? 0 : tail - 1)
        let table = alphabet == .standard ? standardValues : urlValues
        var valid = true
        let bytes = table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: length) { output, written in
                var bad: UInt8 = 0   // any character outside the alphabet sets its top bit
                var index = 0
                for group in 0..<fullGroups {
                    let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                    let c = table[Int(text[index + 2])], d = table[Int(text[index + 3])]
                    bad |= a | b | c | d
                    let value = UInt32(a & 0x3F) << 18 | UInt32(b & 0x3F) << 12 | UInt32(c & 0x3F) << 6 | UInt32(d & 0x3F)
                    output[group * 3] = UInt8(truncatingIfNeeded: value >> 16)
                    output[group * 3 + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    output[group * 3 + 2] = UInt8(truncatingIfNeeded: value)
                    index += 4
                }
                if tail > 0 {
                    let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                    let c = tail == 3 ? table[Int(text[index + 2])] : 0
                    bad |= a | b | c
                    let value = UInt32(a & 0x3F) << 18 | UInt32(b & 0x3F) << 12 | UInt32(c & 0x3F) << 6
                    output[fullGroups * 3] = UInt8(truncatingIfNeeded: value >> 16)
                    if tail == 3 { output[fullGroups * 3 + 1] = UInt8(truncatingIfNeeded: value >> 8) }
                    // The bits after the last byte must be zero (a canonical encoding).
                    if value & (tail == 3 ? 0xFF : 0xFFFF) != 0 { bad |= 0x80 }
                }
                valid = bad & 0x80 == 0
                written = length
            }
        }
        return valid ? bytes : nil
    }

    /// Decodes one character at a time, naming the first thing wrong with the text.
    static func decodeBySextets(_ text: UnsafeBufferPointer<UInt8>, alphabet: Alphabet) throws(CofferCoreError) -> [UInt8] {
        var utf8 = text[...]
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
                utf8 = utf8.dropLast()
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
