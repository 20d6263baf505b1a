import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes

/// How a device's encryption key is named to people and in its history: the first 8 bytes of the
/// SHA-256 of its SubjectPublicKeyInfo, hex (``KeyFingerprint/keyID``).
enum EncryptionKeyIdentity {
    /// The id of a stored encryption key (SPKI DER, base64); nil for none or one that does not decode.
    static func id(ofStored base64: String?) -> String? {
        guard let base64, let der = try? Base64.decode(base64) else { return nil }
        return KeyFingerprint(subjectPublicKeyInfo: der).keyID
    }

    /// A change's `detail` in the key's history: `none → 0a1b…`, `0a1b… → 2c3d…`.
    static func change(from before: String?, to after: String) -> String {
        "\(id(ofStored: before) ?? "none") → \(id(ofStored: after) ?? "?")"
    }

    /// The SPKI DER (base64, as stored) of an X25519 or P-256 public key given as PEM or DER, or the
    /// problem to answer: a private key is refused, never reduced to its public half.
    static func stored(fromPEM text: String) -> Reading {
        if let problem = PrivateKeyRefusal.problem(inPublicKeyText: text, field: "encryptionKey", reason: "invalid-encryption-key") {
            return .refused(problem)
        }
        let bytes = Array(text.utf8)
        if (try? RecipientPrivateKey(importing: bytes)) != nil {
            return .refused(PrivateKeyRefusal.problem(field: "encryptionKey", reason: "invalid-encryption-key"))
        }
        guard let key = try? RecipientPublicKey(importing: bytes) else { return .refused(invalid) }
        return .stored(Base64.encode(key.derRepresentation))
    }

    /// An encryption key as it is stored, or the problem its text is.
    enum Reading {
        case stored(String)
        case refused(ProblemDetails)
    }

    static let invalid = ProblemDetails(
        status: .badRequest, reason: "invalid-encryption-key", detail: "encryptionKey must be an X25519 or P-256 public key (PEM)"
    )
}

/// The answer to a private key sent where a public key belongs: refused, so that the client learns of
/// its mistake (the server keeps nothing of it, and logs nothing of it).
enum PrivateKeyRefusal {
    static func problem(field: String, reason: String) -> ProblemDetails {
        ProblemDetails(
            status: .badRequest, reason: reason,
            detail: "\(field) holds a private key; send only the public key (PEM 'PUBLIC KEY'), and treat that private key as exposed"
        )
    }

    static func response(field: String, reason: String) -> Response { problem(field: field, reason: reason).response() }

    /// The problem with a public-key field's text, found before it is parsed: a private key anywhere in
    /// it (a PEM label naming one), or a PEM block with other text beside it, which the key readers
    /// would pass over (a private key in base64 before a public key's block went through that way).
    static func problem(inPublicKeyText text: String, field: String, reason: String) -> ProblemDetails? {
        if text.contains("PRIVATE KEY") { return problem(field: field, reason: reason) }
        guard text.contains("-----BEGIN") else { return nil }
        let block = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard block.components(separatedBy: "-----BEGIN").count == 2, block.hasPrefix("-----BEGIN"), block.hasSuffix("-----") else {
            return ProblemDetails(status: .badRequest, reason: reason, detail: "\(field) must be one PEM block ('PUBLIC KEY') and nothing beside it")
        }
        return nil
    }
}
