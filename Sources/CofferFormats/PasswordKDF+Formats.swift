public import CofferCrypto
import Crypto

extension PasswordKDF {
    /// What an exported private key is protected with unless told otherwise: PBKDF2-HMAC-SHA-256 at
    /// `PasswordKDF.minimumPBKDF2Iterations` (600,000), which every OpenSSL reads.
    public static let encryptedKeyDefault = PasswordKDF.pbkdf2(iterations: PasswordKDF.minimumPBKDF2Iterations)

    /// scrypt at N = 2^14, r = 8, p = 1: what `openssl pkcs8 -scrypt` writes, and the largest cost
    /// OpenSSL's default 32 MiB scrypt memory limit lets it read back.
    public static let openSSLCompatibleScrypt = PasswordKDF.scrypt(logN: 14, r: 8, p: 1)

    /// Derives a key from parameters read from input (a file header, a key's PBES2 parameters), within
    /// `limits`; a refusal becomes the format's error: `.costTooHigh` naming `what`, or `malformed`.
    func deriveForReading(
        _ what: String,
        password: [UInt8],
        salt: [UInt8],
        byteCount: Int = 32,
        limits: PasswordKDFLimits,
        malformed: CofferFormatsError.Code
    ) throws(CofferFormatsError) -> SymmetricKey {
        do {
            try limits.check(self, deriving: byteCount, subject: what)
            return try derive(password: password, salt: salt, byteCount: byteCount, limits: limits)
        } catch {
            switch error.code {
            case .costTooHigh:
                throw CofferFormatsError(.costTooHigh, error.reason, underlying: error)
            case .invalidArgument:
                throw CofferFormatsError(malformed, "\(what) has invalid key-derivation parameters: \(error.reason)", underlying: error)
            default:
                throw CofferFormatsError(.cryptographicFailure, "\(what): \(error.reason)", underlying: error)
            }
        }
    }

    /// Derives a key for a new secret from parameters the caller chose: the strength floor for new
    /// secrets (`PasswordKDF.checkStrengthForNewSecret()`) applies, and so does the ceiling of what a
    /// reader with the default `PasswordKDFLimits` opens: Coffer does not write what it would refuse to read.
    func deriveForWriting(password: [UInt8], salt: [UInt8], byteCount: Int = 32) throws(CofferFormatsError) -> SymmetricKey {
        try Self.checkReadableByDefault(self, deriving: byteCount)
        do {
            try checkStrengthForNewSecret()
            return try derive(password: password, salt: salt, byteCount: byteCount, limits: .unbounded)
        } catch {
            throw CofferFormatsError(
                error.code == .cryptographicFailure ? .cryptographicFailure : .invalidArgument, error.reason, underlying: error
            )
        }
    }

    /// Derives a key for an interoperability format whose parameters its peer dictates (RNCryptor's
    /// PBKDF2-HMAC-SHA-1 at 10,000 iterations, `openssl enc`'s iteration count): no floor. Reading checks
    /// `limits` first; writing checks the default limits, as `deriveForWriting(password:salt:byteCount:)` does.
    func deriveForPeerFormat(
        _ what: String, password: [UInt8], salt: [UInt8], byteCount: Int = 32, limits: PasswordKDFLimits?
    ) throws(CofferFormatsError) -> SymmetricKey {
        if let limits {
            do {
                try limits.check(self, deriving: byteCount, subject: what)
            } catch {
                throw CofferFormatsError(.costTooHigh, error.reason, underlying: error)
            }
        } else {
            try Self.checkReadableByDefault(self, deriving: byteCount)
        }
        do {
            return try derive(password: password, salt: salt, byteCount: byteCount, limits: .unbounded)
        } catch {
            throw CofferFormatsError(
                error.code == .cryptographicFailure ? .cryptographicFailure : .invalidArgument, error.reason, underlying: error
            )
        }
    }

    /// Refuses, before any work, a cost for a new secret that a reader with the default limits refuses.
    static func checkReadableByDefault(_ kdf: PasswordKDF, deriving byteCount: Int? = nil) throws(CofferFormatsError) {
        do {
            try PasswordKDFLimits().check(kdf, deriving: byteCount, subject: "a new secret")
        } catch {
            throw CofferFormatsError(
                .costTooHigh, "\(error.reason): readers with the default limits would refuse to open it", underlying: error
            )
        }
    }
}
