import CofferCore
public import CofferCrypto
import Crypto
import _CryptoExtras
import SwiftASN1
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A key read from bytes in whatever format they were in, and what that format was.
public struct ImportedKey: Sendable {
    /// A private key or a public one.
    public enum Key: Sendable {
        /// A private key, which can sign.
        case signing(SigningKey)
        /// A public key, which can only verify.
        case verifying(VerifyingKey)
    }

    /// The key.
    public let key: Key
    /// The format it was found in.
    public let format: KeyFormat
    /// PEM text or DER bytes (for JWK and OpenSSH, always `.pem`: they are text).
    public let encoding: KeyEncoding
    /// The comment the key carried, for formats that have one (an OpenSSH line's or private key's).
    public internal(set) var comment: String? = nil

    /// The public key, derived from the private one when that is what was read.
    public var verifyingKey: VerifyingKey {
        switch key {
        case .signing(let key): key.verifyingKey
        case .verifying(let key): key
        }
    }

    /// The private key, if one was read.
    public var signingKey: SigningKey? {
        if case .signing(let key) = key { return key }
        return nil
    }

    /// "PEM PKCS#8", "DER SubjectPublicKeyInfo", "JWK"…
    public var formatDescription: String {
        switch format {
        case .openSSH: signingKey == nil ? "OpenSSH public key" : "OpenSSH private key"
        case .jwk, .appleExternal: format.description
        default: "\(encoding == .pem ? "PEM" : "DER") \(format.description)"
        }
    }
}

extension ImportedKey {
    /// Supplies the password of an encrypted key; called only when one is needed. The returned bytes are
    /// wiped after use.
    public typealias PasswordProvider = () throws -> [UInt8]

    /// The largest input accepted: 1 MiB.
    public static let maximumInputSize = 1 << 20

    /// Reads a key from bytes in whatever format they are, detecting which: PEM (SPKI, PKCS#8, encrypted
    /// PKCS#8, PKCS#1, SEC1), DER of the same, JWK, Apple's external representation, an OpenSSH
    /// public-key line, or an unencrypted OpenSSH private key (`openssh-key-v1`). ``format`` and ``encoding`` say what was found.
    ///
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - password: asked for only if the key is encrypted.
    ///   - appleKeyClass: for Apple's raw EC bytes, whether they are a public or a private key; required
    ///     only when the length alone is ambiguous (97 bytes).
    ///   - allowingLegacyRSA: accept 1024-bit RSA public keys. - Warning: only to verify old signatures.
    ///   - limits: the most work a password-protected key may ask for.
    /// - Throws: ``CofferFormatsError`` that names what was found when it is not a usable key.
    public init(
        importing bytes: [UInt8],
        password: PasswordProvider? = nil,
        appleKeyClass: AppleKeyClass? = nil,
        allowingLegacyRSA: Bool = false,
        limits: PasswordKDFLimits = PasswordKDFLimits()
    ) throws(CofferFormatsError) {
        let context = KeyImporter.Context(password: password, appleKeyClass: appleKeyClass, allowingLegacyRSA: allowingLegacyRSA, limits: limits)
        self = try KeyImporter.read(bytes, context: context)
    }
}

/// The detection and decoding behind ``ImportedKey/init(importing:password:appleKeyClass:allowingLegacyRSA:limits:)``
/// and the representation-named initialisers.
enum KeyImporter {
    static func read(_ input: [UInt8], context: Context) throws(CofferFormatsError) -> ImportedKey {
        try checkSize(input)
        // Text as Windows editors save it: a UTF-8 byte order mark first (CR LF is handled per format).
        let bytes = input.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(input.dropFirst(3)) : input
        // DER before text: a DER key can be valid UTF-8 (every byte below 0x80) and its key bytes can
        // spell "-----BEGIN ", while no text a key comes in is one whole DER structure.
        if let format = derFormat(of: bytes) {
            return ImportedKey(key: try decode(bytes, as: format, context: context), format: format, encoding: .der)
        }
        if let text = String(validating: bytes, as: UTF8.self) {
            let trimmed = text.trimmingASCIIWhitespace
            if trimmed.contains("-----BEGIN ") { return try readPEM(text, context: context) }
            if trimmed.hasPrefix("{") { return try JWKCodec.read(trimmed, allowingLegacyRSA: context.allowingLegacyRSA) }
            if let first = trimmed.split(separator: " ").first, OpenSSHCodec.keyTypes.contains(String(first)) {
                return try OpenSSHCodec.read(trimmed, allowingLegacyRSA: context.allowingLegacyRSA)
            }
            if trimmed.hasPrefix("PuTTY-User-Key-File") {
                throw CofferFormatsError(.unsupported, "found a PuTTY private key; export it from PuTTYgen as OpenSSH or PKCS#8")
            }
        }
        return try readBinary(bytes, context: context)
    }

    static func checkSize(_ bytes: [UInt8]) throws(CofferFormatsError) {
        guard bytes.count <= ImportedKey.maximumInputSize else {
            throw CofferFormatsError(.malformedKey, "the input is \(bytes.count) bytes, larger than any key (limit 1 MiB)")
        }
        guard !bytes.isEmpty else { throw CofferFormatsError(.malformedKey, "the input is empty") }
    }

    struct Context {
        var password: ImportedKey.PasswordProvider? = nil
        var appleKeyClass: AppleKeyClass? = nil
        var allowingLegacyRSA = false
        var limits = PasswordKDFLimits()
    }

    // MARK: - PEM

    static func readPEM(_ text: String, context: Context) throws(CofferFormatsError) -> ImportedKey {
        let blocks = try PEMBlock.blocks(in: text).filter { $0.label != "EC PARAMETERS" }
        guard let block = blocks.first else {
            throw CofferFormatsError(.malformedKey, "found PEM text without a complete key block")
        }
        if block.hasHeaders {
            throw CofferFormatsError(
                .unsupported,
                "found a traditionally encrypted '\(block.label)' (Proc-Type header); convert it with 'openssl pkcs8 -topk8 -v2 aes-256-cbc'"
            )
        }
        let format: KeyFormat
        switch block.label {
        case "PUBLIC KEY": format = .spki
        case "PRIVATE KEY": format = .pkcs8
        case "ENCRYPTED PRIVATE KEY": format = .encryptedPKCS8
        case "RSA PRIVATE KEY": format = .pkcs1Private
        case "RSA PUBLIC KEY": format = .pkcs1Public
        case "EC PRIVATE KEY": format = .sec1
        case "OPENSSH PRIVATE KEY":
            return try OpenSSHCodec.readPrivate(block.der)
        case "CERTIFICATE":
            throw CofferFormatsError(.wrongKeyKind, "found an X.509 certificate, not a key; extract its key with 'openssl x509 -pubkey -noout'")
        default:
            throw CofferFormatsError(.unsupported, "found a PEM block labelled '\(block.label)', which is not a key format Coffer reads")
        }
        let key = try decode(block.der, as: format, context: context)
        return ImportedKey(key: key, format: format, encoding: .pem)
    }

    // MARK: - DER and raw bytes

    /// The DER format `bytes` are in, when they are one whole DER key structure: the outer SEQUENCE's
    /// shape tells the formats apart; each is tried strictly, most common first.
    static func derFormat(of bytes: [UInt8]) -> KeyFormat? {
        guard bytes.first == 0x30 else { return nil }
        return [KeyFormat.spki, .pkcs8, .encryptedPKCS8, .pkcs1Private, .sec1, .pkcs1Public].first { matches(bytes, $0) }
    }

    /// Bytes no text format claimed: an Apple external representation, or nothing Coffer reads (DER
    /// keys were tried first).
    static func readBinary(_ bytes: [UInt8], context: Context) throws(CofferFormatsError) -> ImportedKey {
        if bytes.first == 0x04, let key = try AppleCodec.read(bytes, keyClass: context.appleKeyClass) {
            return ImportedKey(key: key, format: .appleExternal, encoding: .der)
        }
        throw CofferFormatsError(
            .malformedKey,
            "found \(bytes.count) bytes that are not a key in any format Coffer reads (PEM, DER SPKI/PKCS#8/PKCS#1/SEC1, JWK, Apple, OpenSSH)"
        )
    }

    static func matches(_ der: [UInt8], _ format: KeyFormat) -> Bool {
        switch format {
        case .spki: (try? SubjectPublicKeyInfo(derEncoded: der)) != nil
        case .pkcs8: (try? OneAsymmetricKey(derEncoded: der)) != nil
        case .encryptedPKCS8: (try? EncryptedPrivateKeyInfo(derEncoded: der)) != nil
        case .pkcs1Private: (try? RSAPrivateKeyStructure(derEncoded: der)) != nil
        case .pkcs1Public: (try? RSAPublicKeyStructure(derEncoded: der)) != nil
        case .sec1: (try? ECPrivateKeyStructure(derEncoded: der)) != nil
        default: false
        }
    }

    static func decode(_ der: [UInt8], as format: KeyFormat, context: Context) throws(CofferFormatsError) -> ImportedKey.Key {
        do {
            switch format {
            case .spki:
                return .verifying(try VerifyingKey(derRepresentation: der, allowingLegacyRSA: context.allowingLegacyRSA))
            case .pkcs8:
                return .signing(try SigningKey(pkcs8DERRepresentation: der))
            case .encryptedPKCS8:
                guard let provider = context.password else {
                    throw CofferFormatsError(.passwordRequired, "the key is encrypted; a password is needed to read it")
                }
                var password: [UInt8]
                do { password = try provider() } catch {
                    throw CofferFormatsError(.passwordRequired, "no password was given for the encrypted key (\(error))", underlying: error)
                }
                defer { SecretBytes.wipe(&password) }
                let pkcs8 = try EncryptedPKCS8.decrypt(der, password: password, limits: context.limits)
                return .signing(try SigningKey(pkcs8DERRepresentation: pkcs8))
            case .pkcs1Private:
                guard (try? RSAPrivateKeyStructure(derEncoded: der)) != nil else {
                    throw CofferFormatsError(.malformedKey, "the PKCS#1 RSA private key is malformed")
                }
                return .signing(try SigningKey(.rsa(_RSA.Signing.PrivateKey(unsafeDERRepresentation: der))))
            case .pkcs1Public:
                let structure = try RSAPublicKeyStructure(derEncoded: der)
                let key = try _RSA.Signing.PublicKey(n: Array(structure.modulus), e: Array(structure.publicExponent))
                return .verifying(try VerifyingKey(.rsa(key), allowingLegacyRSA: context.allowingLegacyRSA))
            case .sec1:
                return .signing(try SEC1Codec.read(der))
            case .jwk, .appleExternal, .openSSH:
                throw CofferFormatsError(.malformedKey, "\(format) is not a DER format")
            }
        } catch let error as CofferFormatsError {
            throw error
        } catch let error as CofferCryptoError {
            throw CofferFormatsError(error.code == .unknownAlgorithm ? .unsupported : .malformedKey, "\(format): \(error.reason)")
        } catch {
            throw CofferFormatsError(.malformedKey, "found a \(format) that is damaged or holds an invalid key")
        }
    }
}

extension SigningKey {
    /// Reads a private key in any format Coffer knows, detecting which (see
    /// ``ImportedKey/init(importing:password:appleKeyClass:allowingLegacyRSA:limits:)``).
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - password: asked for only if the key is encrypted.
    ///   - appleKeyClass: for Apple's raw EC bytes of an ambiguous length, whether they are a private key.
    /// - Throws: ``CofferFormatsError`` `.wrongKeyKind` when the bytes hold a public key, naming its format.
    public init(importing bytes: [UInt8], password: ImportedKey.PasswordProvider? = nil, appleKeyClass: AppleKeyClass? = nil) throws(CofferFormatsError) {
        let imported = try ImportedKey(importing: bytes, password: password, appleKeyClass: appleKeyClass)
        self = try imported.requireSigningKey()
    }
}

extension VerifyingKey {
    /// Reads a public key in any format Coffer knows, detecting which; given a private key, takes its
    /// public half.
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - password: asked for only if the bytes are an encrypted private key.
    ///   - appleKeyClass: for Apple's raw EC bytes of an ambiguous length, whether they are a public key.
    ///   - allowingLegacyRSA: accept 1024-bit RSA public keys. - Warning: only to verify old signatures.
    public init(
        importing bytes: [UInt8],
        password: ImportedKey.PasswordProvider? = nil,
        appleKeyClass: AppleKeyClass? = nil,
        allowingLegacyRSA: Bool = false
    ) throws(CofferFormatsError) {
        self = try ImportedKey(importing: bytes, password: password, appleKeyClass: appleKeyClass, allowingLegacyRSA: allowingLegacyRSA).verifyingKey
    }
}

extension ImportedKey {
    /// The private key, or `.wrongKeyKind` naming the public key that was found instead.
    func requireSigningKey() throws(CofferFormatsError) -> SigningKey {
        guard let key = signingKey else {
            throw CofferFormatsError(
                .wrongKeyKind,
                "found a public key (\(formatDescription), \(verifyingKey.algorithm)) where a private key is needed"
            )
        }
        return key
    }

    /// The public key, or `.wrongKeyKind` when a private key was found (the representation-named
    /// initialisers are strict; ``VerifyingKey/init(importing:password:appleKeyClass:allowingLegacyRSA:)``
    /// takes a private key's public half).
    func requirePublicKey() throws(CofferFormatsError) -> VerifyingKey {
        guard case .verifying(let key) = key else {
            throw CofferFormatsError(
                .wrongKeyKind,
                "found a private key (\(formatDescription)) where a public key is expected; read it as a SigningKey and take its verifyingKey"
            )
        }
        return key
    }
}

extension String {
    var trimmingASCIIWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\n" || first == "\r" || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\n" || last == "\r" || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
