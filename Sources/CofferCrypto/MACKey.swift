import CofferCore
import Crypto

/// A secret key for HMAC. The bytes live in swift-crypto's `SymmetricKey`, which zeroes them when released.
///
/// Generate keys with ``generate(byteCount:)``; import existing ones with ``init(bytes:)``. The key never
/// appears in `description` or error messages.
public struct MACKey: Sendable, CustomStringConvertible {
    /// The size ``generate(byteCount:)`` uses unless told otherwise: 32 bytes (256 bits).
    public static let defaultByteCount = 32
    /// The smallest key ``generate(byteCount:)`` will make: 16 bytes (128 bits).
    public static let minimumGeneratedByteCount = 16

    let symmetricKey: SymmetricKey

    /// Wraps existing key bytes. HMAC accepts keys of any length; Coffer refuses only an empty key, which
    /// is always a mistake (an unset variable, an empty file).
    /// - Throws: ``CofferCryptoError`` `.invalidKey` for an empty key.
    public init<Bytes: Sequence>(bytes: Bytes) throws(CofferCryptoError) where Bytes.Element == UInt8 {
        var array = Array(bytes)
        // The copy is scratch; the key lives on in SymmetricKey's storage, which zeroes itself.
        defer { SecretBytes.wipe(&array) }
        guard !array.isEmpty else {
            throw CofferCryptoError(.invalidKey, "expected a non-empty HMAC key, found 0 bytes")
        }
        self.symmetricKey = SymmetricKey(data: array)
    }

    /// Generates a key from the system's cryptographically secure random number generator.
    /// - Parameter byteCount: the key length; at least 16, 32 by default.
    /// - Throws: ``CofferCryptoError`` `.invalidKey` below 16 bytes or above 1 MiB.
    public static func generate(byteCount: Int = defaultByteCount) throws(CofferCryptoError) -> MACKey {
        guard (minimumGeneratedByteCount...(1 << 20)).contains(byteCount) else {
            throw CofferCryptoError(
                .invalidKey,
                "expected an HMAC key length from \(minimumGeneratedByteCount) bytes to 1 MiB, found \(byteCount)"
            )
        }
        return MACKey(SymmetricKey(size: SymmetricKeySize(bitCount: byteCount * 8)))
    }

    private init(_ key: SymmetricKey) { self.symmetricKey = key }

    /// The key's length in bytes.
    public var byteCount: Int { symmetricKey.bitCount / 8 }

    /// Gives temporary access to the raw key bytes, for storing the key.
    /// - Warning: whatever `body` copies out is a secret; do not log it.
    public func withUnsafeKeyBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try symmetricKey.withUnsafeBytes(body)
    }

    /// Describes the key without revealing it.
    public var description: String { "MACKey(\(byteCount) bytes)" }
}
