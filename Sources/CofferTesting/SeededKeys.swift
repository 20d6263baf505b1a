public import CofferCrypto
import Crypto

/// Signing keys made from given bytes, for property-based tests: a failing case then replays from the
/// generator's seed alone, key included.
public enum SeededKeys {
    /// The key types `key(_:seed:)` makes.
    public static let types: [KeyAlgorithm] = [.rsa2048, .p256, .p384, .p521, .ed25519, .mldsa65, .mldsa87]

    /// How many seed bytes `key(_:seed:)` reads at most (a P-521 scalar).
    public static let seedLength = 66

    /// A key of `type` determined by `seed` (at least ``seedLength`` bytes). EC scalars and Ed25519 and
    /// ML-DSA seeds are taken from the bytes; RSA keys cannot be derived from a seed here, so the first
    /// byte chooses one of three RSA-2048 keys generated once per process.
    /// - Throws: when the bytes are too few, or (with negligible probability) not a valid EC scalar.
    public static func key(_ type: KeyAlgorithm, seed: [UInt8]) throws -> SigningKey {
        guard seed.count >= seedLength else { throw SeedError(description: "expected \(seedLength) seed bytes, found \(seed.count)") }
        switch type {
        case .rsa:
            return try RSAPool.keys()[Int(seed[0]) % RSAPool.count]
        case .p256:
            return try SigningKey(P256.Signing.PrivateKey(rawRepresentation: seed.prefix(32)))
        case .p384:
            return try SigningKey(P384.Signing.PrivateKey(rawRepresentation: seed.prefix(48)))
        case .p521:
            // A P-521 scalar is 521 bits: keep one bit of the leading byte so that it stays below the order.
            return try SigningKey(P521.Signing.PrivateKey(rawRepresentation: [seed[0] & 0x01] + seed[1..<66]))
        case .ed25519:
            return try SigningKey(Curve25519.Signing.PrivateKey(rawRepresentation: seed.prefix(32)))
        case .mldsa65:
            return try SigningKey(MLDSA65.PrivateKey(seedRepresentation: seed.prefix(32), publicKey: nil))
        case .mldsa87:
            return try SigningKey(MLDSA87.PrivateKey(seedRepresentation: seed.prefix(32), publicKey: nil))
        }
    }

    /// Why `key(_:seed:)` refused.
    public struct SeedError: Error, CustomStringConvertible {
        /// What was wrong.
        public let description: String
    }

    /// Three RSA-2048 keys, generated on first use and shared by the whole test process.
    private enum RSAPool {
        static let count = 3
        static let shared: Result<[SigningKey], any Error> = Result { try (0..<count).map { _ in try SigningKey.generate(.rsa2048) } }
        static func keys() throws -> [SigningKey] { try shared.get() }
    }
}

extension RandomNumberGenerator {
    /// `count` bytes from this generator (eight at a time), so that test data replays from its seed.
    public mutating func bytes(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            withUnsafeBytes(of: next()) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
