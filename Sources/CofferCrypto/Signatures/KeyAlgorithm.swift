/// What kind of key a ``SigningKey`` or ``VerifyingKey`` holds.
public enum KeyAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// RSA with a modulus of `bits` bits.
    case rsa(bits: Int)
    /// ECDSA on NIST P-256 (secp256r1).
    case p256
    /// ECDSA on NIST P-384 (secp384r1).
    case p384
    /// ECDSA on NIST P-521 (secp521r1).
    case p521
    /// Ed25519 (RFC 8032).
    case ed25519
    /// ML-DSA-65 (FIPS 204), post-quantum.
    case mldsa65
    /// ML-DSA-87 (FIPS 204), post-quantum.
    case mldsa87

    /// Whether `SigningKey.signature(for:options:)` signs a message itself (Ed25519, ML-DSA) rather than
    /// a hash of it (RSA, ECDSA). Signing a message whole needs it whole in memory; the digest forms
    /// (`signature(forDigestOf:)`, `signature(forDigestOfFileAtPath:)`) stream instead.
    public var signsMessagesWhole: Bool { self == .ed25519 || self == .mldsa65 || self == .mldsa87 }

    /// A short human name: "RSA-4096", "P-256", "Ed25519", "ML-DSA-65".
    public var description: String {
        switch self {
        case .rsa(let bits): "RSA-\(bits)"
        case .p256: "P-256"
        case .p384: "P-384"
        case .p521: "P-521"
        case .ed25519: "Ed25519"
        case .mldsa65: "ML-DSA-65"
        case .mldsa87: "ML-DSA-87"
        }
    }

    /// Whether this is an ECDSA curve.
    public var isECDSA: Bool { self == .p256 || self == .p384 || self == .p521 }

    /// The hash ECDSA pairs with the curve by default (FIPS 186-5 strength matching), and the hash RSA
    /// keys use when nothing else is said.
    public var defaultHash: DigestAlgorithm {
        switch self {
        case .p256: .sha256
        case .p384: .sha384
        case .p521: .sha512
        case .rsa, .ed25519, .mldsa65, .mldsa87: .sha512
        }
    }
}

/// The key types Coffer generates, as the command line names them (`-t p256`).
public enum KeyType: String, CaseIterable, Sendable, CustomStringConvertible {
    /// RSA with a 2048-bit modulus.
    case rsa2048
    /// RSA with a 3072-bit modulus.
    case rsa3072
    /// RSA with a 4096-bit modulus.
    case rsa4096
    /// ECDSA on P-256 (secp256r1).
    case p256
    /// ECDSA on P-384 (secp384r1).
    case p384
    /// ECDSA on P-521 (secp521r1).
    case p521
    /// Ed25519 (RFC 8032).
    case ed25519
    /// ML-DSA-65 (FIPS 204).
    case mldsa65
    /// ML-DSA-87 (FIPS 204).
    case mldsa87

    /// The algorithm a key of this type has.
    public var algorithm: KeyAlgorithm {
        switch self {
        case .rsa2048: .rsa(bits: 2048)
        case .rsa3072: .rsa(bits: 3072)
        case .rsa4096: .rsa(bits: 4096)
        case .p256: .p256
        case .p384: .p384
        case .p521: .p521
        case .ed25519: .ed25519
        case .mldsa65: .mldsa65
        case .mldsa87: .mldsa87
        }
    }

    public var description: String { rawValue }
}
