public import CofferCrypto
import CofferCore

/// A key that makes HTTP message signatures, bound to one ``HTTPSignatureAlgorithm``.
///
/// ```swift
/// let key = try HTTPSigningKey(SigningKey.generate(.ed25519))        // ed25519, implied by the key
/// let rsa = try HTTPSigningKey(rsaKey, algorithm: .rsaPSSSHA512)      // RSA needs the padding named
/// let shared = HTTPSigningKey.hmacSHA256(secret: try MACKey(bytes: secret))
/// ```
public struct HTTPSigningKey: Sendable {
    /// The algorithm every signature by this key uses.
    public let algorithm: HTTPSignatureAlgorithm
    let material: Material

    enum Material: Sendable {
        case asymmetric(SigningKey)
        case secret(MACKey)
    }

    /// Binds a private key — in memory, or held by a token or the Secure Enclave (`SigningKey(_:)` of a
    /// `CustomSigningKey`) — to an algorithm. EC and Ed25519 keys imply theirs; RSA keys need
    /// `.rsaPSSSHA512` or `.rsaV1_5SHA256`.
    /// - Throws: ``HTTPSignatureError`` `.unsupportedAlgorithm` when the key cannot make `algorithm`'s
    ///   signatures, or an RSA key is given without an algorithm.
    public init(_ key: SigningKey, algorithm: HTTPSignatureAlgorithm? = nil) throws(HTTPSignatureError) {
        self.algorithm = try HTTPVerificationKey.algorithm(for: key.algorithm, requested: algorithm)
        self.material = .asymmetric(key)
    }

    /// An HMAC-SHA256 shared secret (`hmac-sha256`).
    public static func hmacSHA256(secret: MACKey) -> HTTPSigningKey {
        HTTPSigningKey(algorithm: .hmacSHA256, material: .secret(secret))
    }

    private init(algorithm: HTTPSignatureAlgorithm, material: Material) {
        self.algorithm = algorithm
        self.material = material
    }

    /// The key that checks this key's signatures.
    public var verificationKey: HTTPVerificationKey {
        switch material {
        case .asymmetric(let key): HTTPVerificationKey(algorithm: algorithm, material: .asymmetric(key.verifyingKey))
        case .secret(let secret): .hmacSHA256(secret: secret)
        }
    }

    /// The signature of a signature base.
    public func signature(for base: String) throws(HTTPSignatureError) -> [UInt8] {
        try signature(forBase: Array(base.utf8))
    }

    /// The signature of a signature base given as its bytes.
    func signature(forBase bytes: [UInt8]) throws(HTTPSignatureError) -> [UInt8] {
        do {
            switch material {
            case .secret(let secret):
                return try MACAlgorithm.hmacSHA256.authenticationCode(for: bytes, using: secret).bytes
            case .asymmetric(let key):
                return try key.signature(for: bytes, options: HTTPVerificationKey.options(for: algorithm))
            }
        } catch {
            throw HTTPSignatureError(.unsupportedAlgorithm, "the \(algorithm) signature could not be made")
        }
    }
}

/// A key that checks HTTP message signatures, bound to one ``HTTPSignatureAlgorithm``: a signature whose
/// `alg` parameter names another algorithm is refused, so a signer cannot switch how its key is used.
public struct HTTPVerificationKey: Sendable {
    /// The only algorithm this key accepts.
    public let algorithm: HTTPSignatureAlgorithm
    let material: Material

    enum Material: Sendable {
        case asymmetric(VerifyingKey)
        /// An HMAC computation already keyed with the secret: each check continues a copy, so the key's
        /// padding blocks are hashed once per key rather than once per request.
        case secret(keyed: MessageAuthenticator)
    }

    /// Binds a public key to an algorithm. EC and Ed25519 keys imply theirs; RSA keys need
    /// `.rsaPSSSHA512` or `.rsaV1_5SHA256`.
    /// - Throws: ``HTTPSignatureError`` `.unsupportedAlgorithm` when the key cannot check `algorithm`'s
    ///   signatures, or an RSA key is given without an algorithm.
    public init(_ key: VerifyingKey, algorithm: HTTPSignatureAlgorithm? = nil) throws(HTTPSignatureError) {
        self.algorithm = try Self.algorithm(for: key.algorithm, requested: algorithm)
        self.material = .asymmetric(key)
    }

    /// An HMAC-SHA256 shared secret (`hmac-sha256`).
    public static func hmacSHA256(secret: MACKey) -> HTTPVerificationKey {
        HTTPVerificationKey(algorithm: .hmacSHA256, material: .secret(keyed: MessageAuthenticator(.hmacSHA256, key: secret)))
    }

    init(algorithm: HTTPSignatureAlgorithm, material: Material) {
        self.algorithm = algorithm
        self.material = material
    }

    /// The public key, or nil for a shared secret.
    public var verifyingKey: VerifyingKey? {
        if case .asymmetric(let key) = material { return key }
        return nil
    }

    /// Whether `signature` is valid for `base` (HMAC tags compared in constant time).
    public func isValidSignature(_ signature: [UInt8], for base: String) -> Bool {
        isValidSignature(signature, forBase: Array(base.utf8))
    }

    /// Whether `signature` is valid for the signature base given as its bytes.
    func isValidSignature(_ signature: [UInt8], forBase bytes: [UInt8]) -> Bool {
        switch material {
        case .secret(let keyed):
            var authenticator = keyed
            authenticator.update(bytes)
            guard let tag = try? authenticator.finalize() else { return false }
            return ConstantTime.equals(tag.bytes, signature)
        case .asymmetric(let key):
            return key.isValidSignature(signature, for: bytes, options: Self.options(for: algorithm))
        }
    }

    /// The algorithm a key of `keyAlgorithm` signs with, checking a requested one against it.
    static func algorithm(for keyAlgorithm: KeyAlgorithm, requested: HTTPSignatureAlgorithm?) throws(HTTPSignatureError) -> HTTPSignatureAlgorithm {
        let implied: HTTPSignatureAlgorithm?
        switch keyAlgorithm {
        case .p256: implied = .ecdsaP256SHA256
        case .p384: implied = .ecdsaP384SHA384
        case .ed25519: implied = .ed25519
        case .rsa:
            guard let requested else {
                throw HTTPSignatureError(.unsupportedAlgorithm, "an RSA key needs its algorithm named: rsa-pss-sha512 or rsa-v1_5-sha256")
            }
            guard requested == .rsaPSSSHA512 || requested == .rsaV1_5SHA256 else {
                throw HTTPSignatureError(.unsupportedAlgorithm, "an RSA key cannot make \(requested) signatures")
            }
            return requested
        default: implied = nil
        }
        guard let implied else {
            throw HTTPSignatureError(.unsupportedAlgorithm, "RFC 9421 defines no algorithm for \(keyAlgorithm) keys")
        }
        if let requested, requested != implied {
            throw HTTPSignatureError(.unsupportedAlgorithm, "\(Article.indefinite("\(keyAlgorithm)")) key makes \(implied) signatures, not \(requested)")
        }
        return implied
    }

    /// How `SigningKey`/`VerifyingKey` must hash and encode for an algorithm.
    static func options(for algorithm: HTTPSignatureAlgorithm) -> SignatureOptions {
        switch algorithm {
        case .ecdsaP256SHA256: SignatureOptions(hash: .sha256, ecdsaEncoding: .raw)
        case .ecdsaP384SHA384: SignatureOptions(hash: .sha384, ecdsaEncoding: .raw)
        case .rsaPSSSHA512: SignatureOptions(hash: .sha512, rsaPadding: .pss)
        case .rsaV1_5SHA256: SignatureOptions(hash: .sha256, rsaPadding: .pkcs1v15)
        case .ed25519, .hmacSHA256: SignatureOptions()
        }
    }
}
