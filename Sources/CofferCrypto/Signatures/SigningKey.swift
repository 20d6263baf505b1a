import CofferCore
public import Crypto
public import _CryptoExtras
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A private key that signs, whichever algorithm is inside: RSA, ECDSA (P-256/384/521), Ed25519 or
/// ML-DSA (65/87). Callers hold a `SigningKey` and need not care which.
///
/// ```swift
/// let key = try SigningKey.generate(.ed25519)
/// let signature = try key.signature(forDigestOfFileAtPath: "release.tar.gz")
/// let ok = try key.verifyingKey.isValidSignature(signature, forDigestOfFileAtPath: "release.tar.gz")
/// ```
///
/// Two families of methods, named for what they sign:
/// - ``signature(for:options:)-(Message,_)`` signs a message as its algorithm defines: Ed25519 and
///   ML-DSA sign the bytes themselves, RSA and ECDSA hash them (ECDSA with its curve's hash by default).
/// - ``signature(forDigestOf:options:)`` and ``signature(forDigestOfFileAtPath:options:progress:)`` sign
///   a SHA-2 digest of the bytes (SHA-512 unless ``SignatureOptions/hash`` says otherwise), which is how
///   a file of any size is signed in constant memory. For the same bytes and options the two give the
///   same signature; for Ed25519, ML-DSA and ECDSA it differs from ``signature(for:options:)-(Message,_)``.
///
/// The private key never appears in `description`. Exporting it in the clear is a separate, plainly
/// named operation in `CofferFormats`.
public struct SigningKey: Sendable, CustomStringConvertible {
    /// The swift-crypto key inside, for ``init(_:)``.
    public enum Underlying: Sendable {
        /// An RSA private key (2048 bits or more to sign).
        case rsa(_RSA.Signing.PrivateKey)
        /// An ECDSA private key on P-256.
        case p256(P256.Signing.PrivateKey)
        /// An ECDSA private key on P-384.
        case p384(P384.Signing.PrivateKey)
        /// An ECDSA private key on P-521.
        case p521(P521.Signing.PrivateKey)
        /// An Ed25519 private key.
        case ed25519(Curve25519.Signing.PrivateKey)
        /// An ML-DSA-65 private key (FIPS 204).
        case mldsa65(MLDSA65.PrivateKey)
        /// An ML-DSA-87 private key (FIPS 204).
        case mldsa87(MLDSA87.PrivateKey)
    }

    /// The smallest RSA modulus Coffer will sign with.
    public static let minimumRSABits = 2048

    /// The swift-crypto key. Not public: a signing key is used through Coffer's methods and exported
    /// through its plainly named export operations, never handed out raw.
    package let underlying: Underlying

    /// Wraps a swift-crypto key.
    /// - Throws: ``CofferCryptoError`` `.invalidKey` for an RSA key below 2048 bits.
    public init(_ underlying: Underlying) throws(CofferCryptoError) {
        if case .rsa(let key) = underlying, key.keySizeInBits < Self.minimumRSABits {
            throw CofferCryptoError(
                .invalidKey,
                "expected an RSA key of at least \(Self.minimumRSABits) bits for signing, found \(key.keySizeInBits) bits"
            )
        }
        self.underlying = underlying
    }

    /// Generates a new key from the system's secure random generator.
    /// - Throws: ``CofferCryptoError`` `.cryptographicFailure` if swift-crypto cannot make the key.
    public static func generate(_ type: KeyType) throws(CofferCryptoError) -> SigningKey {
        try wrappingSwiftCryptoErrors("generating \(Article.indefinite("\(type)")) key") { () throws -> SigningKey in
            try makeKey(type)
        }
    }

    private static func makeKey(_ type: KeyType) throws -> SigningKey {
        switch type {
        case .rsa2048: try SigningKey(.rsa(_RSA.Signing.PrivateKey(keySize: .bits2048)))
        case .rsa3072: try SigningKey(.rsa(_RSA.Signing.PrivateKey(keySize: .bits3072)))
        case .rsa4096: try SigningKey(.rsa(_RSA.Signing.PrivateKey(keySize: .bits4096)))
        case .p256: try SigningKey(.p256(P256.Signing.PrivateKey()))
        case .p384: try SigningKey(.p384(P384.Signing.PrivateKey()))
        case .p521: try SigningKey(.p521(P521.Signing.PrivateKey()))
        case .ed25519: try SigningKey(.ed25519(Curve25519.Signing.PrivateKey()))
        case .mldsa65: try SigningKey(.mldsa65(MLDSA65.PrivateKey()))
        case .mldsa87: try SigningKey(.mldsa87(MLDSA87.PrivateKey()))
        }
    }

    /// The kind of key.
    public var algorithm: KeyAlgorithm { verifyingKey.algorithm }

    /// The matching public key.
    public var verifyingKey: VerifyingKey {
        switch underlying {
        case .rsa(let key): VerifyingKey(trusted: .rsa(key.publicKey))
        case .p256(let key): VerifyingKey(trusted: .p256(key.publicKey))
        case .p384(let key): VerifyingKey(trusted: .p384(key.publicKey))
        case .p521(let key): VerifyingKey(trusted: .p521(key.publicKey))
        case .ed25519(let key): VerifyingKey(trusted: .ed25519(key.publicKey))
        case .mldsa65(let key): VerifyingKey(trusted: .mldsa65(key.publicKey))
        case .mldsa87(let key): VerifyingKey(trusted: .mldsa87(key.publicKey))
        }
    }

    /// Names the key by its public half, never revealing the private one.
    public var description: String { "SigningKey(\(algorithm), id \(verifyingKey.fingerprint.keyID))" }

    // MARK: - Signing

    /// Signs a message held in memory.
    ///
    /// RSA and ECDSA hash the message (``SignatureOptions/hash``, by default SHA-512 for RSA and the
    /// curve's own for ECDSA) and sign the digest; Ed25519 and ML-DSA sign the message itself, exactly
    /// as `openssl pkeyutl -sign -rawin` does for Ed25519.
    /// - Throws: ``CofferCryptoError``: `.unknownAlgorithm` for a hash other than SHA-2,
    ///   `.cryptographicFailure` when swift-crypto fails.
    public func signature<Message: Sequence>(
        for message: Message,
        options: SignatureOptions = SignatureOptions()
    ) throws(CofferCryptoError) -> [UInt8] where Message.Element == UInt8 {
        try Self.wrappingSwiftCryptoErrors("signing") { () throws -> [UInt8] in try signMessage(message, options: options) }
    }

    private func signMessage<Message: Sequence>(_ message: Message, options: SignatureOptions) throws -> [UInt8] where Message.Element == UInt8 {
        switch underlying {
        case .ed25519(let key):
            return try Array(key.signature(for: Array(message)))
        case .mldsa65(let key):
            return try Array(key.signature(for: Array(message)))
        case .mldsa87(let key):
            return try Array(key.signature(for: Array(message)))
        case .rsa, .p256, .p384, .p521:
            return try signDigest(Self.digest(of: message, algorithm: options.hash ?? algorithm.defaultHash), options: options)
        }
    }

    /// Signs a digest Coffer computed (``DigestValue/isSignable``). RSA and ECDSA sign it as a digest
    /// (interoperable with `openssl dgst -sha512 -sign`); Ed25519 and ML-DSA sign the digest's bytes as
    /// their message.
    /// - Throws: ``CofferCryptoError``: `.unknownAlgorithm` for a hash other than SHA-256/384/512,
    ///   `.invalidArgument` for a digest made from bytes, `.cryptographicFailure` when swift-crypto fails.
    public func signature(for digest: DigestValue, options: SignatureOptions = SignatureOptions()) throws(CofferCryptoError) -> [UInt8] {
        let signable = try digest.signableDigest()
        return try Self.wrappingSwiftCryptoErrors("signing") { () throws -> [UInt8] in try signDigest(signable, options: options) }
    }

    /// The signable digest of bytes in memory, after checking the hash function.
    static func digest<Message: Sequence>(of message: Message, algorithm: DigestAlgorithm) throws(CofferCryptoError) -> DigestValue.Signable
    where Message.Element == UInt8 {
        try DigestValue.checkSignable(algorithm)
        return try algorithm.hash(message).signableDigest()
    }

    /// The signable digest of a file, after checking the hash function (before reading anything).
    static func digest(ofFileAtPath path: String, algorithm: DigestAlgorithm, progress: ((Int64) -> Void)?) throws -> DigestValue.Signable {
        try DigestValue.checkSignable(algorithm)
        return try algorithm.hash(fileAtPath: path, progress: progress).signableDigest()
    }

    private func signDigest(_ digest: DigestValue.Signable, options: SignatureOptions) throws -> [UInt8] {
        switch underlying {
        case .rsa(let key):
            let padding: _RSA.Signing.Padding = options.rsaPadding == .pss ? .PSS : .insecurePKCS1v1_5
            let signature: _RSA.Signing.RSASignature
            switch digest {
            case .sha256(let value): signature = try key.signature(for: value, padding: padding)
            case .sha384(let value): signature = try key.signature(for: value, padding: padding)
            case .sha512(let value): signature = try key.signature(for: value, padding: padding)
            }
            return Array(signature.rawRepresentation)
        case .p256(let key):
            let signature = try digest.withTyped { try key.signature(for: $0) }
            return Array(options.ecdsaEncoding == .der ? signature.derRepresentation : signature.rawRepresentation)
        case .p384(let key):
            let signature = try digest.withTyped { try key.signature(for: $0) }
            return Array(options.ecdsaEncoding == .der ? signature.derRepresentation : signature.rawRepresentation)
        case .p521(let key):
            let signature = try digest.withTyped { try key.signature(for: $0) }
            return Array(options.ecdsaEncoding == .der ? signature.derRepresentation : signature.rawRepresentation)
        case .ed25519(let key):
            return try digest.withTyped { try Array(key.signature(for: Array($0))) }
        case .mldsa65(let key):
            return try digest.withTyped { try Array(key.signature(for: Array($0))) }
        case .mldsa87(let key):
            return try digest.withTyped { try Array(key.signature(for: Array($0))) }
        }
    }

    /// Signs the SHA-2 digest of bytes held in memory: the same signature
    /// ``signature(forDigestOfFileAtPath:options:progress:)`` makes for a file holding these bytes.
    ///
    /// The digest is ``SignatureOptions/hash``, SHA-512 by default whatever the key; it is then signed
    /// as ``signature(for:options:)-(DigestValue,_)`` signs a digest.
    public func signature<Message: Sequence>(
        forDigestOf message: Message,
        options: SignatureOptions = SignatureOptions(hash: .sha512)
    ) throws(CofferCryptoError) -> [UInt8] where Message.Element == UInt8 {
        let digest = try Self.digest(of: message, algorithm: options.hash ?? .sha512)
        return try Self.wrappingSwiftCryptoErrors("signing") { () throws -> [UInt8] in try signDigest(digest, options: options) }
    }

    /// Signs the SHA-2 digest of a file (or `-` for standard input), read in constant memory.
    ///
    /// The file is hashed in a stream with ``SignatureOptions/hash`` (SHA-512 by default, whatever the
    /// key) and the digest is signed as ``signature(for:options:)-(DigestValue,_)`` signs one. This is
    /// exactly ``signature(forDigestOf:options:)`` of the file's bytes, and what `coffer sign --raw` writes.
    public func signature(
        forDigestOfFileAtPath path: String,
        options: SignatureOptions = SignatureOptions(hash: .sha512),
        progress: ((Int64) -> Void)? = nil
    ) throws -> [UInt8] {
        let digest = try Self.digest(ofFileAtPath: path, algorithm: options.hash ?? .sha512, progress: progress)
        return try Self.wrappingSwiftCryptoErrors("signing") { () throws -> [UInt8] in try signDigest(digest, options: options) }
    }
}

extension SigningKey {
    /// Runs `body`, passing Coffer's errors through and wrapping any other (swift-crypto's) as
    /// `.cryptographicFailure` with the original as the underlying error.
    static func wrappingSwiftCryptoErrors<Result>(_ operation: String, _ body: () throws -> Result) throws(CofferCryptoError) -> Result {
        try CofferCryptoError.wrapping(body) { CofferCryptoError(.cryptographicFailure, "\(operation) failed in swift-crypto", underlying: $0) }
    }
}
