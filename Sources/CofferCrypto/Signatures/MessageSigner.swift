/// Anything that signs as a ``SigningKey`` does: a software key, or a private key held by hardware — a
/// PKCS #11 token (`CofferPKCS11`), the Secure Enclave — whose private part never leaves it.
///
/// Code that signs (signature files, RFC 9421 requests) takes `some MessageSigner`, so a hardware key
/// works wherever a software key does. A conforming type signs exactly as ``SigningKey/signature(for:options:)-(Message,_)``
/// defines for its algorithm and ``SignatureOptions``, so one ``VerifyingKey`` checks both.
public protocol MessageSigner: Sendable {
    /// The public half, which verifies this signer's signatures.
    var verifyingKey: VerifyingKey { get }

    /// Signs a message: RSA and ECDSA hash it (``SignatureOptions/hash``, by default the key's
    /// ``KeyAlgorithm/defaultHash``) and sign the digest with ``SignatureOptions/rsaPadding`` or in
    /// ``SignatureOptions/ecdsaEncoding``; Ed25519 and ML-DSA sign the message itself.
    func signature(for message: [UInt8], options: SignatureOptions) throws -> [UInt8]

    /// Signs a digest Coffer computed (``DigestValue/isSignable``), as ``SigningKey/signature(for:options:)-(DigestValue,_)``
    /// does: what `coffer sign --raw` writes for a file of any size, and `openssl dgst -sign` checks.
    func signature(for digest: DigestValue, options: SignatureOptions) throws -> [UInt8]
}

extension MessageSigner {
    /// The kind of key.
    public var algorithm: KeyAlgorithm { verifyingKey.algorithm }
}

/// A software key signs through ``SigningKey/signature(for:options:)-(Message,_)``.
extension SigningKey: MessageSigner {}
