import Foundation

/// Why `POST /register_user` refused a field: its problem document's reason and detail.
struct UserFieldRefusal: Error, Hashable {
    /// `invalid-email`, `invalid-name`, or `invalid-request` for a character no name or address holds.
    let reason: String
    let detail: String

    static let email = UserFieldRefusal(
        reason: "invalid-email", detail: "email must be an address like ada@example.com, at most \(UserFields.maximumEmailBytes) bytes of UTF-8"
    )
    static let name = UserFieldRefusal(
        reason: "invalid-name",
        detail: "name must be 1 to \(UserFields.maximumNameCharacters) characters, at most \(UserFields.maximumNameBytes) bytes of UTF-8 and \(UserFields.maximumMarksPerCharacter) combining marks on one character"
    )

    /// A control, format, separator, invisible, private-use or unassigned character in `field`.
    static func character(_ scalar: Unicode.Scalar, in field: String) -> UserFieldRefusal {
        let code = String(format: "U+%04X", scalar.value)
        let name = scalar.properties.name ?? scalar.properties.nameAlias ?? "a code point with no name"
        return UserFieldRefusal(
            reason: "invalid-request",
            detail: "\(field) holds \(code) (\(name)): names and addresses are text for people, without control, format, invisible, private-use or unassigned characters"
        )
    }
}

/// The checks and the normalization `POST /register_user` applies to its two fields (docs/SERVER.md,
/// "Users"), with a byte-level path for the common case: printable ASCII holds no control or format
/// character, is its own NFC, and has as many characters as bytes, so Unicode's character properties (a
/// table look-up per character, measured at ~2 µs a request) are consulted only for other text. Both
/// paths give the same answers (`UserFieldsTests`).
enum UserFields {
    /// The longest address, in bytes of UTF-8 (RFC 5321 counts octets: a path of 256 with its brackets;
    /// RFC 6531 keeps the count in octets for addresses beyond ASCII).
    static let maximumEmailBytes = 254
    /// The longest name, in characters as people count them.
    static let maximumNameCharacters = 200
    /// The longest name, in bytes of UTF-8: four for each of its characters. Checked before anything else
    /// looks at the text, so that no work is spent on more.
    static let maximumNameBytes = 800
    /// The most combining marks on one character (Unicode's Stream-Safe Text Format, UAX #15, allows 30
    /// non-starters in a row): one character of a letter and 31,000 marks is 62 KB of one "character".
    static let maximumMarksPerCharacter = 30

    /// The address normalized — Unicode NFC, trimmed of spaces at its ends, the domain after the last
    /// `@` lowercased — when it has the shape `local@domain` (something on each side of its one `@`, no
    /// whitespace, at most ``maximumEmailBytes`` bytes of UTF-8) and none of ``hostileScalar(in:)``'s characters.
    static func email(_ text: String) -> Result<String, UserFieldRefusal> {
        let bytes = text.utf8
        if bytes.allSatisfy({ (0x21...0x7E).contains($0) }) {
            guard bytes.count <= maximumEmailBytes, let at = bytes.lastIndex(of: UInt8(ascii: "@")), bytes.firstIndex(of: UInt8(ascii: "@")) == at,
                  at != bytes.startIndex, bytes.index(after: at) != bytes.endIndex else { return .failure(.email) }
            let domain = bytes[bytes.index(after: at)...]
            // A domain of only a dot is no domain once the trailing dot is dropped, as compared.
            guard !domain.elementsEqual(".".utf8) else { return .failure(.email) }
            guard domain.contains(where: { (0x41...0x5A).contains($0) }) else { return .success(text) }
            return .success(String(decoding: bytes[...at] + domain.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self))
        }
        return anyEmail(text)
    }

    /// ``email(_:)`` through character properties, for any text.
    static func anyEmail(_ text: String) -> Result<String, UserFieldRefusal> {
        // Bytes first: the checks below walk the text, and an address is never longer than this.
        guard text.utf8.count <= 4 * maximumEmailBytes else { return .failure(.email) }
        if let scalar = hostileScalar(in: text) { return .failure(.character(scalar, in: "email")) }
        let email = text.trimmingCharacters(in: .whitespaces).precomposedStringWithCanonicalMapping
        guard let at = email.lastIndex(of: "@"), email.firstIndex(of: "@") == at, at != email.startIndex,
              email.index(after: at) != email.endIndex, !email.unicodeScalars.contains(where: isBlank) else { return .failure(.email) }
        // Counted as stored: lowercasing can lengthen a domain (`İ`, two bytes, is `i̇`, three).
        let domain = email[email.index(after: at)...].lowercased()
        let normalized = String(email[...at]) + domain
        guard normalized.utf8.count <= maximumEmailBytes else { return .failure(.email) }
        // The domain as compared (``domainKey(_:)``) must still be one: NFKC can make a second `@` (U+FF20,
        // U+FE6B), spaces (U+FDFA), or nothing at all (`.`).
        // A label mapped into two (U+2024 ONE DOT LEADER, U+FE52 SMALL FULL STOP: not allowed in domains)
        // is refused too: it would compare as another domain than any DNS name it could be.
        let compared = domainKey(domain)
        guard !compared.isEmpty, !compared.contains("@"), !compared.unicodeScalars.contains(where: isBlank),
              !labels(of: domain).contains(where: { mapped($0).contains(".") }) else { return .failure(.email) }
        return .success(normalized)
    }

    /// What addresses are compared by, so that the spellings that reach one mailbox are one user
    /// (docs/SERVER.md, "Users"): the part before the last `@` in Unicode's default case folding (`ß` and
    /// `SS`, final and medial sigma, `İ` as `i̇`; `ı` stays itself), the domain as UTS #46 maps it as far as
    /// normalization carries it (NFKC and case folding: fullwidth letters and ideographic full stops are
    /// their ASCII forms), its `xn--` labels decoded (``Punycode``) and a trailing dot dropped. Stored as
    /// `coffer_users.email_key`, unique. Printable ASCII with no `xn--` and no trailing dot takes a
    /// byte-level path that gives the same answer.
    static func emailKey(_ normalized: String) -> String {
        let bytes = normalized.utf8
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
            let lowered = bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
            if lowered.last != UInt8(ascii: "."), lowered.firstRange(of: punycodePrefix) == nil {
                return String(decoding: lowered, as: UTF8.self)
            }
        }
        return anyEmailKey(normalized)
    }

    /// The prefix of a domain label in Punycode.
    private static let punycodePrefix = Array("xn--".utf8)

    /// ``emailKey(_:)`` through Unicode's folding and normalization, for any text.
    static func anyEmailKey(_ normalized: String) -> String {
        let address = normalized.precomposedStringWithCanonicalMapping
        guard let at = address.lastIndex(of: "@") else { return folded(address) }
        return folded(String(address[..<at])) + "@" + domainKey(String(address[address.index(after: at)...]))
    }

    /// Unicode's default (full) case folding, then NFC.
    static func folded(_ text: String) -> String {
        text.folding(options: [.caseInsensitive], locale: nil).precomposedStringWithCanonicalMapping
    }

    /// A domain as ``emailKey(_:)`` compares it, label by label (split at the full stops UTS #46 maps to
    /// a dot, a trailing dot dropped): each NFKC-mapped and case folded, and an `xn--` label that is a
    /// valid A-label (UTS #46, 4.1: valid Punycode standing for some non-ASCII text that its own mapping
    /// leaves as it is) decoded. Any other `xn--` label, and a label whose mapping makes a dot, compare
    /// as written, equal to no other spelling: `xn--example-` is not `example`, nor `xn--bcher-2pa`
    /// (`bÜcher`) `bücher`.
    static func domainKey(_ domain: String) -> String {
        labels(of: domain).map { label -> String in
            let mapped = mapped(label)
            guard !mapped.contains(".") else { return String(label) }
            guard mapped.utf8.starts(with: "xn--".utf8), let decoded = Punycode.decode(mapped.utf8.dropFirst(4)),
                  decoded.unicodeScalars.contains(where: { !$0.isASCII }),
                  // Scalar by scalar: Swift's `==` would take a decomposed `ü` for the composed one.
                  self.mapped(Substring(decoded)).unicodeScalars.elementsEqual(decoded.unicodeScalars) else { return mapped }
            return decoded
        }.joined(separator: ".")
    }

    /// A domain's labels: split at `.` and the full stops UTS #46 maps to it (U+3002, U+FF0E, U+FF61),
    /// a trailing empty label (the root's dot) dropped.
    static func labels(of domain: String) -> [Substring] {
        var labels = domain.split(omittingEmptySubsequences: false) { [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"].contains($0) }
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        return labels
    }

    /// A label as UTS #46 maps it as far as normalization carries it: NFKC, case folded, NFKC.
    static func mapped(_ label: Substring) -> String {
        folded(String(label).precomposedStringWithCompatibilityMapping).precomposedStringWithCompatibilityMapping
    }

    /// The name in NFC when it has 1 to ``maximumNameCharacters`` characters in at most
    /// ``maximumNameBytes`` bytes of UTF-8, at least one of which ``shows(_:)``, none with more than
    /// ``maximumMarksPerCharacter`` combining marks, and none of ``hostileScalar(in:)``'s.
    static func name(_ text: String) -> Result<String, UserFieldRefusal> {
        let bytes = text.utf8
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
            return bytes.contains(where: { $0 != 0x20 }) && bytes.count <= maximumNameCharacters ? .success(text) : .failure(.name)
        }
        return anyName(text)
    }

    /// ``name(_:)`` through character properties, for any text.
    static func anyName(_ text: String) -> Result<String, UserFieldRefusal> {
        // Bytes first (NFC may lengthen a text a little, and is checked again after).
        guard text.utf8.count <= maximumNameBytes else { return .failure(.name) }
        if let scalar = hostileScalar(in: text) { return .failure(.character(scalar, in: "name")) }
        let name = text.precomposedStringWithCanonicalMapping
        guard name.utf8.count <= maximumNameBytes, name.count <= maximumNameCharacters, name.unicodeScalars.contains(where: shows),
              !name.contains(where: { $0.unicodeScalars.count(where: isMark) > maximumMarksPerCharacter }) else { return .failure(.name) }
        return .success(name)
    }

    /// A combining mark (nonspacing, spacing or enclosing).
    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    /// Whitespace (U+3000 IDEOGRAPHIC SPACE too): nothing an address holds.
    static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace
    }

    /// A character that shows by itself: not whitespace and not a combining mark (a name of marks
    /// alone shows nothing a reader can tell apart).
    static func shows(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .spaceSeparator: false
        default: !scalar.properties.isWhitespace
        }
    }

    /// Characters that are symbols by their category but show as nothing or as a placeholder:
    /// U+2800 BRAILLE PATTERN BLANK, U+FFFC OBJECT REPLACEMENT CHARACTER, U+1D159 MUSICAL SYMBOL NULL
    /// NOTEHEAD.
    static let invisibleSymbols: Set<UInt32> = [0x2800, 0xFFFC, 0x1D159]

    /// The first character that has no place in text for people: a control character (C0, DEL, C1:
    /// newlines, tabs, NUL), a format character (the bidirectional overrides and isolates, zero-width
    /// characters, the byte-order mark…), a line or paragraph separator, a private-use, surrogate or
    /// unassigned code point (the noncharacters U+FFFE and U+FFFF among them), one Unicode says to
    /// show as nothing (default-ignorable: U+3164 HANGUL FILLER, U+034F COMBINING GRAPHEME JOINER, the
    /// variation selectors…), or one of ``invisibleSymbols``.
    static func hostileScalar(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: true
            default: scalar.properties.isDefaultIgnorableCodePoint || invisibleSymbols.contains(scalar.value)
            }
        }
    }
}
