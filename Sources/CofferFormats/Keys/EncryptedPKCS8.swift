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

enum EncryptedPKCS8 {
    /// Encrypts PKCS#8 DER under a password, with AES-256-CBC and a key from `kdf` (PBES2).
    static func encrypt(_ pkcs8: [UInt8], password: [UInt8], kdf: PasswordKDF) throws -> [UInt8] {
        let salt = try SecureRandom.bytes(count: 16)
        let iv = try SecureRandom.bytes(count: 16)
        let keyDerivation: AlgorithmIdentifier
        switch kdf {
        case .pbkdf2(let prf, let iterations):
            let parameters = PBKDF2Parameters(salt: salt, iterations: iterations, keyLength: nil, prf: PBEOID.hmac(prf))
            keyDerivation = AlgorithmIdentifier(algorithm: PBEOID.pbkdf2, parameters: try ASN1Any(erasing: parameters))
        case .scrypt(let logN, let r, let p):
            guard (1...40).contains(logN) else {
                throw CofferFormatsError(.invalidArgument, "expected scrypt log2 N from 1 to 40, found \(logN)")
            }
            let parameters = ScryptParameters(salt: salt, cost: 1 << logN, blockSize: r, parallelization: p, keyLength: nil)
            keyDerivation = AlgorithmIdentifier(algorithm: PBEOID.scrypt, parameters: try ASN1Any(erasing: parameters))
        }
        let key = try kdf.deriveForWriting(password: password, salt: salt)
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
    static func decrypt(_ der: [UInt8], password: [UInt8], limits: PasswordKDFLimits) throws(CofferFormatsError) -> [UInt8] {
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

    /// The key PBES2's key-derivation parameters describe, within `limits`.
    private static func deriveKey(
        _ algorithm: AlgorithmIdentifier,
        password: [UInt8],
        keyLength: Int,
        limits: PasswordKDFLimits
    ) throws(CofferFormatsError) -> SymmetricKey {
        let kdf: PasswordKDF
        let salt: [UInt8]
        let recordedLength: Int?
        do {
            switch algorithm.algorithm {
            case PBEOID.pbkdf2:
                guard let parameters = algorithm.parameters else { throw CofferFormatsError(.malformedKey, "PBKDF2 parameters are missing") }
                let pbkdf2 = try PBKDF2Parameters(asn1Any: parameters)
                guard pbkdf2.iterations >= 1 else { throw CofferFormatsError(.malformedKey, "PBKDF2 iteration count must be positive") }
                guard let prf = PBEOID.pseudorandomFunction(pbkdf2.prf) else {
                    throw CofferFormatsError(.unsupported, "unsupported PBKDF2 PRF \(pbkdf2.prf)")
                }
                (kdf, salt, recordedLength) = (.pbkdf2(prf, iterations: pbkdf2.iterations), pbkdf2.salt, pbkdf2.keyLength)
            case PBEOID.scrypt:
                guard let parameters = algorithm.parameters else { throw CofferFormatsError(.malformedKey, "scrypt parameters are missing") }
                let scrypt = try ScryptParameters(asn1Any: parameters)
                let n = scrypt.cost
                guard n > 1, n & (n - 1) == 0, scrypt.blockSize > 0, scrypt.parallelization > 0,
                    scrypt.blockSize <= 1024, scrypt.parallelization <= 1024
                else {
                    throw CofferFormatsError(.malformedKey, "scrypt parameters are invalid (N must be a power of two; r and p positive)")
                }
                let kdfParameters = PasswordKDF.scrypt(logN: n.trailingZeroBitCount, r: scrypt.blockSize, p: scrypt.parallelization)
                (kdf, salt, recordedLength) = (kdfParameters, scrypt.salt, scrypt.keyLength)
            default:
                throw CofferFormatsError(.unsupported, "unsupported key-derivation function \(algorithm.algorithm)")
            }
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            throw CofferFormatsError(.malformedKey, "the key-derivation parameters are malformed or out of range")
        }
        if let recordedLength, recordedLength != keyLength {
            throw CofferFormatsError(.malformedKey, "the recorded key length \(recordedLength) does not match the cipher's \(keyLength)")
        }
        return try kdf.deriveForReading("the key", password: password, salt: salt, byteCount: keyLength, limits: limits, malformed: .malformedKey)
    }
}
