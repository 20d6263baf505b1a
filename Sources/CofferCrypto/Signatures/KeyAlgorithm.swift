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

extension KeyAlgorithm: CaseIterable {
    /// RSA with a 2048-bit modulus.
    public static let rsa2048 = KeyAlgorithm.rsa(bits: 2048)
    /// RSA with a 3072-bit modulus.
    public static let rsa3072 = KeyAlgorithm.rsa(bits: 3072)
    /// RSA with a 4096-bit modulus.
    public static let rsa4096 = KeyAlgorithm.rsa(bits: 4096)

    /// The algorithms ``SigningKey/generate(_:)`` makes keys of, in the command line's order.
    public static let allCases: [KeyAlgorithm] = [.rsa2048, .rsa3072, .rsa4096, .p256, .p384, .p521, .ed25519, .mldsa65, .mldsa87]

    /// The name the command line gives the algorithm (`-t p256`, `rsa4096`): lower case, no dash.
    public var name: String {
        switch self {
        case .rsa(let bits): "rsa\(bits)"
        case .p256: "p256"
        case .p384: "p384"
        case .p521: "p521"
        case .ed25519: "ed25519"
        case .mldsa65: "mldsa65"
        case .mldsa87: "mldsa87"
        }
    }

    /// The algorithm of ``allCases`` the command line calls `name` (case-sensitive, as ``name``
    /// spells it), or nil.
    public init?(name: String) {
        guard let algorithm = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = algorithm
    }

    /// ``name``, under the name it had when this type was `KeyType`.
    @available(*, deprecated, renamed: "name")
    public var rawValue: String { name }

    /// ``init(name:)``, under the name it had when this type was `KeyType`.
    @available(*, deprecated, renamed: "init(name:)")
    public init?(rawValue: String) { self.init(name: rawValue) }

    /// The algorithm itself: what `KeyType.algorithm` gave when the two were separate types.
    @available(*, deprecated, message: "KeyType is KeyAlgorithm now: use the value itself")
    public var algorithm: KeyAlgorithm { self }
}

/// The key types Coffer generates, before they were folded into the one ``KeyAlgorithm``.
@available(*, deprecated, renamed: "KeyAlgorithm")
public typealias KeyType = KeyAlgorithm
