import SwiftASN1

/// RFC 7468 textual encoding: `-----BEGIN LABEL-----`, base64 in 64-character lines, `-----END LABEL-----`,
/// written by swift-asn1's `PEMDocument`.
public enum PEMArmor {
    /// Encodes DER bytes under a label, ending with a line feed.
    public static func encode(_ der: [UInt8], label: String) -> String {
        PEMDocument(type: label, derBytes: der).pemString + "\n"
    }
}
