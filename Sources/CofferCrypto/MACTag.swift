import CofferCore

/// An authentication tag produced by ``MessageAuthenticator`` or ``MACAlgorithm``, possibly truncated.
///
/// Equality compares in constant time. To check a tag received from elsewhere, prefer
/// ``MACAlgorithm/isValidAuthenticationCode(_:for:using:truncatedTo:)``, which also enforces the length.
public struct MACTag: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm that produced the tag.
    public let algorithm: MACAlgorithm
    /// The tag bytes: the full HMAC output, or its leftmost bytes when truncated.
    public let bytes: [UInt8]

    init(algorithm: MACAlgorithm, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Whether the tag is shorter than the algorithm's full output.
    public var isTruncated: Bool { bytes.count < algorithm.tagByteCount }

    /// The leftmost `byteCount` bytes of this tag (RFC 2104 §5).
    /// - Throws: ``CofferCryptoError`` `.invalidTagLength` below 10 bytes or above the current length.
    public func truncated(to byteCount: Int) throws(CofferCryptoError) -> MACTag {
        let length = try algorithm.checkedTagLength(byteCount)
        guard length <= bytes.count else {
            throw CofferCryptoError(.invalidTagLength, "cannot truncate a \(bytes.count)-byte tag to \(length) bytes")
        }
        return MACTag(algorithm: algorithm, bytes: Array(bytes.prefix(length)))
    }

    /// Lower-case hex.
    public var hex: String { Hex.encode(bytes) }
    /// Standard padded base64.
    public var base64: String { Base64.encode(bytes) }
    /// Unpadded base64url.
    public var base64URL: String { Base64.encodeURLSafe(bytes) }

    /// `algorithm:hex`. A tag is not a secret once sent, but it is not printed for keys.
    public var description: String { "\(algorithm.rawValue):\(hex)" }

    public static func == (lhs: MACTag, rhs: MACTag) -> Bool {
        lhs.algorithm == rhs.algorithm && ConstantTime.equals(lhs.bytes, rhs.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        hasher.combine(bytes)
    }
}
