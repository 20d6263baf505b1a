public import CofferCrypto
public import Crypto

/// An X25519 public key as a recipient: its stanza (type 4) names the key by key id and seals the file
/// key with HPKE (DHKEM-X25519, HKDF-SHA-256, ChaCha20-Poly1305).
public struct X25519Recipient: FileKeyRecipient {
    /// The key files are encrypted to.
    public let publicKey: Curve25519.KeyAgreement.PublicKey

    /// A recipient for `publicKey`.
    public init(_ publicKey: Curve25519.KeyAgreement.PublicKey) { self.publicKey = publicKey }

    static let kind = HPKEStanzaKind(type: 4, suite: .Curve25519_SHA256_ChachaPoly, encapsulatedLength: 32, name: "X25519 recipient")
    static let stanzaRules = kind.rules

    /// The key's SubjectPublicKeyInfo DER: anyone holding it can encrypt to it.
    public var publicKeyInfo: [UInt8]? { Array(publicKey.derRepresentation) }

    /// One stanza, with a fresh HPKE ephemeral key.
    public func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza] {
        [try Self.kind.seal(fileKey, to: publicKey, keyID: RecipientPublicKey.x25519(publicKey).keyID)]
    }
}

/// An X25519 private key as an identity: opens the type 4 stanza that names its key id.
public struct X25519Identity: FileKeyIdentity {
    /// The private key.
    public let privateKey: Curve25519.KeyAgreement.PrivateKey

    /// The identity of `privateKey`.
    public init(_ privateKey: Curve25519.KeyAgreement.PrivateKey) { self.privateKey = privateKey }

    /// The public half's SubjectPublicKeyInfo DER.
    public var publicKeyInfo: [UInt8]? { Array(privateKey.publicKey.derRepresentation) }

    /// The file key from the X25519 stanza naming this key (key id compared in constant time).
    /// - Returns: `nil` when no stanza names it.
    /// - Throws: ``CofferEncryption/authenticationFailure`` when that stanza does not open.
    public func unwrap(_ stanzas: [EncryptedFileHeader.Stanza], limits: PasswordKDFLimits) throws -> FileKey? {
        try X25519Recipient.kind.open(stanzas, with: privateKey, keyID: RecipientPublicKey.x25519(privateKey.publicKey).keyID)
    }

    /// "the file is not encrypted to this key (key id …); it needs …".
    public func noMatchingStanza(in stanzas: [EncryptedFileHeader.Stanza]) -> CofferFormatsError {
        EncryptedFileHeader.Stanza.notEncrypted(to: RecipientPublicKey.x25519(privateKey.publicKey).keyID, needs: stanzas)
    }
}
