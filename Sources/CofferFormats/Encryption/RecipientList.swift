import CofferCore

/// A recipients file, as `coffer encrypt -R FILE` reads it (age's `-R`, with Coffer's key formats):
/// one public key per line, or PEM blocks; `#` comments and blank lines are skipped.
///
/// ```
/// # the release team
/// -----BEGIN PUBLIC KEY-----
/// MCowBQYDK2VuAyEA…
/// -----END PUBLIC KEY-----
/// {"kty":"EC","crv":"P-256","x":"…","y":"…"}
/// ecdsa-sha2-nistp256 AAAAE2VjZHNh… bob@laptop
/// MCowBQYDK2VuAyEA…                        (SubjectPublicKeyInfo DER, base64, on one line)
/// ```
///
/// A file with a UTF-8 byte order mark or CR LF line endings reads the same.
public enum RecipientList {
    /// The largest recipients file read: 1 MiB.
    public static let maximumSize = 1 << 20

    /// The recipients `text` lists, in order.
    /// - Throws: ``CofferFormatsError`` naming the line of the first entry that is not a recipient
    ///   key, or `.malformedKey` for a file that lists none.
    public static func parse(_ text: String) throws(CofferFormatsError) -> [RecipientPublicKey] {
        guard text.utf8.count <= maximumSize else {
            throw CofferFormatsError(.malformedKey, "the recipients file is larger than 1 MiB")
        }
        var body = Substring(text)
        if body.unicodeScalars.first == "\u{FEFF}" { body = Substring(body.unicodeScalars.dropFirst()) }
        var recipients: [RecipientPublicKey] = []
        var block: (start: Int, lines: [Substring])?
        var number = 0
        for rawLine in body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            let line = rawLine.trimmingWhitespace
            if var open = block {
                open.lines.append(line)
                block = open
                if line.hasPrefix("-----END ") {
                    recipients.append(try key(Array(open.lines.joined(separator: "\n").utf8), line: open.start))
                    block = nil
                }
                continue
            }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("-----BEGIN ") {
                block = (number, [line])
                continue
            }
            if line.hasPrefix("{") || line.contains(" ") {
                recipients.append(try key(Array(line.utf8), line: number))
            } else if let der = try? Base64.decode(line) {
                recipients.append(try key(der, line: number))
            } else {
                throw CofferFormatsError(.malformedKey, "expected a public key (PEM, JWK, an OpenSSH line or base64 DER)", line: number)
            }
        }
        if let open = block {
            throw CofferFormatsError(.malformedKey, "the PEM block is not closed (truncated?)", line: open.start)
        }
        guard !recipients.isEmpty else { throw CofferFormatsError(.malformedKey, "the recipients file lists no key") }
        return recipients
    }

    private static func key(_ bytes: [UInt8], line: Int) throws(CofferFormatsError) -> RecipientPublicKey {
        do {
            return try RecipientPublicKey(importing: bytes)
        } catch {
            throw CofferFormatsError(error.code, error.reason, line: line)
        }
    }
}

extension Substring {
    fileprivate var trimmingWhitespace: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
        return text
    }
}
