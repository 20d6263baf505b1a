/// A private key Coffer does not hold: one on a PKCS #11 token (`CofferPKCS11`), in the Secure
/// Enclave, or anywhere else that signs without handing the key out. Wrap it in a ``SigningKey`` with
/// `SigningKey(_:)` and it signs through every API that takes a `SigningKey`.
///
/// A conforming type says what it is (``algorithm``, ``verifyingKey``) and signs exactly as
/// ``SigningKey/signature(for:options:)-(Message,_)`` defines for its algorithm and
/// ``SignatureOptions``, so one ``VerifyingKey`` checks a hardware key's signatures and a software
/// key's alike. It may fail (a token removed, a PIN refused) with its own ``SigningFailure``; a
/// `SigningKey` reports that as ``CofferCryptoError`` `.customKeyFailed` with the key's error as the
/// underlying one.
///
/// Nothing a custom key reports is trusted: a `SigningKey` checks every signature it makes against
/// ``verifyingKey`` before returning it, and a verifier trusts only the public key it already holds.
public protocol CustomSigningKey: Sendable {
    /// The error the key throws when it cannot sign.
    associatedtype SigningFailure: Error

    /// The kind of key. It must be the algorithm of ``verifyingKey`` (the default); a `SigningKey`
    /// refuses a custom key that says otherwise.
    var algorithm: KeyAlgorithm { get }

    /// The public half, which verifies this key's signatures.
    var verifyingKey: VerifyingKey { get }

    /// Signs a message: RSA and ECDSA hash it (``SignatureOptions/hash``, by default the key's
    /// ``KeyAlgorithm/defaultHash``) and sign the digest with ``SignatureOptions/rsaPadding`` or in
    /// ``SignatureOptions/ecdsaEncoding``; Ed25519 and ML-DSA sign the message itself.
    func signature(for message: [UInt8], options: SignatureOptions) throws(SigningFailure) -> [UInt8]

    /// Signs a digest Coffer computed (``DigestValue/isSignable``), as
    /// ``SigningKey/signature(for:options:)-(DigestValue,_)`` does: what `coffer sign --raw` writes for
    /// a file of any size, and `openssl dgst -sign` checks.
    func signature(for digest: DigestValue, options: SignatureOptions) throws(SigningFailure) -> [UInt8]
}

extension CustomSigningKey {
    /// The algorithm of ``verifyingKey``.
    public var algorithm: KeyAlgorithm { verifyingKey.algorithm }
}

/// The protocol hardware keys conformed to before they became ``SigningKey``s.
@available(*, deprecated, renamed: "CustomSigningKey", message: "wrap the key in SigningKey(_:) and pass the SigningKey")
public typealias MessageSigner = CustomSigningKey
