#if canImport(CryptoKit) && !os(Linux)
public import CryptoKit
public import Foundation
public import Security

/// A P-256 key generated in and held by the Secure Enclave (iOS, macOS with Apple silicon or a T2):
/// it signs there and only its public half is ever in memory, the Apple-platform counterpart of a
/// PKCS #11 token key (`CofferPKCS11`). A ``CustomSigningKey``: wrapped in a ``SigningKey``, it signs
/// through every API that takes one (signature files, RFC 9421 requests).
///
/// ```swift
/// let key = try SecureEnclaveSigningKey.generate()
/// try keychain.add(…)   // keep key.dataRepresentation: the enclave's handle to the key, not the key
/// let signer = try HTTPSigningKey(SigningKey(key))
/// ```
///
/// The enclave signs SHA-256 digests only: signing with ``SignatureOptions/hash`` other than SHA-256
/// is refused.
public struct SecureEnclaveSigningKey: CustomSigningKey {
    let key: SecureEnclave.P256.Signing.PrivateKey

    /// Whether this device has a Secure Enclave.
    public static var isAvailable: Bool { SecureEnclave.isAvailable }

    /// Generates a key in the Secure Enclave, usable under `accessControl` (for example, only when the
    /// device is unlocked, or after Face ID / Touch ID).
    /// - Throws: ``CofferCryptoError`` `.cryptographicFailure` when the enclave refuses or is absent.
    public static func generate(accessControl: SecAccessControl? = nil) throws(CofferCryptoError) -> SecureEnclaveSigningKey {
        do {
            let key = try accessControl.map { try SecureEnclave.P256.Signing.PrivateKey(accessControl: $0) } ?? SecureEnclave.P256.Signing.PrivateKey()
            return SecureEnclaveSigningKey(key: key)
        } catch {
            throw CofferCryptoError(.cryptographicFailure, "the Secure Enclave did not make a key", underlying: error)
        }
    }

    /// Re-opens a key from the handle ``dataRepresentation`` gave (only on the device that made it).
    public init(dataRepresentation: Data) throws(CofferCryptoError) {
        do {
            key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation)
        } catch {
            throw CofferCryptoError(.invalidKey, "the data is not a Secure Enclave key of this device", underlying: error)
        }
    }

    init(key: SecureEnclave.P256.Signing.PrivateKey) {
        self.key = key
    }

    /// The enclave's opaque handle to the key: store it to use the key again. It is not the key, and
    /// is useless on another device.
    public var dataRepresentation: Data { key.dataRepresentation }

    /// The public half.
    public var verifyingKey: VerifyingKey { VerifyingKey(trusted: .p256(key.publicKey)) }

    /// Signs a message: SHA-256, then ECDSA in the enclave, in ``SignatureOptions/ecdsaEncoding``.
    public func signature(for message: [UInt8], options: SignatureOptions) throws(CofferCryptoError) -> [UInt8] {
        guard (options.hash ?? .sha256) == .sha256 else {
            throw CofferCryptoError(.unknownAlgorithm, "the Secure Enclave signs SHA-256 digests only")
        }
        return try enclave { try encode(key.signature(for: SHA256.hash(data: message)), options) }
    }

    /// Signs a SHA-256 digest Coffer computed.
    public func signature(for digest: DigestValue, options: SignatureOptions) throws(CofferCryptoError) -> [UInt8] {
        guard case .sha256(let value) = try digest.signableDigest() else {
            throw CofferCryptoError(.unknownAlgorithm, "the Secure Enclave signs SHA-256 digests only")
        }
        return try enclave { try encode(key.signature(for: value), options) }
    }

    /// Runs `body`, reporting the enclave's refusal (a locked device, a cancelled prompt) as
    /// `.customKeyFailed`.
    private func enclave(_ body: () throws -> [UInt8]) throws(CofferCryptoError) -> [UInt8] {
        do {
            return try body()
        } catch {
            throw CofferCryptoError(.customKeyFailed, "the Secure Enclave did not sign", underlying: error)
        }
    }

    private func encode(_ signature: P256.Signing.ECDSASignature, _ options: SignatureOptions) -> [UInt8] {
        Array(options.ecdsaEncoding == .der ? signature.derRepresentation : signature.rawRepresentation)
    }
}
#endif
