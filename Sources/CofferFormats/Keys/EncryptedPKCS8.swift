import CofferCore
import CofferCrypto
import Crypto
import _CryptoExtras
import SwiftASN1
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a private key is protected by a password in PKCS#8 (PBES2, RFC 8018), in the forms OpenSSL
/// writes and reads (`openssl pkcs8 -topk8 -v2 aes-256-cbc [-scrypt]`).
public enum PasswordProtection: Sendable, Hashable {
    /// PBKDF2-HMAC-SHA-256 with `iterations` rounds, then AES-256-CBC.
    case pbkdf2(iterations: Int)
    /// scrypt with cost `n` (a power of two), block size `r` and parallelism `p`, then AES-256-CBC.
    case scrypt(n: Int, r: Int, p: Int)

    /// Coffer's default: PBKDF2-HMAC-SHA-256 at `PasswordKeyDerivation.minimumPBKDF2Iterations`
    /// (600,000, OWASP's 2023 figure), which every OpenSSL reads. Reading accepts what others wrote,
    /// down to OpenSSL's 2,048, up to ``PasswordKeyLimits/maximumPBKDF2Iterations``.
    public static let `default` = PasswordProtection.pbkdf2(iterations: PasswordKeyDerivation.minimumPBKDF2Iterations)
    /// scrypt at N = 2^14, r = 8, p = 1: what `openssl pkcs8 -scrypt` writes, and the largest cost
    /// OpenSSL's default 32 MiB scrypt memory limit lets it read back.
    public static let scryptOpenSSLCompatible = PasswordProtection.scrypt(n: 1 << 14, r: 8, p: 1)
}

/// Limits a reader enforces on password-protected keys, so a hostile file cannot make Coffer spend
/// unbounded time or memory before the password is even checked.
public struct PasswordKeyLimits: Sendable, Hashable {
    /// Most PBKDF2 iterations accepted: 10,000,000 by default (about 5 s here).
    public var maximumPBKDF2Iterations: Int
    /// Most scrypt memory accepted, 128·N·r bytes: 1 GiB by default.
    public var maximumScryptMemory: Int

    /// Creates limits; the defaults accept every key OpenSSL or Coffer writes with default settings.
    public init(maximumPBKDF2Iterations: Int = 10_000_000, maximumScryptMemory: Int = 1 << 30) {
        self.maximumPBKDF2Iterations = maximumPBKDF2Iterations
        self.maximumScryptMemory = maximumScryptMemory
    }
}

enum EncryptedPKCS8 {
    /// Encrypts PKCS#8 DER under a password.
    static func encrypt(_ pkcs8: [UInt8], password: [UInt8], protection: PasswordProtection) throws -> [UInt8] {
        let salt = try SecureRandom.bytes(count: 16)
        let iv = try SecureRandom.bytes(count: 16)
        let keyDerivation: AlgorithmIdentifier
        let key: SymmetricKey
        switch protection {
        case .pbkdf2(let iterations):
            guard iterations >= PasswordKeyDerivation.minimumPBKDF2Iterations else {
                throw CofferFormatsError(
                    .invalidArgument,
                    "expected at least \(PasswordKeyDerivation.minimumPBKDF2Iterations) PBKDF2 iterations for a new key, found \(iterations)"
                )
            }
            key = try KDF.Insecure.PBKDF2.deriveKey(
                from: password, salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: iterations
            )
            let parameters = PBKDF2Parameters(salt: salt, iterations: iterations, keyLength: nil, prf: PBEOID.hmacWithSHA256)
            keyDerivation = AlgorithmIdentifier(algorithm: PBEOID.pbkdf2, parameters: try ASN1Any(erasing: parameters))
        case .scrypt(let n, let r, let p):
            guard n > 1, n & (n - 1) == 0, r > 0, p > 0 else {
                throw CofferFormatsError(.invalidArgument, "expected scrypt N a power of two above 1 and positive r, p")
            }
            key = try KDF.Scrypt.deriveKey(from: password, salt: salt, outputByteCount: 32, rounds: n, blockSize: r, parallelism: p)
            let parameters = ScryptParameters(salt: salt, cost: n, blockSize: r, parallelization: p, keyLength: nil)
            keyDerivation = AlgorithmIdentifier(algorithm: PBEOID.scrypt, parameters: try ASN1Any(erasing: parameters))
        }
        let ciphertext = try AES._CBC.encrypt(pkcs8, using: key, iv: AES._CBC.IV(ivBytes: iv))
        let scheme = AlgorithmIdentifier(algorithm: PBEOID.aes256CBC, parameters: try ASN1Any(erasing: ASN1OctetString(contentBytes: iv[...])))
        let pbes2 = PBES2Parameters(keyDerivation: keyDerivation, encryption: scheme)
        let info = EncryptedPrivateKeyInfo(
            algorithm: AlgorithmIdentifier(algorithm: PBEOID.pbes2, parameters: try ASN1Any(erasing: pbes2)),
            encryptedData: Array(ciphertext)
        )
        return derBytes(info)
    }

    /// Whether DER bytes are an `EncryptedPrivateKeyInfo` with PBES2 (checked without the password).
    static func looksEncrypted(_ der: [UInt8]) -> Bool {
        guard let info = try? EncryptedPrivateKeyInfo(derEncoded: der) else { return false }
        return info.algorithm.algorithm == PBEOID.pbes2
    }

    /// Decrypts to PKCS#8 DER.
    static func decrypt(_ der: [UInt8], password: [UInt8], limits: PasswordKeyLimits) throws(CofferFormatsError) -> [UInt8] {
        let info: EncryptedPrivateKeyInfo
        let pbes2: PBES2Parameters
        do {
            info = try EncryptedPrivateKeyInfo(derEncoded: der)
            guard info.algorithm.algorithm == PBEOID.pbes2, let parameters = info.algorithm.parameters else {
                throw CofferFormatsError(
                    .unsupported,
                    "the key is encrypted with \(info.algorithm.algorithm), not PBES2; re-encrypt it with 'openssl pkcs8 -topk8 -v2 aes-256-cbc'"
                )
            }
            pbes2 = try PBES2Parameters(asn1Any: parameters)
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            throw CofferFormatsError(.malformedKey, "the encrypted PKCS#8 structure is malformed")
        }

        let keyLength: Int
        let iv: [UInt8]
        do {
            switch pbes2.encryption.algorithm {
            case PBEOID.aes256CBC: keyLength = 32
            case PBEOID.aes128CBC: keyLength = 16
            default:
                throw CofferFormatsError(.unsupported, "the key is encrypted with cipher \(pbes2.encryption.algorithm); Coffer reads AES-CBC")
            }
            guard let parameters = pbes2.encryption.parameters else {
                throw CofferFormatsError(.malformedKey, "the AES-CBC parameters (IV) are missing")
            }
            iv = Array(try ASN1OctetString(asn1Any: parameters).bytes)
            guard iv.count == 16 else { throw CofferFormatsError(.malformedKey, "expected a 16-byte AES-CBC IV, found \(iv.count) bytes") }
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            throw CofferFormatsError(.malformedKey, "the encryption-scheme parameters are malformed")
        }

        let key = try deriveKey(pbes2.keyDerivation, password: password, keyLength: keyLength, limits: limits)
        // A wrong password shows as bad padding or as a plaintext that is not PKCS#8; both give one error,
        // which says nothing about which check failed.
        let wrong = CofferFormatsError(.wrongPassword, "the password is wrong, or the encrypted key is damaged")
        guard info.encryptedData.count % 16 == 0, !info.encryptedData.isEmpty,
            let ivValue = try? AES._CBC.IV(ivBytes: iv),
            let plaintext = try? AES._CBC.decrypt(info.encryptedData, using: key, iv: ivValue)
        else { throw wrong }
        let bytes = Array(plaintext)
        guard (try? OneAsymmetricKey(derEncoded: bytes)) != nil else { throw wrong }
        return bytes
    }

    private static func deriveKey(
        _ algorithm: AlgorithmIdentifier,
        password: [UInt8],
        keyLength: Int,
        limits: PasswordKeyLimits
    ) throws(CofferFormatsError) -> SymmetricKey {
        do {
            switch algorithm.algorithm {
            case PBEOID.pbkdf2:
                guard let parameters = algorithm.parameters else { throw CofferFormatsError(.malformedKey, "PBKDF2 parameters are missing") }
                let pbkdf2 = try PBKDF2Parameters(asn1Any: parameters)
                guard pbkdf2.iterations >= 1 else { throw CofferFormatsError(.malformedKey, "PBKDF2 iteration count must be positive") }
                guard pbkdf2.iterations <= limits.maximumPBKDF2Iterations else {
                    throw CofferFormatsError(
                        .costTooHigh,
                        "the key asks for \(pbkdf2.iterations) PBKDF2 iterations, above the limit of \(limits.maximumPBKDF2Iterations)"
                    )
                }
                if let length = pbkdf2.keyLength, length != keyLength {
                    throw CofferFormatsError(.malformedKey, "PBKDF2 key length \(length) does not match the cipher's \(keyLength)")
                }
                let hash: KDF.Insecure.PBKDF2.HashFunction
                switch pbkdf2.prf {
                case PBEOID.hmacWithSHA256: hash = .sha256
                case PBEOID.hmacWithSHA512: hash = .sha512
                case PBEOID.hmacWithSHA1: hash = .insecureSHA1
                default: throw CofferFormatsError(.unsupported, "unsupported PBKDF2 PRF \(pbkdf2.prf)")
                }
                return try KDF.Insecure.PBKDF2.deriveKey(
                    from: password, salt: pbkdf2.salt, using: hash, outputByteCount: keyLength, unsafeUncheckedRounds: pbkdf2.iterations
                )
            case PBEOID.scrypt:
                guard let parameters = algorithm.parameters else { throw CofferFormatsError(.malformedKey, "scrypt parameters are missing") }
                let scrypt = try ScryptParameters(asn1Any: parameters)
                let n = scrypt.cost
                guard n > 1, n & (n - 1) == 0, scrypt.blockSize > 0, scrypt.parallelization > 0,
                    scrypt.blockSize <= 1024, scrypt.parallelization <= 1024
                else {
                    throw CofferFormatsError(.malformedKey, "scrypt parameters are invalid (N must be a power of two; r and p positive)")
                }
                let (memory, overflow) = (128 * scrypt.blockSize).multipliedReportingOverflow(by: n)
                guard !overflow, memory <= limits.maximumScryptMemory else {
                    throw CofferFormatsError(
                        .costTooHigh,
                        "the key asks for scrypt N=\(n), r=\(scrypt.blockSize) (\(overflow ? "overflowing" : "\(memory >> 20) MiB") of memory), above the limit of \(limits.maximumScryptMemory >> 20) MiB"
                    )
                }
                if let length = scrypt.keyLength, length != keyLength {
                    throw CofferFormatsError(.malformedKey, "scrypt key length \(length) does not match the cipher's \(keyLength)")
                }
                return try KDF.Scrypt.deriveKey(
                    from: password, salt: scrypt.salt, outputByteCount: keyLength,
                    rounds: n, blockSize: scrypt.blockSize, parallelism: scrypt.parallelization, maxMemory: limits.maximumScryptMemory + (1 << 20)
                )
            default:
                throw CofferFormatsError(.unsupported, "unsupported key-derivation function \(algorithm.algorithm)")
            }
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            throw CofferFormatsError(.malformedKey, "the key-derivation parameters are malformed or out of range")
        }
    }
}
