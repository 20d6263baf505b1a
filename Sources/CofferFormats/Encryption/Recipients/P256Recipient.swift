public import CofferCrypto
public import Crypto

/// A P-256 public key as a recipient: its stanza (type 5) names the key by key id and seals the file
/// key with HPKE (DHKEM-P256, HKDF-SHA-256, AES-256-GCM).
public struct P256Recipient: FileKeyRecipient {
    /// The key files are encrypted to.
    public let publicKey: P256.KeyAgreement.PublicKey

    /// A recipient for `publicKey`.
    public init(_ publicKey: P256.KeyAgreement.PublicKey) { self.publicKey = publicKey }

    static let kind = HPKEStanzaKind(type: 5, suite: .P256_SHA256_AES_GCM_256, encapsulatedLength: 65, name: "P-256 recipient")
    static let stanzaRules = kind.rules

    /// The key's SubjectPublicKeyInfo DER: anyone holding it can encrypt to it.
    public var publicKeyInfo: [UInt8]? { Array(publicKey.derRepresentation) }

    /// One stanza, with a fresh HPKE ephemeral key.
    public func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza] {
        [try Self.kind.seal(fileKey, to: publicKey, keyID: RecipientPublicKey.p256(publicKey).keyID)]
    }
}

/// A P-256 private key as an identity: opens the type 5 stanza that names its key id.
public struct P256Identity: FileKeyIdentity {
    /// The private key.
    public let privateKey: P256.KeyAgreement.PrivateKey

    /// The identity of `privateKey`.
    public init(_ privateKey: P256.KeyAgreement.PrivateKey) { self.privateKey = privateKey }

    /// The public half's SubjectPublicKeyInfo DER.
    public var publicKeyInfo: [UInt8]? { Array(privateKey.publicKey.derRepresentation) }

    /// The file key from the P-256 stanza naming this key (key id compared in constant time).
    /// - Returns: `nil` when no stanza names it.
    /// - Throws: ``CofferEncryption/authenticationFailure`` when that stanza does not open.
    public func unwrap(_ stanzas: [EncryptedFileHeader.Stanza], limits: PasswordKDFLimits) throws -> FileKey? {
        try P256Recipient.kind.open(stanzas, with: privateKey, keyID: RecipientPublicKey.p256(privateKey.publicKey).keyID)
    }

    /// "the file is not encrypted to this key (key id …); it needs …".
    public func noMatchingStanza(in stanzas: [EncryptedFileHeader.Stanza]) -> CofferFormatsError {
        EncryptedFileHeader.Stanza.notEncrypted(to: RecipientPublicKey.p256(privateKey.publicKey).keyID, needs: stanzas)
    }
}
