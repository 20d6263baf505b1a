import Crypto
import _CryptoExtras

/// Password-based key derivation exactly as Coffer's formats use it, exposed for benchmarks and
/// calibration (`coffer speed`, `coffer kdf calibrate`). The formats call swift-crypto directly.
public enum PasswordKeyDerivation {
    /// The fewest PBKDF2-HMAC-SHA-256 iterations Coffer uses for any new secret — an encrypted file, an
    /// encrypted private key, a password hash: 600,000, OWASP's 2023 figure. One floor for every format.
    /// (Reading accepts what others wrote, within each reader's limits.)
    public static let minimumPBKDF2Iterations = 600_000

    /// PBKDF2-HMAC-SHA-256 of `password` and `salt`, `byteCount` bytes.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, byteCount: Int = 32) throws -> [UInt8] {
        try KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: salt, using: .sha256, outputByteCount: byteCount, unsafeUncheckedRounds: iterations
        ).withUnsafeBytes { Array($0) }
    }

    /// scrypt (RFC 7914) of `password` and `salt` with N = 2^logN.
    /// - Throws: ``CofferCryptoError`` `.invalidArgument` for logN outside 1...40 or r, p below 1.
    public static func scrypt(password: [UInt8], salt: [UInt8], logN: Int, r: Int = 8, p: Int = 1, byteCount: Int = 32) throws -> [UInt8] {
        guard (1...40).contains(logN), r >= 1, p >= 1, let memory = scryptMemory(logN: logN, r: r) else {
            throw CofferCryptoError(.invalidArgument, "scrypt needs log2 N from 1 to 40 and r, p of at least 1; found log2 N \(logN), r \(r), p \(p)")
        }
        return try KDF.Scrypt.deriveKey(
            from: password, salt: salt, outputByteCount: byteCount, rounds: 1 << logN, blockSize: r, parallelism: p,
            maxMemory: memory + (1 << 20)
        ).withUnsafeBytes { Array($0) }
    }

    /// The memory scrypt needs, 128·N·r bytes for N = 2^logN, or nil when that does not fit in an `Int`
    /// (as from a hostile header: callers compare it with a limit before deriving anything).
    public static func scryptMemory(logN: Int, r: Int) -> Int? {
        guard (0..<(Int.bitWidth - 8)).contains(logN), r >= 0 else { return nil }
        let (memory, overflow) = (128 << logN).multipliedReportingOverflow(by: r)
        return overflow ? nil : memory
    }
}
