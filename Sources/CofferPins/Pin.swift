import CofferCore
import Crypto

/// One pin: the SHA-256 digest of a certificate's SubjectPublicKeyInfo (the form TrustKit, HPKP and
/// OkHttp use; it survives re-issuing a certificate for the same key) or of the whole DER certificate.
///
/// Text forms, as ``init(_:)`` reads and ``description`` writes them:
/// - `BASE64` or `sha256/BASE64` or `pin-sha256="BASE64"`: an SPKI pin;
/// - `cert-sha256/BASE64`: a certificate pin.
///
/// ```swift
/// let pin = try Pin("r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=")
/// ```
public struct Pin: Hashable, Sendable, CustomStringConvertible {
    /// What a pin is the digest of.
    public enum Kind: String, Hashable, Sendable {
        /// The DER SubjectPublicKeyInfo of the certificate's key.
        case publicKey
        /// The whole DER certificate.
        case certificate
    }

    /// What the digest covers.
    public let kind: Kind
    /// The 32-byte SHA-256 digest.
    public let sha256: [UInt8]

    /// A pin from its digest.
    /// - Throws: ``PinningError`` `.malformedPin` unless `sha256` is 32 bytes.
    public init(kind: Kind, sha256: [UInt8]) throws(PinningError) {
        guard sha256.count == 32 else {
            throw PinningError(.malformedPin, "a pin is a 32-byte SHA-256 digest; found \(sha256.count) bytes")
        }
        self.kind = kind
        self.sha256 = sha256
    }

    /// The SPKI pin of a DER SubjectPublicKeyInfo.
    public init(subjectPublicKeyInfo der: some Sequence<UInt8>) {
        self.kind = .publicKey
        self.sha256 = Array(SHA256.hash(data: Array(der)))
    }

    /// The certificate pin of a DER certificate.
    public init(certificate der: some Sequence<UInt8>) {
        self.kind = .certificate
        self.sha256 = Array(SHA256.hash(data: Array(der)))
    }

    /// Reads a pin in one of the text forms listed on the type.
    /// - Throws: ``PinningError`` `.malformedPin`, saying which form was expected.
    public init(_ text: String) throws(PinningError) {
        var body = Substring(text.trimmingWhitespace)
        var kind = Kind.publicKey
        if body.hasPrefix("cert-sha256/") {
            kind = .certificate
            body = body.dropFirst("cert-sha256/".count)
        } else if body.hasPrefix("sha256/") {
            body = body.dropFirst("sha256/".count)
        } else if body.hasPrefix("pin-sha256=") {
            body = body.dropFirst("pin-sha256=".count)
            if body.hasPrefix("\""), body.hasSuffix("\""), body.count >= 2 { body = body.dropFirst().dropLast() }
        } else if let slash = body.firstIndex(of: "/"), body[..<slash].contains("-") || body[..<slash] == "sha1" {
            throw PinningError(.malformedPin, "unknown pin prefix '\(body[..<slash])/'; use a bare base64 SPKI pin, 'sha256/…' or 'cert-sha256/…'")
        }
        guard body.count == 44, let digest = try? Base64.decode(body), digest.count == 32 else {
            throw PinningError(.malformedPin, "'\(text.clipped(toUTF8: 80))' is not a pin: expected the base64 of the SHA-256 digest of a public key (44 characters, ending in '=')")
        }
        self.kind = kind
        self.sha256 = digest
    }

    /// The base64 digest alone, the form TrustKit configurations and `openssl … | base64` use.
    public var base64: String { Base64.encode(sha256) }

    /// `BASE64` for an SPKI pin, `cert-sha256/BASE64` for a certificate pin; ``init(_:)`` reads it back.
    public var description: String {
        kind == .publicKey ? base64 : "cert-sha256/" + base64
    }
}

extension String {
    fileprivate var trimmingWhitespace: Substring {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return text
    }
}
