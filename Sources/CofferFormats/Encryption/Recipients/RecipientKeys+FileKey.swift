public import CofferCrypto
import Crypto

/// A recipient key encrypts files through the recipient of its algorithm.
extension RecipientPublicKey: FileKeyRecipient {
    /// The ``FileKeyRecipient`` of this key's algorithm: ``X25519Recipient`` or ``P256Recipient``.
    public var fileKeyRecipient: any FileKeyRecipient {
        switch self {
        case .x25519(let key): X25519Recipient(key)
        case .p256(let key): P256Recipient(key)
        }
    }

    /// One stanza for this key (see ``X25519Recipient`` and ``P256Recipient``).
    public func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza] { try fileKeyRecipient.wrap(fileKey) }

    /// The key's SubjectPublicKeyInfo DER (``derRepresentation``).
    public var publicKeyInfo: [UInt8]? { derRepresentation }
}

/// A recipient's private key opens files through the identity of its algorithm.
extension RecipientPrivateKey: FileKeyIdentity {
    /// The ``FileKeyIdentity`` of this key's algorithm: ``X25519Identity`` or ``P256Identity``.
    public var fileKeyIdentity: any FileKeyIdentity {
        switch self {
        case .x25519(let key): X25519Identity(key)
        case .p256(let key): P256Identity(key)
        }
    }

    /// The file key from the stanza naming this key (see ``X25519Identity`` and ``P256Identity``).
    public func unwrap(_ stanzas: [EncryptedFileHeader.Stanza], limits: PasswordKDFLimits) throws -> FileKey? {
        try fileKeyIdentity.unwrap(stanzas, limits: limits)
    }

    /// "the file is not encrypted to this key (key id …); it needs …".
    public func noMatchingStanza(in stanzas: [EncryptedFileHeader.Stanza]) -> CofferFormatsError {
        fileKeyIdentity.noMatchingStanza(in: stanzas)
    }

    /// The public half's SubjectPublicKeyInfo DER.
    public var publicKeyInfo: [UInt8]? { publicKey.derRepresentation }
}
