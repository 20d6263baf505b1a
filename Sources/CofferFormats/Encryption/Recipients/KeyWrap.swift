import CofferCore
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The two ways Coffer's own stanzas seal a file key (docs/FORMAT-ENCRYPTION.md): AES-256-GCM under a
/// key-encryption key (password and key stanzas), and HPKE base mode (recipient stanzas).
enum KeyWrap {
    /// The length of every wrapped file key: 32 bytes and a 16-byte tag.
    static let wrappedLength = 48

    static let zeroNonce = [UInt8](repeating: 0, count: 12)

    /// HPKE's info for recipient stanzas. Made per use: a `Data` global keeps its storage behind a tagged
    /// pointer, which LeakSanitizer reports as a leak at every process exit.
    static var recipientInfo: Data { Data("coffer-v1 recipient".utf8) }

    /// The additional data an AES-GCM wrap authenticates: type, body length and the parameters, all of
    /// the body but the wrapped key (computable before the wrap exists, since its length is fixed).
    static func additionalData(type: UInt8, parameters: [UInt8]) -> [UInt8] {
        [type] + bigEndian16(parameters.count + wrappedLength) + parameters
    }

    /// A stanza whose body is `parameters` and the file key sealed under `kek` with AES-256-GCM (the
    /// nonce is zero: every KEK is used once, as its salt is random).
    static func seal(_ fileKey: FileKey, under kek: SymmetricKey, type: UInt8, parameters: [UInt8]) throws -> EncryptedFileHeader.Stanza {
        let box = try AES.GCM.seal(
            fileKey.bytes, using: kek, nonce: AES.GCM.Nonce(data: zeroNonce), authenticating: additionalData(type: type, parameters: parameters)
        )
        return EncryptedFileHeader.Stanza(type: type, body: parameters + Array(box.ciphertext) + Array(box.tag))
    }

    /// The file key sealed in the last 48 bytes of `stanza`, or `nil` when `kek` does not open it.
    static func open(_ stanza: EncryptedFileHeader.Stanza, under kek: SymmetricKey) -> FileKey? {
        let body = stanza.body
        guard body.count >= wrappedLength else { return nil }
        let split = body.count - wrappedLength
        guard let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: zeroNonce), ciphertext: body[split..<(split + 32)], tag: body[(split + 32)...]),
            let key = try? AES.GCM.open(box, using: kek, authenticating: additionalData(type: stanza.type, parameters: Array(body[..<split]))),
            key.count == 32
        else { return nil }
        return FileKey(SymmetricKey(data: key))
    }
}

/// What the HPKE recipient stanza types (4, X25519; 5, P-256) share: body = key id (8), HPKE encapsulated
/// key, and the file key sealed with the stanza type and key id as additional data.
struct HPKEStanzaKind: Sendable {
    let type: UInt8
    let suite: HPKE.Ciphersuite
    let encapsulatedLength: Int
    /// "X25519 recipient" or "P-256 recipient", for errors and `coffer inspect`.
    let name: String

    var bodyLength: Int { 8 + encapsulatedLength + KeyWrap.wrappedLength }

    /// The registry entry: a body of exactly ``bodyLength`` bytes, never standing alone.
    var rules: StanzaRules {
        let (length, name) = (bodyLength, name)
        return StanzaRules(type: type, standsAlone: false, validate: { body throws(CofferFormatsError) in
            try EncryptedFileHeader.Stanza.requireLength(body, length, name)
        }, summary: { body in "\(name), key id \(Hex.encode(body.prefix(8)))" })
    }

    /// One stanza sealing `fileKey` to `key`, with a fresh HPKE ephemeral key.
    func seal<Key: HPKEDiffieHellmanPublicKey>(_ fileKey: FileKey, to key: Key, keyID: [UInt8]) throws -> EncryptedFileHeader.Stanza {
        var sender = try HPKE.Sender(recipientKey: key, ciphersuite: suite, info: KeyWrap.recipientInfo)
        let sealed = try sender.seal(fileKey.bytes, authenticating: [type] + keyID)
        return EncryptedFileHeader.Stanza(type: type, body: keyID + Array(sender.encapsulatedKey) + Array(sealed))
    }

    /// Opens the first of `stanzas` of this type that names `keyID` (compared in constant time) with `key`.
    /// - Returns: `nil` when no stanza names the key.
    /// - Throws: ``CofferEncryption/authenticationFailure`` when the stanza naming it does not open.
    func open<Key: HPKEDiffieHellmanPrivateKey>(_ stanzas: [EncryptedFileHeader.Stanza], with key: Key, keyID: [UInt8]) throws(CofferFormatsError) -> FileKey? {
        guard let stanza = EncryptedFileHeader.Stanza.candidates(in: stanzas, type: type, keyID: keyID).first else { return nil }
        let body = stanza.body
        let sealedStart = keyID.count + encapsulatedLength
        guard body.count == bodyLength,
            var recipient = try? HPKE.Recipient(
                privateKey: key, ciphersuite: suite, info: KeyWrap.recipientInfo, encapsulatedKey: Data(body[keyID.count..<sealedStart])
            ),
            let fileKey = try? recipient.open(body[sealedStart...], authenticating: [type] + keyID)
        else { throw CofferEncryption.authenticationFailure }
        return try FileKey(bytes: fileKey)
    }
}
