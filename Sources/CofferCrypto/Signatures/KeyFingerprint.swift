import CofferCore

/// How a public key is named to people: its SHA-256 fingerprint over the SubjectPublicKeyInfo DER,
/// a short key id, and a form two people can read aloud to compare keys over a second channel.
public struct KeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// SHA-256 of the SubjectPublicKeyInfo DER: the same value as
    /// `openssl pkey -pubin -outform DER | openssl dgst -sha256`.
    public let sha256: [UInt8]

    init(spki: [UInt8]) {
        sha256 = DigestAlgorithm.sha256.hash(spki).bytes
    }

    /// The fingerprint of any key given as SubjectPublicKeyInfo DER (for keys that are not signing keys,
    /// such as X25519 encryption recipients).
    public init(subjectPublicKeyInfo der: [UInt8]) {
        self.init(spki: der)
    }

    /// The fingerprint in lower-case hex.
    public var hex: String { Hex.encode(sha256) }

    /// `SPKI-SHA256:` and the unpadded base64 fingerprint. Labelled so that it is never taken for the
    /// `SHA256:` fingerprint `ssh-keygen -l` prints, which hashes the key's SSH encoding instead (CofferFormats'
    /// `VerifyingKey.sshFingerprint()` gives that one).
    public var base64: String { "SPKI-SHA256:" + Base64.encode(sha256).replacingPadding() }

    /// The first 8 bytes of the fingerprint in hex: short enough to show beside every key and signature,
    /// long enough (64 bits) that two keys in one keyring will not share it by accident.
    public var keyID: String { Hex.encode(sha256.prefix(8)) }

    /// The id a Coffer registration server (`coffer serve`) registers this public key under: `k_` and
    /// the first 16 bytes of the fingerprint in hex. A client knows it before registering, and signs its
    /// registration with it as `keyid` (docs/SERVER.md, "Proof of possession").
    public var registeredKeyID: String { "k_" + Hex.encode(sha256.prefix(16)) }

    /// Thirty digits in six groups of five (about 100 bits), the way secure messengers show safety numbers:
    /// each group is five bytes of the fingerprint read as a number, modulo 100,000.
    public var readAloud: String {
        stride(from: 0, to: 30, by: 5).map { offset -> String in
            let value = sha256[offset..<(offset + 5)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 100_000
            let digits = String(value)
            return String(repeating: "0", count: 5 - digits.count) + digits
        }.joined(separator: " ")
    }

    public var description: String { hex }
}

extension String {
    fileprivate func replacingPadding() -> String {
        var text = self
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
