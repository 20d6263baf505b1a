import CofferCore
public import CofferCrypto
import Crypto

/// A Coffer file's file key: the 32 random bytes every stanza wraps (docs/FORMAT-ENCRYPTION.md).
///
/// A ``FileKeyRecipient`` receives one to wrap, and a ``FileKeyIdentity`` returns one it unwrapped; the
/// engine derives the header and payload keys from it. Never printed.
public struct FileKey: Sendable, CustomStringConvertible {
    let key: SymmetricKey

    /// Wraps exactly 32 bytes, as an identity that unwrapped them hands them back.
    /// - Throws: ``CofferFormatsError`` `.authenticationFailed` for any other length: an unwrapped key
    ///   of the wrong size means the stanza was not what its writer sealed.
    public init<Bytes: Collection>(bytes: Bytes) throws(CofferFormatsError) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else { throw CofferEncryption.authenticationFailure }
        key = SymmetricKey(data: Array(bytes))
    }

    init(_ key: SymmetricKey) { self.key = key }

    /// A new file key from the system's secure generator.
    static func generate() -> FileKey { FileKey(SymmetricKey(size: .bits256)) }

    /// The 32 key bytes, to wrap them. - Warning: a secret; seal it, never store or print it.
    public func withUnsafeKeyBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try key.withUnsafeBytes(body)
    }

    /// The key bytes as an array, for code that wraps it.
    var bytes: [UInt8] { key.withUnsafeBytes { Array($0) } }

    /// "FileKey(…)": never the key.
    public var description: String { "FileKey(…)" }
}

/// Someone a file can be encrypted to: wraps the file key into header stanzas (age's `Recipient`).
///
/// Coffer's own recipients are ``PasswordRecipient`` (scrypt or PBKDF2), ``EncryptionKey`` (a 256-bit
/// key), ``RecipientPublicKey`` (X25519 or P-256, through ``X25519Recipient`` and ``P256Recipient``).
/// A new kind of recipient conforms in its own file: the engine never asks a recipient's type.
///
/// Conform to it when you add a way to open files, with a stanza type of its own
/// (docs/FORMAT-ENCRYPTION.md, "Stanza types": types 0xF0 to 0xFF are for private use and tests).
public protocol FileKeyRecipient: Sendable {
    /// Wraps `fileKey` into one or more stanzas that only this recipient's identity opens.
    /// - Throws: whatever stops the wrap (an unusable parameter, a failed derivation); the file is not written.
    func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza]

    /// Whether a file encrypted to this recipient must have no other way to open it (a password or a
    /// shared key: anyone who could open the file could otherwise rewrite it for the other recipients
    /// unnoticed). Recipients of public keys return `false`.
    var standsAlone: Bool { get }

    /// The SubjectPublicKeyInfo DER (or another public encoding) of the key this recipient encrypts
    /// to, when anyone who holds that public key could write files its identity opens; `nil` only
    /// when writing needs the same secret as reading (a password, a shared key). Callers who decide who
    /// could have written a file (a keychain export's author check) treat non-nil as "anyone".
    var publicKeyInfo: [UInt8]? { get }
}

/// What opens a file: unwraps the file key from the stanzas of a header meant for it (age's `Identity`).
///
/// The engine hands every stanza of the header (not yet authenticated) to ``unwrap(_:limits:)``; the identity
/// picks those of its own type (and key id), parses their bodies itself, and either returns the file
/// key, returns `nil` when no stanza is for it, or throws when one that is for it does not open. The
/// engine then checks the header's MAC with the key returned, so an identity never vouches for a file.
///
/// An identity may do its work elsewhere (a PKCS#11 token's ECDH), may throw its own errors (a PIN
/// refused), and reads only stanzas: it needs no change to the engine.
public protocol FileKeyIdentity: Sendable {
    /// The file key from the first stanza meant for this identity.
    /// - Parameters:
    ///   - stanzas: every stanza of the header, in order, as parsed; types this identity does not
    ///     know are skipped.
    ///   - limits: the most key-derivation work to do before knowing whether a password is right;
    ///     identities that derive nothing ignore it.
    /// - Returns: the file key, or `nil` when no stanza is for this identity.
    /// - Throws: ``CofferEncryption/authenticationFailure`` when a stanza for it does not open,
    ///   ``CofferFormatsError`` for a malformed body or a cost above `limits`, or the identity's own errors.
    func unwrap(_ stanzas: [EncryptedFileHeader.Stanza], limits: PasswordKDFLimits) throws -> FileKey?

    /// The error the engine throws when ``unwrap(_:limits:)`` finds no stanza for this identity:
    /// `.noMatchingKey`, naming this identity and what the file needs (see
    /// ``EncryptedFileHeader/Stanza/notEncrypted(to:needs:)``).
    func noMatchingStanza(in stanzas: [EncryptedFileHeader.Stanza]) -> CofferFormatsError

    /// The SubjectPublicKeyInfo DER (or another public encoding) of this identity's public half, when
    /// anyone holding it can write files this identity opens; `nil` for a password or a shared key.
    var publicKeyInfo: [UInt8]? { get }
}

extension FileKeyRecipient {
    /// Public-key recipients share the file with others: `false` unless a conformer says otherwise.
    public var standsAlone: Bool { false }
}

extension EncryptedFileHeader.Stanza {
    /// The `.noMatchingKey` error Coffer's key identities throw: "the file is not encrypted to this key
    /// (key id …); it needs …", listing every stanza's summary.
    /// - Parameters:
    ///   - keyID: the identity's key id, printed in hexadecimal.
    ///   - stanzas: the header's stanzas.
    public static func notEncrypted(to keyID: [UInt8], needs stanzas: [Self]) -> CofferFormatsError {
        CofferFormatsError(
            .noMatchingKey,
            "the file is not encrypted to this key (key id \(Hex.encode(keyID))); it needs \(stanzas.map(\.summary).joined(separator: "; "))"
        )
    }

    /// The stanzas of `type` whose body starts with `keyID`, compared in constant time: the candidates
    /// an identity named by that key id tries. Ids are hints; only the unwrap proves a match.
    public static func candidates(in stanzas: [Self], type: UInt8, keyID: [UInt8]) -> [Self] {
        stanzas.filter { $0.type == type && $0.body.count >= keyID.count && ConstantTime.equals($0.body.prefix(keyID.count), keyID) }
    }
}
