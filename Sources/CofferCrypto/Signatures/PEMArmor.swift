import CofferCore

/// RFC 7468 textual encoding: `-----BEGIN LABEL-----`, base64 in 64-character lines, `-----END LABEL-----`.
public enum PEMArmor {
    /// Encodes DER bytes under a label, ending with a line feed.
    public static func encode(_ der: [UInt8], label: String) -> String {
        let body = Base64.encode(der)
        var lines = ["-----BEGIN \(label)-----"]
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }
}
