/// The padding of an RSA signature.
public enum RSAPadding: String, Sendable, Hashable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2): deterministic, what `openssl dgst -sign` writes.
    case pkcs1v15 = "pkcs1v15"
    /// RSASSA-PSS (RFC 8017 §8.1) with MGF1 over the same hash and a salt as long as the hash. Preferred
    /// for new designs.
    case pss = "pss"
}

/// How ECDSA signatures are encoded.
public enum ECDSAEncoding: String, Sendable, Hashable, CaseIterable {
    /// An ASN.1 DER `SEQUENCE { r INTEGER, s INTEGER }`, as OpenSSL and X.509 use.
    case der
    /// `r || s`, each left-padded to the curve's size (IEEE P1363), as JOSE, WebCrypto and Apple's
    /// CryptoKit `rawRepresentation` use.
    case raw
}

/// The choices a signature is made with besides the key. Each has a safe default.
public struct SignatureOptions: Sendable, Hashable {
    /// The hash applied to the message before signing (for Ed25519 and ML-DSA with a precomputed digest,
    /// the digest is what is signed). `nil` picks the key's default: SHA-256/384/512 for P-256/384/521,
    /// SHA-512 otherwise.
    public var hash: DigestAlgorithm?
    /// RSA padding; ignored for other keys.
    public var rsaPadding: RSAPadding
    /// ECDSA encoding; ignored for other keys.
    public var ecdsaEncoding: ECDSAEncoding

    /// Creates options; the defaults are PKCS#1 v1.5 (interoperable with `openssl dgst -sign`) and DER.
    public init(hash: DigestAlgorithm? = nil, rsaPadding: RSAPadding = .pkcs1v15, ecdsaEncoding: ECDSAEncoding = .der) {
        self.hash = hash
        self.rsaPadding = rsaPadding
        self.ecdsaEncoding = ecdsaEncoding
    }
}
