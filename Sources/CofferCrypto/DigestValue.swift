import CofferCore
import Crypto

/// The output of a hash function, tagged with the algorithm that produced it: Coffer's one digest type,
/// for checksums and for signatures alike.
///
/// A digest Coffer computed (``DigestAlgorithm/hash(_:)-(Bytes)``, ``Digester``,
/// ``DigestAlgorithm/hash(fileAtPath:chunkSize:progress:)``) with SHA-256, SHA-384 or SHA-512 can be
/// signed and verified (``SigningKey/signature(for:options:)-(DigestValue,_)``); one made from bytes with
/// ``init(algorithm:bytes:)`` compares, prints and checks checksums, but signing APIs refuse it, because
/// RSA and ECDSA in swift-crypto take swift-crypto's own digest types (``isSignable``).
///
/// Equality compares algorithm and bytes, in constant time, so a digest can double as a secret-derived value.
public struct DigestValue: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm that produced these bytes.
    public let algorithm: DigestAlgorithm
    /// The raw digest, ``DigestAlgorithm/byteCount`` bytes long.
    public let bytes: [UInt8]
    /// swift-crypto's own digest, kept when Coffer computed a SHA-2 digest; signatures need it.
    let signable: Signable?

    /// A SHA-2 digest as swift-crypto's types, which RSA needs to build its DigestInfo.
    enum Signable: Sendable {
        case sha256(SHA256Digest)
        case sha384(SHA384Digest)
        case sha512(SHA512Digest)

        /// The digest as Coffer's type again (signable), for a ``CustomSigningKey``.
        var value: DigestValue {
            switch self {
            case .sha256(let digest): DigestValue(computed: digest, algorithm: .sha256)
            case .sha384(let digest): DigestValue(computed: digest, algorithm: .sha384)
            case .sha512(let digest): DigestValue(computed: digest, algorithm: .sha512)
            }
        }

        /// Calls `body` with the swift-crypto digest value, for APIs generic over `Digest`.
        func withTyped<Result>(_ body: (any Digest) throws -> Result) rethrows -> Result {
            switch self {
            case .sha256(let value): try body(value)
            case .sha384(let value): try body(value)
            case .sha512(let value): try body(value)
            }
        }
    }

    /// The hash functions a signature may use: SHA-256, SHA-384 and SHA-512, which RSA's DigestInfo and
    /// the ECDSA curves' standard pairings name.
    public static let signableAlgorithms: [DigestAlgorithm] = [.sha256, .sha384, .sha512]

    /// Wraps bytes computed elsewhere, checking their length against the algorithm. The result compares
    /// and prints like any digest but cannot be signed (``isSignable`` is false).
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
        self.signable = nil
    }

    /// A digest swift-crypto just computed with `algorithm`.
    init<D: Digest>(computed digest: D, algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        self.bytes = digest.withUnsafeBytes { Array($0) }   // Array(digest) would grow the array byte by byte
        self.signable = switch digest {
        case let digest as SHA256Digest: .sha256(digest)
        case let digest as SHA384Digest: .sha384(digest)
        case let digest as SHA512Digest: .sha512(digest)
        default: nil
        }
    }

    /// Whether signing APIs accept this digest: Coffer computed it, with SHA-256, SHA-384 or SHA-512.
    public var isSignable: Bool { signable != nil }

    /// The digest as swift-crypto's type, or why it cannot be signed.
    /// - Throws: ``CofferCryptoError`` `.unknownAlgorithm` for a hash other than SHA-256/384/512,
    ///   `.invalidArgument` for a digest made from bytes.
    func signableDigest() throws(CofferCryptoError) -> Signable {
        try Self.checkSignable(algorithm)
        guard let signable else {
            throw CofferCryptoError(
                .invalidArgument,
                "a signature needs a digest Coffer computed (DigestAlgorithm.hash, Digester); one made from bytes with DigestValue(algorithm:bytes:) compares but cannot be signed or verified"
            )
        }
        return signable
    }

    /// Refuses a hash function signatures do not use.
    /// - Throws: ``CofferCryptoError`` `.unknownAlgorithm`.
    static func checkSignable(_ algorithm: DigestAlgorithm) throws(CofferCryptoError) {
        guard signableAlgorithms.contains(algorithm) else {
            throw CofferCryptoError(.unknownAlgorithm, "expected SHA-256, SHA-384 or SHA-512 for a signature, found \(algorithm.standardName)")
        }
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
