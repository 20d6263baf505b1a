/// A cryptographic hash function that Coffer can compute, all backed by swift-crypto.
///
/// The raw value is the name used on the command line and in JSON (`sha256`, `sha3-512`, …).
/// SHA-1 and MD5 are broken against collisions and carry the word *insecure* in their names: use them
/// only to check legacy checksums or speak protocols that require them (Gravatar's old URLs, Git object ids).
public enum DigestAlgorithm: String, CaseIterable, Sendable, Codable, CustomStringConvertible {
    /// SHA-256 (FIPS 180-4). The default everywhere.
    case sha256 = "sha256"
    /// SHA-384 (FIPS 180-4).
    case sha384 = "sha384"
    /// SHA-512 (FIPS 180-4).
    case sha512 = "sha512"
    /// SHA-512/256 (FIPS 180-4): SHA-512's core with a 256-bit output; immune to length extension.
    case sha512_256 = "sha512-256"
    /// SHA3-256 (FIPS 202).
    case sha3_256 = "sha3-256"
    /// SHA3-384 (FIPS 202).
    case sha3_384 = "sha3-384"
    /// SHA3-512 (FIPS 202).
    case sha3_512 = "sha3-512"
    /// SHA-1. - Warning: collisions are practical; never use it to protect anything new.
    case insecureSHA1 = "insecure-sha1"
    /// MD5. - Warning: collisions are trivial; only for legacy checksums and protocols that demand it.
    case insecureMD5 = "insecure-md5"

    /// The algorithms that are safe for new work, in the order Coffer lists them.
    public static let recommended: [DigestAlgorithm] = [.sha256, .sha384, .sha512, .sha512_256, .sha3_256, .sha3_384, .sha3_512]

    /// Whether the algorithm is broken for security purposes (SHA-1, MD5).
    public var isInsecure: Bool { self == .insecureSHA1 || self == .insecureMD5 }

    /// The number of bytes in a digest.
    public var byteCount: Int {
        switch self {
        case .sha256, .sha512_256, .sha3_256: 32
        case .sha384, .sha3_384: 48
        case .sha512, .sha3_512: 64
        case .insecureSHA1: 20
        case .insecureMD5: 16
        }
    }

    /// The standard's name for the algorithm, e.g. "SHA-256", "SHA3-512", "MD5".
    public var standardName: String {
        switch self {
        case .sha256: "SHA-256"
        case .sha384: "SHA-384"
        case .sha512: "SHA-512"
        case .sha512_256: "SHA-512/256"
        case .sha3_256: "SHA3-256"
        case .sha3_384: "SHA3-384"
        case .sha3_512: "SHA3-512"
        case .insecureSHA1: "SHA-1"
        case .insecureMD5: "MD5"
        }
    }

    /// The tag that BSD-style checksum lines (`sha256sum --tag`, `shasum --tag`) put in front of a name.
    public var bsdTag: String {
        switch self {
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        case .sha512_256: "SHA512/256"
        case .sha3_256: "SHA3-256"
        case .sha3_384: "SHA3-384"
        case .sha3_512: "SHA3-512"
        case .insecureSHA1: "SHA1"
        case .insecureMD5: "MD5"
        }
    }

    public var description: String { rawValue }

    /// Finds an algorithm by its Coffer name (`sha256`) or its standard name (`SHA-256`, `SHA3-256`),
    /// case-insensitively. Broken algorithms are found only by their `insecure-` names.
    public init?(name: String) {
        let folded = name.lowercased()
        if let exact = DigestAlgorithm(rawValue: folded) {
            self = exact
            return
        }
        guard let match = DigestAlgorithm.recommended.first(where: { $0.standardName.lowercased() == folded }) else {
            return nil
        }
        self = match
    }
}
