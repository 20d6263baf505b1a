import Crypto
import _CryptoExtras

/// Password-based key derivation exactly as Coffer's formats use it, exposed for benchmarks and
/// calibration (`coffer speed`, `coffer kdf calibrate`). The formats call swift-crypto directly.
public enum PasswordKeyDerivation {
    /// PBKDF2-HMAC-SHA-256 of `password` and `salt`, `byteCount` bytes.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, byteCount: Int = 32) throws -> [UInt8] {
        try KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: salt, using: .sha256, outputByteCount: byteCount, unsafeUncheckedRounds: iterations
        ).withUnsafeBytes { Array($0) }
    }

    /// scrypt (RFC 7914) of `password` and `salt` with N = 2^logN.
    public static func scrypt(password: [UInt8], salt: [UInt8], logN: Int, r: Int = 8, p: Int = 1, byteCount: Int = 32) throws -> [UInt8] {
        try KDF.Scrypt.deriveKey(
            from: password, salt: salt, outputByteCount: byteCount, rounds: 1 << logN, blockSize: r, parallelism: p,
            maxMemory: 128 * r * (1 << logN) + (1 << 20)
        ).withUnsafeBytes { Array($0) }
    }
}
