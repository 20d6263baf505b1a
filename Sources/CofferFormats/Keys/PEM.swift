import CofferCore
import SwiftASN1

/// One `-----BEGIN LABEL-----` … `-----END LABEL-----` block of RFC 7468 text.
public struct PEMBlock: Sendable, Hashable {
    /// The label, e.g. "PRIVATE KEY".
    public let label: String
    /// The decoded body.
    public let der: [UInt8]
    /// Whether the block carried RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`), as OpenSSL's traditional
    /// encrypted keys do.
    public let hasHeaders: Bool

    /// The largest PEM text Coffer parses: 1 MiB is far beyond any key (an RSA-16384 PKCS#8 is 12 KiB).
    public static let maximumTextLength = 1 << 20

    /// Every block in `text`, in order. Text outside blocks is ignored, as OpenSSL does; so are a leading
    /// UTF-8 byte order mark, CR LF line endings and white space around lines.
    /// - Throws: ``CofferFormatsError`` for an unterminated block, mismatched labels or a body that is not
    ///   base64, naming the line.
    public static func blocks(in text: String) throws(CofferFormatsError) -> [PEMBlock] {
        guard text.utf8.count <= maximumTextLength else {
            throw CofferFormatsError(.malformedKey, "the PEM text is larger than 1 MiB; it is not a key")
        }
        var blocks: [PEMBlock] = []
        var current: (label: String, start: Int, body: String, headers: Bool)?
        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on it too, or a CRLF file is one long line with no block.
        // A UTF-8 byte order mark (Windows editors write one) is not text.
        let body = text.hasPrefix("\u{FEFF}") ? text.dropFirst() : Substring(text)
        for rawLine in body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            var line = Substring(rawLine)
            while let last = line.last, last == "\r" || last == " " || last == "\t" { line = line.dropLast() }
            while let first = line.first, first == " " || first == "\t" { line = line.dropFirst() }
            if let open = current {
                if line.hasPrefix("-----END ") && line.hasSuffix("-----") {
                    let label = String(line.dropFirst(9).dropLast(5))
                    guard label == open.label else {
                        throw CofferFormatsError(
                            .malformedKey,
                            "PEM block '\(open.label)' opened on line \(open.start) is closed as '\(label)'",
                            line: lineNumber
                        )
                    }
                    // The framing above is as lenient as OpenSSL (text around blocks, CRLF, RFC 1421 headers,
                    // any line length); the block itself is decoded by swift-asn1, from its canonical form.
                    let der: [UInt8]
                    do {
                        der = try PEMDocument(pemString: Self.canonical(label: label, body: open.body)).derBytes
                    } catch {
                        throw CofferFormatsError(
                            .malformedKey, "the body of PEM block '\(label)' is not valid base64, or is empty",
                            line: open.start, underlying: error
                        )
                    }
                    blocks.append(PEMBlock(label: label, der: der, hasHeaders: open.headers))
                    current = nil
                } else if line.contains(":") {
                    current?.headers = true
                } else if !line.isEmpty {
                    current?.body += line
                }
            } else if line.hasPrefix("-----BEGIN ") && line.hasSuffix("-----") {
                current = (String(line.dropFirst(11).dropLast(5)), lineNumber, "", false)
            }
        }
        if let open = current {
            throw CofferFormatsError(.malformedKey, "PEM block '\(open.label)' is not closed (truncated?)", line: open.start)
        }
        return blocks
    }

    /// One block as RFC 7468 writes it: the body in 64-character lines between the boundaries.
    private static func canonical(label: String, body: String) -> String {
        var lines = ["-----BEGIN \(label)-----"]
        var rest = Substring(body)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n")
    }
}
