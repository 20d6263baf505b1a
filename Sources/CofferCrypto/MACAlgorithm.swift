/// A message authentication code Coffer can compute: HMAC (RFC 2104) over a SHA-2 hash, from swift-crypto.
///
/// The raw value is the name RFC 9421 and the command line use (`hmac-sha256`). HMAC-SHA1 is still
/// unforgeable as a MAC, but carries *insecure* in its name so that new designs do not pick it.
public enum MACAlgorithm: String, CaseIterable, Sendable, Codable, CustomStringConvertible {
    /// HMAC-SHA-256: 32-byte tags. The default.
    case hmacSHA256 = "hmac-sha256"
    /// HMAC-SHA-384: 48-byte tags.
    case hmacSHA384 = "hmac-sha384"
    /// HMAC-SHA-512: 64-byte tags.
    case hmacSHA512 = "hmac-sha512"
    /// HMAC-SHA-1: 20-byte tags. - Warning: only for protocols that require it (TOTP, legacy webhooks).
    case insecureHMACSHA1 = "insecure-hmac-sha1"

    /// The shortest tag Coffer will produce or accept when a caller truncates: 10 bytes (80 bits), the
    /// floor RFC 2104 §5 sets ("not less than 80 bits").
    public static let minimumTagByteCount = 10

    /// The hash function inside the HMAC.
    public var digest: DigestAlgorithm {
        switch self {
        case .hmacSHA256: .sha256
        case .hmacSHA384: .sha384
        case .hmacSHA512: .sha512
        case .insecureHMACSHA1: .insecureSHA1
        }
    }

    /// The length of an untruncated tag, in bytes.
    public var tagByteCount: Int { digest.byteCount }

    /// Whether the algorithm is kept only for legacy protocols.
    public var isInsecure: Bool { self == .insecureHMACSHA1 }

    /// The conventional name, e.g. "HMAC-SHA-256".
    public var standardName: String { "HMAC-\(digest.standardName)" }

    public var description: String { rawValue }

    /// Checks a requested tag length: `nil` means the full tag.
    /// - Throws: ``CofferCryptoError`` `.invalidTagLength` below 10 bytes or above the full length.
    func checkedTagLength(_ requested: Int?) throws(CofferCryptoError) -> Int {
        guard let requested else { return tagByteCount }
        guard requested >= Self.minimumTagByteCount, requested <= tagByteCount else {
            throw CofferCryptoError(
                .invalidTagLength,
                "expected a \(standardName) tag length from \(Self.minimumTagByteCount) to \(tagByteCount) bytes, found \(requested)"
            )
        }
        return requested
    }
}
