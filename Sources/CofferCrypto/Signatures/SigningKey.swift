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
/// A key held by hardware — a PKCS #11 token key (`CofferPKCS11`), a Secure Enclave key — is a
/// `SigningKey` too (`init(_:)` of a ``CustomSigningKey``): it signs through every API that takes one, and
/// only exporting its private key is refused.
///
/// The private key never appears in `description`. Exporting it in the clear is a separate, plainly
/// named operation in `CofferFormats`.
public struct SigningKey: Sendable, CustomStringConvertible {
    /// The key inside: a swift-crypto key, or a ``CustomSigningKey`` held elsewhere. Not public: keys
    /// are made with one initialiser per kind, used through Coffer's methods and exported through its
    /// plainly named export operations, never handed out raw.
    package enum Underlying: Sendable {
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
        /// A key Coffer does not hold (a token's, the Secure Enclave's), with its public half read once.
        case custom(any CustomSigningKey, VerifyingKey)
    }

    /// The smallest RSA modulus Coffer will sign with.
    public static let minimumRSABits = 2048

    /// The key inside.
    package let underlying: Underlying

    /// Wraps a key, refusing an RSA key below ``minimumRSABits``.
    package init(_ underlying: Underlying) throws(CofferCryptoError) {
        if case .rsa(let key) = underlying, key.keySizeInBits < Self.minimumRSABits {
            throw CofferCryptoError(
                .invalidKey,
                "expected an RSA key of at least \(Self.minimumRSABits) bits for signing, found \(key.keySizeInBits) bits"
            )
        }
        self.underlying = underlying
    }

    /// Wraps a swift-crypto RSA key.
    /// - Throws: ``CofferCryptoError`` `.invalidKey` for a key below 2048 bits.
    public init(_ key: _RSA.Signing.PrivateKey) throws(CofferCryptoError) { try self.init(.rsa(key)) }

    /// Wraps a swift-crypto ECDSA key on P-256.
    public init(_ key: P256.Signing.PrivateKey) { underlying = .p256(key) }

    /// Wraps a swift-crypto ECDSA key on P-384.
    public init(_ key: P384.Signing.PrivateKey) { underlying = .p384(key) }

    /// Wraps a swift-crypto ECDSA key on P-521.
    public init(_ key: P521.Signing.PrivateKey) { underlying = .p521(key) }

    /// Wraps a swift-crypto Ed25519 key.
    public init(_ key: Curve25519.Signing.PrivateKey) { underlying = .ed25519(key) }

    /// Wraps a swift-crypto ML-DSA-65 key.
    public init(_ key: MLDSA65.PrivateKey) { underlying = .mldsa65(key) }

    /// Wraps a swift-crypto ML-DSA-87 key.
    public init(_ key: MLDSA87.PrivateKey) { underlying = .mldsa87(key) }

    /// Wraps a key Coffer does not hold (a PKCS #11 token's, the Secure Enclave's), so that it signs
    /// wherever a software key does. Its public half is read once, here. The private key stays where it
    /// is: exporting it is refused (``CofferCryptoError`` `.keyNotExportable`), and every signature it
    /// makes is checked against its public half before it is returned.
    /// - Throws: ``CofferCryptoError`` `.invalidKey` when the key's ``CustomSigningKey/algorithm`` is not
    ///   its public key's, or it is RSA below ``minimumRSABits``.
    public init(_ custom: some CustomSigningKey) throws(CofferCryptoError) {
        let publicKey = custom.verifyingKey
        guard custom.algorithm == publicKey.algorithm else {
            throw CofferCryptoError(
                .invalidKey,
                "expected a custom key whose algorithm is its public key's (\(publicKey.algorithm)), found one that says \(custom.algorithm)"
            )
        }
        if case .rsa(let bits) = publicKey.algorithm, bits < Self.minimumRSABits {
            throw CofferCryptoError(.invalidKey, "expected an RSA key of at least \(Self.minimumRSABits) bits for signing, found \(bits) bits")
        }
        underlying = .custom(custom, publicKey)
    }

    /// Whether the private key is held elsewhere (`init(_:)` of a ``CustomSigningKey``): it signs but cannot
    /// be exported.
    public var isCustom: Bool {
        if case .custom = underlying { return true }
        return false
    }

    /// Generates a new key of `algorithm` from the system's secure random generator: any
    /// ``KeyAlgorithm/allCases`` member (RSA with 2048, 3072 or 4096 bits).
    /// - Throws: ``CofferCryptoError`` `.unknownAlgorithm` for an RSA size Coffer does not generate,
    ///   `.cryptographicFailure` if swift-crypto cannot make the key.
    public static func generate(_ algorithm: KeyAlgorithm) throws(CofferCryptoError) -> SigningKey {
        guard KeyAlgorithm.allCases.contains(algorithm) else {
            throw CofferCryptoError(.unknownAlgorithm, "expected one of \(KeyAlgorithm.allCases.map(\.name).joined(separator: ", ")) to generate, found \(algorithm)")
        }
        return try wrappingSwiftCryptoErrors("generating \(Article.indefinite(algorithm.name)) key") { () throws -> SigningKey in
            try makeKey(algorithm)
        }
    }

    private static func makeKey(_ algorithm: KeyAlgorithm) throws -> SigningKey {
        switch algorithm {
        case .rsa(bits: 2048): try SigningKey(_RSA.Signing.PrivateKey(keySize: .bits2048))
        case .rsa(bits: 3072): try SigningKey(_RSA.Signing.PrivateKey(keySize: .bits3072))
        case .rsa(bits: 4096): try SigningKey(_RSA.Signing.PrivateKey(keySize: .bits4096))
        case .rsa(let bits): throw CofferCryptoError(.unknownAlgorithm, "expected RSA with 2048, 3072 or 4096 bits to generate, found \(bits) bits")
        case .p256: SigningKey(P256.Signing.PrivateKey())
        case .p384: SigningKey(P384.Signing.PrivateKey())
        case .p521: SigningKey(P521.Signing.PrivateKey())
        case .ed25519: SigningKey(Curve25519.Signing.PrivateKey())
        case .mldsa65: SigningKey(try MLDSA65.PrivateKey())
        case .mldsa87: SigningKey(try MLDSA87.PrivateKey())
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
        case .custom(_, let publicKey): publicKey
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
    ///
    /// A message that begins with one of Coffer's signing labels (``SigningLabel``: a keychain export's,
    /// a signature file's) is refused: its signature could pass for that format's. Those formats sign
    /// through their own writers.
    /// - Throws: ``CofferCryptoError``: `.invalidArgument` for a message that begins with a signing
    ///   label, `.unknownAlgorithm` for a hash other than SHA-2, `.cryptographicFailure` when
    ///   swift-crypto fails.
    public func signature<Message: Sequence>(
        for message: Message,
        options: SignatureOptions = SignatureOptions()
    ) throws(CofferCryptoError) -> [UInt8] where Message.Element == UInt8 {
        if let label = SigningLabel.label(beginning: message) {
            throw CofferCryptoError(
                .invalidArgument,
                "the message begins with '\(label)', a label of Coffer's own signatures: its signature could be taken for one of them, so it is not made"
            )
        }
        return try signature(forLabelled: message, options: options)
    }

    /// Signs a message of one of Coffer's own formats, which begins with its ``SigningLabel``: what
    /// ``signature(for:options:)`` does without the refusal. For the formats' writers only.
    package func signature<Message: Sequence>(
        forLabelled message: Message,
        options: SignatureOptions = SignatureOptions()
    ) throws(CofferCryptoError) -> [UInt8] where Message.Element == UInt8 {
        if case .custom(let key, let publicKey) = underlying {
            return try Self.customSignature(key, publicKey, .message(Array(message)), options: options)
        }
        return try Self.wrappingSwiftCryptoErrors("signing") { () throws -> [UInt8] in try signMessage(message, options: options) }
    }

    private func signMessage<Message: Sequence>(_ message: Message, options: SignatureOptions) throws -> [UInt8] where Message.Element == UInt8 {
        switch underlying {
        case .ed25519(let key):
            return try Array(key.signature(for: Array(message)))
        case .mldsa65(let key):
            return try Array(key.signature(for: Array(message)))
        case .mldsa87(let key):
            return try Array(key.signature(for: Array(message)))
        case .rsa, .p256, .p384, .p521, .custom:
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
        case .custom(let key, let publicKey):
            return try Self.customSignature(key, publicKey, .digest(digest.value), options: options)
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
    /// What a custom key is asked to sign.
    private enum CustomInput {
        case message([UInt8])
        case digest(DigestValue)
    }

    /// The custom key's signature of `input`, returned only once it verifies with the public half read
    /// when the key was wrapped: a key that reports one public key and signs with another is refused.
    private static func customSignature(
        _ key: any CustomSigningKey, _ publicKey: VerifyingKey, _ input: CustomInput, options: SignatureOptions
    ) throws(CofferCryptoError) -> [UInt8] {
        let signature = try sign(key, input, options: options)
        let verifies = switch input {
        case .message(let bytes): publicKey.isValidSignature(signature, for: bytes, options: options)
        case .digest(let digest): publicKey.isValidSignature(signature, for: digest, options: options)
        }
        guard verifies else {
            throw CofferCryptoError(
                .customKeyFailed,
                "expected a signature that verifies with the custom key's public key \(publicKey.fingerprint.keyID), found one that does not; nothing was signed"
            )
        }
        return signature
    }

    /// Signs on the custom key, passing Coffer's errors through and reporting the key's own (a token
    /// removed, a PIN refused) as `.customKeyFailed` with the original underneath.
    private static func sign<Key: CustomSigningKey>(_ key: Key, _ input: CustomInput, options: SignatureOptions) throws(CofferCryptoError) -> [UInt8] {
        do {
            switch input {
            case .message(let bytes): return try key.signature(for: bytes, options: options)
            case .digest(let digest): return try key.signature(for: digest, options: options)
            }
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw CofferCryptoError(.customKeyFailed, "the \(key.algorithm) key held outside Coffer failed to sign: \(error)", underlying: error)
        }
    }

    /// Runs `body`, passing Coffer's errors through and wrapping any other (swift-crypto's) as
    /// `.cryptographicFailure` with the original as the underlying error.
    static func wrappingSwiftCryptoErrors<Result>(_ operation: String, _ body: () throws -> Result) throws(CofferCryptoError) -> Result {
        try CofferCryptoError.wrapping(body) { CofferCryptoError(.cryptographicFailure, "\(operation) failed in swift-crypto", underlying: $0) }
    }
}
