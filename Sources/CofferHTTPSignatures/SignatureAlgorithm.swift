/// The signature algorithms of the HTTP Signature Algorithms registry (RFC 9421 §3.3) that Coffer
/// implements, by their registered names.
public enum HTTPSignatureAlgorithm: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// HMAC with SHA-256 over a shared secret (§3.3.4).
    case hmacSHA256 = "hmac-sha256"
    /// ECDSA on P-256 with SHA-256, the signature as raw `r‖s` (64 bytes) (§3.3.4).
    case ecdsaP256SHA256 = "ecdsa-p256-sha256"
    /// ECDSA on P-384 with SHA-384, the signature as raw `r‖s` (96 bytes) (§3.3.5).
    case ecdsaP384SHA384 = "ecdsa-p384-sha384"
    /// Ed25519 over the signature base itself (§3.3.6).
    case ed25519 = "ed25519"
    /// RSASSA-PSS with SHA-512, MGF1-SHA-512 and a 64-byte salt (§3.3.1).
    case rsaPSSSHA512 = "rsa-pss-sha512"
    /// RSASSA-PKCS1-v1_5 with SHA-256 (§3.3.2).
    case rsaV1_5SHA256 = "rsa-v1_5-sha256"

    /// The registered name.
    public var description: String { rawValue }

    /// Whether the algorithm uses a shared secret rather than a key pair.
    public var isSymmetric: Bool { self == .hmacSHA256 }
}
