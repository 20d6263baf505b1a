import Foundation

/// The checks `POST /register_user` makes of its two fields, with a byte-level path for the common
/// case: text of printable ASCII has no whitespace to trim or find beyond the space, and as many
/// characters as bytes, so Unicode's character properties (a table look-up per character, measured at
/// ~2 µs a request) are consulted only for other text. Both paths give the same answers
/// (`UserFieldsTests`).
enum UserFields {
    /// The address, trimmed of spaces at its ends, when it has the shape `local@domain` (something on
    /// each side of an `@`, no whitespace, at most 254 characters); nil otherwise.
    static func email(_ text: String) -> String? {
        let bytes = text.utf8
        if bytes.allSatisfy({ (0x21...0x7E).contains($0) }) {
            guard bytes.count <= 254, let at = bytes.firstIndex(of: UInt8(ascii: "@")), at != bytes.startIndex,
                  bytes.index(after: at) != bytes.endIndex else { return nil }
            return text
        }
        return anyEmail(text)
    }

    /// ``email(_:)`` through character properties, for any text.
    static func anyEmail(_ text: String) -> String? {
        let email = text.trimmingCharacters(in: .whitespaces)
        guard email.count <= 254, let at = email.firstIndex(of: "@"), at != email.startIndex, email.index(after: at) != email.endIndex,
              !email.contains(where: { $0.isWhitespace }) else { return nil }
        return email
    }

    /// Whether a name has 1 to 200 characters.
    static func isValidName(_ text: String) -> Bool {
        let bytes = text.utf8
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) { return !bytes.isEmpty && bytes.count <= 200 }
        return isAnyValidName(text)
    }

    /// ``isValidName(_:)`` through character counting, for any text.
    static func isAnyValidName(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 200
    }
}
