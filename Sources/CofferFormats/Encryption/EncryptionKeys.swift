import CofferCore
public import CofferCrypto
public import Crypto
import _CryptoExtras
import SwiftASN1
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A 256-bit symmetric key for Coffer's key mode. Never printed.
public struct EncryptionKey: Sendable, CustomStringConvertible {
    let key: SymmetricKey

    /// Wraps exactly 32 bytes.
    /// - Throws: ``CofferFormatsError`` `.invalidArgument` for any other length.
    public init<Bytes: Collection>(bytes: Bytes) throws(CofferFormatsError) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else {
            throw CofferFormatsError(.invalidArgument, "expected a 32-byte (256-bit) key, found \(bytes.count) bytes")
        }
        key = SymmetricKey(data: Array(bytes))
    }

    /// A new key from the system's secure generator.
    public static func generate() -> EncryptionKey {
        EncryptionKey(SymmetricKey(size: .bits256))
    }

    private init(_ key: SymmetricKey) { self.key = key }

    /// The key's id, as stored in file headers: 8 bytes of HKDF-SHA-256(key, info "coffer-v1 key-id").
    public var keyID: [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Array("coffer-v1 key-id".utf8), outputByteCount: 8).withUnsafeBytes { Array($0) }
    }

    /// The raw key bytes. - Warning: a secret; store only in a 0600 file or a keychain.
    public func withUnsafeKeyBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try key.withUnsafeBytes(body)
    }

    public var description: String { "EncryptionKey(id \(Hex.encode(keyID)))" }
}

/// A public key files can be encrypted to: X25519, or P-256 (a P-256 signing key serves too).
public enum RecipientPublicKey: Sendable, Hashable {
    /// An X25519 public key.
    case x25519(Curve25519.KeyAgreement.PublicKey)
    /// A P-256 public key.
    case p256(P256.KeyAgreement.PublicKey)

    /// SubjectPublicKeyInfo DER.
    public var derRepresentation: [UInt8] {
        switch self {
        case .x25519(let key): Array(key.derRepresentation)
        case .p256(let key): Array(key.derRepresentation)
        }
    }

    /// The first 8 bytes of SHA-256 over the SubjectPublicKeyInfo: the key id `coffer key show` prints.
    public var keyID: [UInt8] { Array(DigestAlgorithm.sha256.hash(derRepresentation).bytes.prefix(8)) }

    /// "X25519" or "P-256".
    public var algorithmName: String {
        switch self {
        case .x25519: "X25519"
        case .p256: "P-256"
        }
    }

    /// Reads a recipient from any public- or private-key file Coffer understands (an X25519 SPKI or
    /// PKCS#8, or any P-256 key format).
    /// - Throws: ``CofferFormatsError`` `.wrongKeyKind` for keys that cannot receive (RSA, Ed25519, ML-DSA).
    public init(importing bytes: [UInt8]) throws(CofferFormatsError) {
        if let (publicKey, _) = try JWKCodec.readX25519(bytes) {
            self = .x25519(publicKey)
            return
        }
        if let identity = try? RecipientPrivateKey(x25519Bytes: bytes) {
            self = identity.publicKey
            return
        }
        if let der = X25519Codec.spkiDER(bytes), let key = try? Curve25519.KeyAgreement.PublicKey(derRepresentation: der) {
            self = .x25519(key)
            return
        }
        let verifying = try VerifyingKey(importing: bytes)
        guard case .p256(let key) = verifying.underlying else {
            throw CofferFormatsError(.wrongKeyKind, "\(Article.indefinite("\(verifying.algorithm)")) key cannot be an encryption recipient; use an X25519 or P-256 key")
        }
        do {
            self = .p256(try P256.KeyAgreement.PublicKey(rawRepresentation: key.rawRepresentation))
        } catch {
            throw CofferFormatsError(.malformedKey, "the P-256 key is invalid")
        }
    }

    /// SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`), as `openssl pkey -pubout` writes it.
    public var pemRepresentation: String {
        switch self {
        case .x25519(let key): key.pemRepresentation
        case .p256(let key): key.pemRepresentation
        }
    }

    /// A JWK: `OKP`/`X25519` (RFC 8037) or `EC`/`P-256` (RFC 7518), with `kid` the key id Coffer prints.
    public var jwkRepresentation: [UInt8] {
        switch self {
        case .x25519(let key):
            return JWKCodec.writeX25519(public: key)
        case .p256(let key):
            // invariant: a valid P-256 point is a valid P-256 verifying key.
            guard let verifying = try? P256.Signing.PublicKey(rawRepresentation: key.rawRepresentation),
                let jwk = try? JWKCodec.write(public: VerifyingKey(.p256(verifying)))
            else { return [] }
            return jwk
        }
    }

    /// The bare key: X25519's 32 bytes (RFC 7748), or P-256's uncompressed point (65 bytes, X9.63).
    public var rawRepresentation: [UInt8] {
        switch self {
        case .x25519(let key): Array(key.rawRepresentation)
        case .p256(let key): Array(key.x963Representation)
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.derRepresentation == rhs.derRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(derRepresentation) }
}

/// A private key that opens files encrypted to its public half (an identity, in age's words).
public enum RecipientPrivateKey: Sendable {
    /// An X25519 private key.
    case x25519(Curve25519.KeyAgreement.PrivateKey)
    /// A P-256 private key.
    case p256(P256.KeyAgreement.PrivateKey)

    /// A new X25519 identity.
    public static func generateX25519() -> RecipientPrivateKey { .x25519(Curve25519.KeyAgreement.PrivateKey()) }

    /// The public half.
    public var publicKey: RecipientPublicKey {
        switch self {
        case .x25519(let key): .x25519(key.publicKey)
        case .p256(let key): .p256(key.publicKey)
        }
    }

    /// Unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    /// - Warning: the private key in the clear; write it only to a 0600 file.
    public var pemRepresentation: String {
        switch self {
        case .x25519(let key): key.pemRepresentation
        case .p256(let key): key.pemRepresentation
        }
    }

    /// Unencrypted PKCS#8 DER. - Warning: the private key in the clear.
    public var pkcs8DERRepresentation: [UInt8] {
        switch self {
        case .x25519(let key): Array(key.derRepresentation)
        case .p256(let key): Array(key.derRepresentation)
        }
    }

    /// A JWK with the private key (`d`): `OKP`/`X25519` or `EC`/`P-256`.
    /// - Warning: the private key in the clear; write it only to a 0600 file.
    public var jwkRepresentation: [UInt8] {
        switch self {
        case .x25519(let key):
            return JWKCodec.writeX25519(public: key.publicKey, private: key)
        case .p256(let key):
            // invariant: a valid P-256 scalar is a valid P-256 signing key.
            guard let signing = try? P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation),
                let jwk = try? JWKCodec.write(private: SigningKey(.p256(signing)))
            else { return [] }
            return jwk
        }
    }

    /// The bare private key: X25519's 32 bytes (RFC 7748), or P-256's 32-byte scalar.
    /// - Warning: the private key in the clear; write it only to a 0600 file.
    public var rawRepresentation: [UInt8] {
        switch self {
        case .x25519(let key): Array(key.rawRepresentation)
        case .p256(let key): Array(key.rawRepresentation)
        }
    }

    init(x25519Bytes bytes: [UInt8]) throws {
        guard let der = X25519Codec.pkcs8DER(bytes) else { throw CofferFormatsError(.malformedKey, "not an X25519 private key") }
        self = .x25519(try Curve25519.KeyAgreement.PrivateKey(derRepresentation: der))
    }

    /// Reads an identity: an X25519 PKCS#8 key (PEM or DER, optionally password-encrypted), or any P-256
    /// private key format Coffer reads.
    public init(importing bytes: [UInt8], password: ImportedKey.PasswordProvider? = nil) throws(CofferFormatsError) {
        if let (_, privateKey) = try JWKCodec.readX25519(bytes) {
            guard let privateKey else { throw CofferFormatsError(.wrongKeyKind, "the X25519 JWK is a public key (it has no \"d\"); decrypting needs the private key") }
            self = .x25519(privateKey)
            return
        }
        if let key = try? RecipientPrivateKey(x25519Bytes: bytes) {
            self = key
            return
        }
        if let der = X25519Codec.encryptedDER(bytes) {
            guard let password else { throw CofferFormatsError(.passwordRequired, "the key is encrypted; a password is needed to read it") }
            var secret: [UInt8]
            do { secret = try password() } catch { throw CofferFormatsError(.passwordRequired, "no password was given (\(error))", underlying: error) }
            defer { SecretBytes.wipe(&secret) }
            let pkcs8 = try EncryptedPKCS8.decrypt(der, password: secret, limits: PasswordKDFLimits())
            if let key = try? RecipientPrivateKey(x25519Bytes: pkcs8) {
                self = key
                return
            }
        }
        let signing = try SigningKey(importing: bytes, password: password)
        guard case .p256(let key) = signing.underlying else {
            throw CofferFormatsError(.wrongKeyKind, "\(Article.indefinite("\(signing.algorithm)")) key cannot decrypt; use an X25519 or P-256 key")
        }
        do {
            self = .p256(try P256.KeyAgreement.PrivateKey(rawRepresentation: key.rawRepresentation))
        } catch {
            throw CofferFormatsError(.malformedKey, "the P-256 key is invalid")
        }
    }

    /// The private key as password-encrypted PKCS#8 (see
    /// `SigningKey/encryptedPKCS8Representation(password:kdf:encoding:)`), read back by
    /// ``init(importing:password:)``.
    /// - Parameters:
    ///   - password: the password that will open it; not empty.
    ///   - kdf: how the password becomes the key (PBKDF2-HMAC-SHA-256 at 600,000 iterations by default).
    ///   - encoding: PEM (the default) or DER.
    public func encryptedPKCS8Representation(
        password: [UInt8],
        kdf: PasswordKDF = .encryptedKeyDefault,
        encoding: KeyEncoding = .pem
    ) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("encrypting the private key") { () throws -> [UInt8] in
            guard !password.isEmpty else { throw CofferFormatsError(.invalidArgument, "an empty password protects nothing") }
            var der = pkcs8DERRepresentation
            defer { SecretBytes.wipe(&der) }
            let encrypted = try EncryptedPKCS8.encrypt(der, password: password, kdf: kdf)
            return encoding == .pem ? Array(PEMArmor.encode(encrypted, label: "ENCRYPTED PRIVATE KEY").utf8) : encrypted
        }
    }
}

/// Recognising X25519 keys (OID 1.3.101.110) in PEM or DER, which the signing-key importer does not handle.
enum X25519Codec {
    static let oid: ASN1ObjectIdentifier = [1, 3, 101, 110]

    static func der(_ bytes: [UInt8], label: String) -> [UInt8]? {
        // DER before text, as KeyImporter reads: DER bytes can be valid UTF-8 that spells "-----BEGIN ".
        if KeyImporter.derFormat(of: bytes) != nil { return bytes }
        if let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN ") {
            return (try? PEMBlock.blocks(in: text))?.first { $0.label == label }?.der
        }
        return bytes
    }

    static func spkiDER(_ bytes: [UInt8]) -> [UInt8]? {
        guard let der = der(bytes, label: "PUBLIC KEY"), let spki = try? SubjectPublicKeyInfo(derEncoded: der),
            spki.algorithm.algorithm == oid
        else { return nil }
        return der
    }

    static func pkcs8DER(_ bytes: [UInt8]) -> [UInt8]? {
        guard let der = der(bytes, label: "PRIVATE KEY"), let info = try? OneAsymmetricKey(derEncoded: der),
            info.algorithm.algorithm == oid
        else { return nil }
        return der
    }

    static func encryptedDER(_ bytes: [UInt8]) -> [UInt8]? {
        guard let der = der(bytes, label: "ENCRYPTED PRIVATE KEY"), EncryptedPKCS8.looksEncrypted(der) else { return nil }
        return der
    }
}
