import Crypto

/// Random bytes from the system's cryptographically secure generator (through swift-crypto), for keys,
/// salts, nonces and tokens.
public enum SecureRandom {
    /// The largest request ``bytes(count:)`` serves in one call: 1 MiB. Stream larger amounts with ``fill(_:)``.
    public static let maximumByteCount = 1 << 20

    /// Returns `count` random bytes.
    /// - Throws: ``CofferCryptoError`` `.invalidArgument` for a negative count or one above 1 MiB.
    public static func bytes(count: Int) throws(CofferCryptoError) -> [UInt8] {
        guard (0...maximumByteCount).contains(count) else {
            throw CofferCryptoError(.invalidArgument, "expected a random byte count from 0 to \(maximumByteCount), found \(count)")
        }
        guard count > 0 else { return [] }
        return SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }

    /// Fills a buffer of any size with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            let count = min(maximumByteCount, buffer.count - offset)
            SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { random in
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + count)]).copyMemory(from: random)
            }
            offset += count
        }
    }
}
