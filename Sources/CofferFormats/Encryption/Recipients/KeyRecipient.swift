public import CofferCrypto
import CofferCore
import Crypto

/// A 256-bit key is both the recipient and the identity of its files: its stanza (type 3) names it by
/// key id and wraps the file key under HKDF-SHA-256(key, random salt, "coffer-v1 key-wrap").
extension EncryptionKey: FileKeyRecipient, FileKeyIdentity {
    static let stanzaType: UInt8 = 3

    /// A shared key is the only way to open its file.
    public var standsAlone: Bool { true }

    /// `nil`: the key is shared by whoever writes and whoever reads.
    public var publicKeyInfo: [UInt8]? { nil }

    /// One key stanza with a fresh 16-byte salt.
    public func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza] {
        let salt = try SecureRandom.bytes(count: 16)
        return [try KeyWrap.seal(fileKey, under: keyEncryptionKey(salt: salt), type: Self.stanzaType, parameters: keyID + salt)]
    }

    /// The file key from a key stanza naming this key's id (compared in constant time).
    /// - Returns: `nil` when no stanza names this key.
    /// - Throws: ``CofferEncryption/authenticationFailure`` when none of those that name it opens.
    public func unwrap(_ stanzas: [EncryptedFileHeader.Stanza], limits: PasswordKDFLimits) throws -> FileKey? {
        let candidates = EncryptedFileHeader.Stanza.candidates(in: stanzas, type: Self.stanzaType, keyID: keyID)
        guard !candidates.isEmpty else { return nil }
        for stanza in candidates {
            let body = try KeyStanza(stanza.body)
            if let fileKey = KeyWrap.open(stanza, under: keyEncryptionKey(salt: body.salt)) { return fileKey }
        }
        throw CofferEncryption.authenticationFailure
    }

    /// "the file is not encrypted to this key (key id …); it needs …".
    public func noMatchingStanza(in stanzas: [EncryptedFileHeader.Stanza]) -> CofferFormatsError {
        EncryptedFileHeader.Stanza.notEncrypted(to: keyID, needs: stanzas)
    }

    private func keyEncryptionKey(salt: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: Array("coffer-v1 key-wrap".utf8), outputByteCount: 32)
    }

    static let stanzaRules = StanzaRules(type: stanzaType, standsAlone: true, validate: { body throws(CofferFormatsError) in
        _ = try KeyStanza(body)
    }, summary: { body in "256-bit key, key id \(Hex.encode(body.prefix(8)))" })
}

/// Type 3's body: key id (8), salt (16), wrapped key (48).
struct KeyStanza {
    let salt: [UInt8]

    init(_ body: [UInt8]) throws(CofferFormatsError) {
        try EncryptedFileHeader.Stanza.requireLength(body, 72, "key")
        salt = Array(body[8..<24])
    }
}
