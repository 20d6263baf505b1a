import CofferCore

/// The output of a hash function, tagged with the algorithm that produced it.
///
/// Equality compares in constant time, so a digest can double as a secret-derived value.
public struct DigestValue: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm that produced these bytes.
    public let algorithm: DigestAlgorithm
    /// The raw digest, ``DigestAlgorithm/byteCount`` bytes long.
    public let bytes: [UInt8]

    /// Wraps bytes computed elsewhere, checking their length against the algorithm.
    /// - Throws: ``CofferCryptoError`` `.invalidArgument` if the length does not match.
    public init(algorithm: DigestAlgorithm, bytes: [UInt8]) throws(CofferCryptoError) {
        guard bytes.count == algorithm.byteCount else {
            throw CofferCryptoError(
                .invalidArgument,
                "expected a \(algorithm.byteCount)-byte \(algorithm.standardName) digest, found \(bytes.count) bytes"
            )
        }
        self.algorithm = algorithm
        self.bytes = bytes
    }

    init(unchecked algorithm: DigestAlgorithm, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Lower-case hex, as `sha256sum` prints it.
    public var hex: String { Hex.encode(bytes) }
    /// Standard padded base64.
    public var base64: String { Base64.encode(bytes) }
    /// Unpadded base64url.
    public var base64URL: String { Base64.encodeURLSafe(bytes) }

    /// `algorithm:hex`, e.g. `sha256:e3b0c442…`.
    public var description: String { "\(algorithm.rawValue):\(hex)" }

    /// Whether `other` holds the same bytes, compared in constant time.
    public func matches<Bytes: Collection>(_ other: Bytes) -> Bool where Bytes.Element == UInt8 {
        ConstantTime.equals(bytes, other)
    }

    public static func == (lhs: DigestValue, rhs: DigestValue) -> Bool {
        lhs.algorithm == rhs.algorithm && ConstantTime.equals(lhs.bytes, rhs.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        hasher.combine(bytes)
    }
}
