public import CofferCrypto
import CofferCore

/// Checksum lists in the formats of GNU coreutils (`sha256sum`) and BSD (`sha256sum --tag`, `shasum --tag`).
///
/// Writing follows `sha256sum` byte for byte, so `sha256sum -c` accepts what Coffer writes; reading accepts
/// what `sha256sum`, `shasum` and Coffer write, so `coffer hash --check` accepts theirs:
///
/// ```
/// e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt
/// \3e23e8160039594a3389c009d…  new\nline          (a name with \ or a line break is escaped)
/// SHA256 (empty.txt) = e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
/// ```
///
/// Digests may also be standard base64, as `coffer hash --base64` and `cksum --base64` write them.
public enum ChecksumList {
    /// How a line names its algorithm and file.
    public enum Style: Sendable {
        /// `HEX  NAME`, as `sha256sum` prints by default.
        case gnu
        /// `ALGO (NAME) = HEX`, as `sha256sum --tag` prints.
        case bsd
    }

    /// One checked entry of a list.
    public struct Entry: Sendable, Hashable {
        /// The algorithm the line's digest was made with.
        public var algorithm: DigestAlgorithm
        /// The expected digest bytes.
        public var expected: [UInt8]
        /// The file name exactly as listed, with escapes undone.
        public var path: String
        /// The 1-based line number in the list.
        public var line: Int

        /// Creates an entry.
        public init(algorithm: DigestAlgorithm, expected: [UInt8], path: String, line: Int) {
            self.algorithm = algorithm
            self.expected = expected
            self.path = path
            self.line = line
        }
    }

    /// The longest line the parser reads: 64 KiB. Longer lines are reported as malformed, not buffered.
    public static let maximumLineLength = 65_536

    /// Formats one line (without its line feed) exactly as `sha256sum` would.
    ///
    /// A name containing a backslash, line feed or carriage return is escaped (`\\`, `\n`, `\r`) and the
    /// line starts with a backslash, as coreutils 9 does.
    public static func line(for digest: DigestValue, path: String, style: Style = .gnu, base64: Bool = false) -> String {
        let encoded = base64 ? digest.base64 : digest.hex
        let escaped = needsEscape(path)
        let name = escaped ? escape(path) : path
        let prefix = escaped ? "\\" : ""
        switch style {
        case .gnu: return "\(prefix)\(encoded)  \(name)"
        case .bsd: return "\(prefix)\(digest.algorithm.bsdTag) (\(name)) = \(encoded)"
        }
    }

    /// A file name as `sha256sum -c` shows it in its `NAME: OK` lines: escaped and prefixed with a
    /// backslash when it contains a backslash, line feed or carriage return.
    public static func displayName(_ path: String) -> String {
        needsEscape(path) ? "\\" + escape(path) : path
    }

    /// Parses one line of a checksum list.
    ///
    /// - Parameters:
    ///   - line: the line, without its line feed (a trailing carriage return is ignored).
    ///   - number: its 1-based line number, for error messages and ``Entry/line``.
    ///   - algorithm: the algorithm untagged (GNU) lines were made with.
    ///   - strict: when `true`, a BSD line that names a different algorithm is an error and an untagged
    ///     line must be `algorithm`'s; when `false` the tag decides, and an untagged line's digest length
    ///     (SHA-256, SHA-384 or SHA-512), as for `coffer hash --check` without `-a`.
    /// - Returns: the entry, or `nil` for a blank line or a `#` comment, which `sha256sum -c` also skips.
    /// - Throws: ``CofferFormatsError`` with the line number for anything else.
    public static func parse(
        line: Substring,
        number: Int,
        algorithm: DigestAlgorithm,
        strict: Bool
    ) throws(CofferFormatsError) -> Entry? {
        var text = line
        // A list saved by a Windows editor starts with a UTF-8 byte order mark: not part of the line.
        if number == 1, text.unicodeScalars.first == "\u{FEFF}" { text = Substring(text.unicodeScalars.dropFirst()) }
        if text.hasSuffix("\r") { text = text.dropLast() }
        guard text.utf8.count <= maximumLineLength else {
            throw CofferFormatsError(.malformedChecksumLine, "line is longer than \(maximumLineLength) bytes", line: number)
        }
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        if text.isEmpty || text.first == "#" { return nil }

        let escaped = text.first == "\\"
        if escaped { text = text.dropFirst() }

        if let entry = try parseBSD(text, escaped: escaped, number: number, algorithm: algorithm, strict: strict) {
            return entry
        }
        return try parseGNU(text, escaped: escaped, number: number, algorithm: strict ? algorithm : guessing(algorithm, for: text))
    }

    /// Without a named algorithm an untagged hex digest's length decides, as one expects of a
    /// SHA512SUMS list: 64 hex digits keep `algorithm` when it is that long, else SHA-256; 96 are
    /// SHA-384 and 128 SHA-512. Other lengths, and base64 digests, keep `algorithm` (and fail there).
    private static func guessing(_ algorithm: DigestAlgorithm, for text: Substring) -> DigestAlgorithm {
        guard let space = text.firstIndex(of: " ") else { return algorithm }
        let digest = text[..<space]
        // Hex only: 64 base64 characters could be a damaged SHA-256 hex digest as well as a SHA-384.
        guard Hex.isValid(digest), digest.utf8.count % 2 == 0 else { return algorithm }
        let length = digest.utf8.count / 2
        if length == algorithm.byteCount { return algorithm }
        return [DigestAlgorithm.sha256, .sha384, .sha512].first { $0.byteCount == length } ?? algorithm
    }

    /// Parses a whole list. Each line yields an entry or an error, so one bad line does not hide the rest.
    public static func parse(
        _ text: String,
        algorithm: DigestAlgorithm,
        strict: Bool
    ) -> [Result<Entry, CofferFormatsError>] {
        var results: [Result<Entry, CofferFormatsError>] = []
        // "\r\n" is one Character in Swift: split on it too, or a CRLF list reads as one line.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })[...]
        if text.hasSuffix("\n") || text.hasSuffix("\r\n") { lines = lines.dropLast() }
        for (index, line) in lines.enumerated() {
            do {
                if let entry = try parse(line: line, number: index + 1, algorithm: algorithm, strict: strict) {
                    results.append(.success(entry))
                }
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    // MARK: - Lines

    private static func parseGNU(
        _ text: Substring,
        escaped: Bool,
        number: Int,
        algorithm: DigestAlgorithm
    ) throws(CofferFormatsError) -> Entry {
        guard let space = text.firstIndex(of: " ") else {
            throw CofferFormatsError(
                .malformedChecksumLine,
                "expected 'DIGEST  NAME' or 'ALGORITHM (NAME) = DIGEST'",
                line: number
            )
        }
        let digestText = text[..<space]
        var rest = text[text.index(after: space)...]
        // coreutils writes "  " (text mode) or " *" (binary mode) and also accepts a single space.
        if let mode = rest.first, mode == " " || mode == "*" { rest = rest.dropFirst() }
        guard !rest.isEmpty else {
            throw CofferFormatsError(.malformedChecksumLine, "expected a file name after the digest", line: number)
        }
        let expected = try decodeDigest(digestText, algorithm: algorithm, number: number)
        let path = escaped ? try unescape(rest, number: number) : String(rest)
        return Entry(algorithm: algorithm, expected: expected, path: path, line: number)
    }

    /// `TAG (NAME) = DIGEST`; returns nil when the line does not start with a known tag and " (".
    private static func parseBSD(
        _ text: Substring,
        escaped: Bool,
        number: Int,
        algorithm: DigestAlgorithm,
        strict: Bool
    ) throws(CofferFormatsError) -> Entry? {
        guard let open = firstRange(of: " (", in: text),
            let tagged = DigestAlgorithm.allCases.first(where: { $0.bsdTag == text[..<open.lowerBound] })
        else { return nil }
        guard let close = lastRange(of: ") = ", in: text), close.lowerBound >= open.upperBound else {
            throw CofferFormatsError(.malformedChecksumLine, "expected '\(tagged.bsdTag) (NAME) = DIGEST'", line: number)
        }
        if strict && tagged != algorithm {
            throw CofferFormatsError(
                .algorithmMismatch,
                "the line is tagged \(tagged.bsdTag) but \(algorithm.standardName) was asked for",
                line: number
            )
        }
        let name = text[open.upperBound..<close.lowerBound]
        guard !name.isEmpty else {
            throw CofferFormatsError(.malformedChecksumLine, "expected a file name between the parentheses", line: number)
        }
        let expected = try decodeDigest(text[close.upperBound...], algorithm: tagged, number: number)
        let path = escaped ? try unescape(name, number: number) : String(name)
        return Entry(algorithm: tagged, expected: expected, path: path, line: number)
    }

    private static func decodeDigest(
        _ text: Substring,
        algorithm: DigestAlgorithm,
        number: Int
    ) throws(CofferFormatsError) -> [UInt8] {
        let hexLength = algorithm.byteCount * 2
        if text.utf8.count == hexLength, let bytes = try? Hex.decode(text) { return bytes }
        if let bytes = try? Base64.decode(text), bytes.count == algorithm.byteCount { return bytes }
        if Hex.isValid(text), let other = DigestAlgorithm.recommended.first(where: { $0.byteCount * 2 == text.utf8.count }) {
            throw CofferFormatsError(
                .algorithmMismatch,
                "expected a \(hexLength)-digit \(algorithm.standardName) hex digest, found \(text.utf8.count) digits (\(other.standardName)-sized; choose the algorithm with -a)",
                line: number
            )
        }
        throw CofferFormatsError(
            .malformedChecksumLine,
            "expected a \(hexLength)-digit hex or base64 \(algorithm.standardName) digest, found \(text.utf8.count) characters that are neither",
            line: number
        )
    }

    private static func firstRange(of needle: String, in text: Substring) -> Range<Substring.Index>? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(needle) { return index..<text.index(index, offsetBy: needle.count) }
            index = text.index(after: index)
        }
        return nil
    }

    private static func lastRange(of needle: String, in text: Substring) -> Range<Substring.Index>? {
        var index = text.endIndex
        while index > text.startIndex {
            index = text.index(before: index)
            if text[index...].hasPrefix(needle) { return index..<text.index(index, offsetBy: needle.count) }
        }
        return nil
    }

    // MARK: - Escapes

    private static func needsEscape(_ path: String) -> Bool {
        path.utf8.contains { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }

    private static func escape(_ path: String) -> String {
        var out = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func unescape(_ name: Substring, number: Int) throws(CofferFormatsError) -> String {
        var out = ""
        var iterator = name.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\" else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch iterator.next() {
            case "\\": out += "\\"
            case "n": out += "\n"
            case "r": out += "\r"
            default:
                throw CofferFormatsError(
                    .malformedChecksumLine,
                    "expected an escape \\\\, \\n or \\r in the file name",
                    line: number
                )
            }
        }
        return out
    }
}
