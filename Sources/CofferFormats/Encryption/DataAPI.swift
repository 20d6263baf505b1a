public import CofferCrypto
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension CofferEncryption {
    /// Encrypts `Data` (see ``encrypt(_:to:cipher:)-(_,_,_)`` for `[UInt8]`).
    public static func encrypt(_ plaintext: Data, to protection: EncryptionProtection, cipher: EncryptionCipher = .aes256GCM) throws(CofferFormatsError) -> Data {
        Data(try encrypt(Array(plaintext), to: protection, cipher: cipher))
    }

    /// Decrypts `Data`; returns the plaintext only if all of it authenticated.
    public static func decrypt(_ ciphertext: Data, with credential: DecryptionCredential, limits: PasswordKDFLimits = PasswordKDFLimits()) throws(CofferFormatsError) -> Data {
        Data(try decrypt(Array(ciphertext), with: credential, limits: limits))
    }
}

extension RNCryptor {
    /// Encrypts `Data` in RNCryptor v3, as `RNCryptor.encrypt(data:withPassword:)` does on iOS.
    public static func encrypt(_ plaintext: Data, with credential: Credential) throws(CofferFormatsError) -> Data {
        Data(try encrypt(Array(plaintext), with: credential))
    }

    /// Decrypts RNCryptor v3 `Data`, checking the HMAC before decrypting.
    public static func decrypt(_ message: Data, with credential: Credential) throws(CofferFormatsError) -> Data {
        Data(try decrypt(Array(message), with: credential))
    }
}
