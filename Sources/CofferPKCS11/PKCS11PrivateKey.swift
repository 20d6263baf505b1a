import CPKCS11
public import CofferCrypto
import Crypto
import _CryptoExtras

/// A private key that lives on a token: it signs there, and only its public half is ever read out.
public struct PKCS11PrivateKey: Sendable {
    /// The session the key is used through.
    public let session: PKCS11Session
    let handle: CK_OBJECT_HANDLE
    /// `CKA_LABEL`.
    public let label: String
    /// `CKA_ID`.
    public let id: [UInt8]
    /// The key's type.
    public let type: PKCS11KeyType
    /// The public half, read from the token, as Coffer's verifying key (its fingerprint, key id, SPKI).
    public let publicKey: VerifyingKey

    /// How an RSA key pads its signatures.
    public enum RSAPadding: Sendable {
        /// PKCS #1 v1.5 (`CKM_SHA256_RSA_PKCS` and its SHA-384/512 siblings).
        case pkcs1v15
        /// PSS with MGF1 and a salt as long as the digest (`CKM_SHA256_RSA_PKCS_PSS`…), as swift-crypto verifies.
        case pss
    }

    /// Signs `message` on the token as a software key of the same type signs it (`SigningKey`):
    /// ECDSA over SHA-256 (P-256) or SHA-384 (P-384), in DER as OpenSSL writes it; RSA over SHA-512
    /// unless `hash` says otherwise, with `padding`; Ed25519 over the message itself (`CKM_EDDSA`, pure
    /// Ed25519: `hash` and `padding` do not apply). The private key never leaves the token.
    /// - Throws: ``PKCS11Error`` naming `C_SignInit` or `C_Sign` and the token: `.notPermitted` for a key
    ///   without `CKA_SIGN` or a mechanism the token lacks.
    public func sign(_ message: [UInt8], hash: DigestAlgorithm? = nil, padding: RSAPadding = .pkcs1v15) throws(PKCS11Error) -> [UInt8] {
        try sign(message, hash: hash, padding: padding, ecdsaEncoding: .der)
    }

    func sign(_ message: [UInt8], hash: DigestAlgorithm?, padding: RSAPadding, ecdsaEncoding: ECDSAEncoding) throws(PKCS11Error) -> [UInt8] {
        switch type {
        case .ed25519:
            return try rawSign(mechanism: CK_MECHANISM_TYPE(CKM_EDDSA), parameter: nil, input: message)
        case .p256, .p384:
            let algorithm = hash ?? publicKey.algorithm.defaultHash
            let digest = algorithm.hash(message).bytes
            let raw = try rawSign(mechanism: CK_MECHANISM_TYPE(CKM_ECDSA), parameter: nil, input: digest)
            do {
                // The token gives r ‖ s; swift-crypto checks it is a signature and re-encodes it.
                let der = type == .p256
                    ? Array(try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
                    : Array(try P384.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
                return ecdsaEncoding == .der ? der : raw
            } catch {
                throw PKCS11Error(.moduleFailure, "token '\(session.tokenLabel)' returned \(raw.count) bytes that are not an ECDSA signature", function: "C_Sign", underlying: error)
            }
        case .rsa:
            let algorithm = hash ?? publicKey.algorithm.defaultHash
            let (mechanism, hashMechanism, mgf): (UInt, UInt, UInt)
            switch (algorithm, padding) {
            case (.sha256, .pkcs1v15): (mechanism, hashMechanism, mgf) = (CKM_SHA256_RSA_PKCS, CKM_SHA256, CKG_MGF1_SHA256)
            case (.sha384, .pkcs1v15): (mechanism, hashMechanism, mgf) = (CKM_SHA384_RSA_PKCS, CKM_SHA384, CKG_MGF1_SHA384)
            case (.sha512, .pkcs1v15): (mechanism, hashMechanism, mgf) = (CKM_SHA512_RSA_PKCS, CKM_SHA512, CKG_MGF1_SHA512)
            case (.sha256, .pss): (mechanism, hashMechanism, mgf) = (CKM_SHA256_RSA_PKCS_PSS, CKM_SHA256, CKG_MGF1_SHA256)
            case (.sha384, .pss): (mechanism, hashMechanism, mgf) = (CKM_SHA384_RSA_PKCS_PSS, CKM_SHA384, CKG_MGF1_SHA384)
            case (.sha512, .pss): (mechanism, hashMechanism, mgf) = (CKM_SHA512_RSA_PKCS_PSS, CKM_SHA512, CKG_MGF1_SHA512)
            default: throw PKCS11Error(.unsupported, "RSA keys on tokens sign with SHA-256, SHA-384 or SHA-512, not \(algorithm)")
            }
            guard padding == .pss else { return try rawSign(mechanism: CK_MECHANISM_TYPE(mechanism), parameter: nil, input: message) }
            var parameters = CK_RSA_PKCS_PSS_PARAMS(hashAlg: CK_MECHANISM_TYPE(hashMechanism), mgf: CK_RSA_PKCS_MGF_TYPE(mgf), sLen: CK_ULONG(algorithm.byteCount))
            return try withUnsafeMutableBytes(of: &parameters) { bytes throws(PKCS11Error) in
                try rawSign(mechanism: CK_MECHANISM_TYPE(mechanism), parameter: bytes, input: message)
            }
        }
    }

    func rawSign(mechanism type: CK_MECHANISM_TYPE, parameter: UnsafeMutableRawBufferPointer?, input: [UInt8]) throws(PKCS11Error) -> [UInt8] {
        var mechanism = CK_MECHANISM(mechanism: type, pParameter: parameter?.baseAddress, ulParameterLen: CK_ULONG(parameter?.count ?? 0))
        let module = session.module
        // C_SignInit and C_Sign are one operation of the session: both under the module's lock.
        module.lock.lock()
        defer { module.lock.unlock() }
        let list = module.functions.pointee
        let started = list.C_SignInit?(session.handle, &mechanism, handle) ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        guard started == CKR_OK else { throw PKCS11Error.failed("C_SignInit", started, token: session.tokenLabel) }
        var input = input
        // One C_Sign into a buffer of the signature's known size (an ECDSA r ‖ s, an RSA modulus); a
        // token that wants more says CKR_BUFFER_TOO_SMALL with the length, and gets it (PKCS #11 §5.2).
        var length = CK_ULONG(maximumSignatureLength)
        var signature = [UInt8](repeating: 0, count: maximumSignatureLength)
        var signed = input.withUnsafeMutableBufferPointer { message in
            signature.withUnsafeMutableBufferPointer { list.C_Sign?(session.handle, message.baseAddress, CK_ULONG(message.count), $0.baseAddress, &length) }
        } ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        if signed == CKR_BUFFER_TOO_SMALL, Int(length) > signature.count, Int(length) <= 1 << 16 {
            signature = [UInt8](repeating: 0, count: Int(length))
            signed = input.withUnsafeMutableBufferPointer { message in
                signature.withUnsafeMutableBufferPointer { list.C_Sign?(session.handle, message.baseAddress, CK_ULONG(message.count), $0.baseAddress, &length) }
            } ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        }
        guard signed == CKR_OK else { throw PKCS11Error.failed("C_Sign", signed, token: session.tokenLabel) }
        return Array(signature.prefix(Int(length)))
    }

    /// The longest signature this key makes: r ‖ s for ECDSA, the modulus's length for RSA.
    var maximumSignatureLength: Int {
        switch type {
        case .p256, .ed25519: 64
        case .p384: 96
        case .rsa(let bits): (bits + 7) / 8
        }
    }

    /// Whether the token will never reveal the private key: `CKA_SENSITIVE` true and `CKA_EXTRACTABLE` false.
    public var isNonExtractable: Bool {
        get throws(PKCS11Error) {
            let sensitive = try session.boolAttribute(CKA_SENSITIVE, of: handle) ?? false
            let extractable = try session.boolAttribute(CKA_EXTRACTABLE, of: handle) ?? true
            return sensitive && !extractable
        }
    }

    /// Whether the key may sign (`CKA_SIGN`).
    public var canSign: Bool {
        get throws(PKCS11Error) { try session.boolAttribute(CKA_SIGN, of: handle) ?? false }
    }

    /// The key's RFC 7512 URI, which names it for `coffer` (`-k pkcs11:…`) and for other tools: its
    /// token by label, manufacturer, model and serial, and the key by label and id, so that it selects
    /// this key alone while tokens of one label are plugged in side by side.
    public var uri: PKCS11URI {
        var uri = session.slot.token.map(PKCS11URI.init(identifying:)) ?? PKCS11URI(token: session.tokenLabel)
        (uri.object, uri.id, uri.type) = (label, id, "private")
        return uri
    }
}

extension PKCS11PrivateKey {
    /// The DER DigestInfo that precedes a SHA-2 digest in a PKCS #1 v1.5 signature (RFC 8017 §9.2).
    static func digestInfoPrefix(_ algorithm: DigestAlgorithm) -> [UInt8]? {
        switch algorithm {
        case .sha256: [0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20]
        case .sha384: [0x30, 0x41, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30]
        case .sha512: [0x30, 0x51, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40]
        default: nil
        }
    }

    /// Signs a digest already computed: `CKM_ECDSA` over it, for RSA `CKM_RSA_PKCS` over its DigestInfo
    /// or `CKM_RSA_PKCS_PSS` with MGF1 of the same hash and a digest-length salt, and for Ed25519
    /// `CKM_EDDSA` over the digest's bytes as its message (as a software Ed25519 key signs a digest).
    func sign(digest: [UInt8], algorithm: DigestAlgorithm, padding: RSAPadding, ecdsaEncoding: ECDSAEncoding) throws(PKCS11Error) -> [UInt8] {
        switch type {
        case .ed25519:
            return try rawSign(mechanism: CK_MECHANISM_TYPE(CKM_EDDSA), parameter: nil, input: digest)
        case .p256, .p384:
            let raw = try rawSign(mechanism: CK_MECHANISM_TYPE(CKM_ECDSA), parameter: nil, input: digest)
            guard ecdsaEncoding == .der else { return raw }
            do {
                return type == .p256
                    ? Array(try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
                    : Array(try P384.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
            } catch {
                throw PKCS11Error(.moduleFailure, "token '\(session.tokenLabel)' returned \(raw.count) bytes that are not an ECDSA signature", function: "C_Sign", underlying: error)
            }
        case .rsa:
            guard let prefix = Self.digestInfoPrefix(algorithm) else {
                throw PKCS11Error(.unsupported, "RSA keys on tokens sign SHA-256, SHA-384 or SHA-512 digests, not \(algorithm)")
            }
            guard padding == .pss else { return try rawSign(mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS), parameter: nil, input: prefix + digest) }
            let (hashMechanism, mgf): (UInt, UInt) = switch algorithm {
            case .sha384: (CKM_SHA384, CKG_MGF1_SHA384)
            case .sha512: (CKM_SHA512, CKG_MGF1_SHA512)
            default: (CKM_SHA256, CKG_MGF1_SHA256)
            }
            var parameters = CK_RSA_PKCS_PSS_PARAMS(hashAlg: CK_MECHANISM_TYPE(hashMechanism), mgf: CK_RSA_PKCS_MGF_TYPE(mgf), sLen: CK_ULONG(algorithm.byteCount))
            return try withUnsafeMutableBytes(of: &parameters) { bytes throws(PKCS11Error) in
                try rawSign(mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS), parameter: bytes, input: digest)
            }
        }
    }
}

/// A token key is a `CustomSigningKey`: `SigningKey(tokenKey)` signs on the token through every API
/// that takes a `SigningKey` (signature files, `--raw` signatures, RFC 9421 requests, registration
/// proofs), and refuses to export it.
extension PKCS11PrivateKey: CustomSigningKey {
    /// The public half (``publicKey``), which verifies this key's signatures.
    public var verifyingKey: VerifyingKey { publicKey }

    /// Signs on the token as a software key of the same type signs with the same options.
    /// - Throws: ``PKCS11Error``: the token's failures (removed, logged out, a key without `CKA_SIGN`).
    public func signature(for message: [UInt8], options: SignatureOptions) throws(PKCS11Error) -> [UInt8] {
        try sign(message, hash: options.hash, padding: options.rsaPadding == .pss ? .pss : .pkcs1v15, ecdsaEncoding: options.ecdsaEncoding)
    }

    /// Signs a digest Coffer computed on the token (what `coffer sign --raw` writes).
    /// - Throws: ``PKCS11Error``: `.unsupported` for a digest made from bytes or not SHA-256/384/512, and
    ///   the token's failures.
    public func signature(for digest: DigestValue, options: SignatureOptions) throws(PKCS11Error) -> [UInt8] {
        guard digest.isSignable else {
            throw PKCS11Error(.unsupported, "only a SHA-256, SHA-384 or SHA-512 digest Coffer computed can be signed (as a software key's signature(for:options:) requires)")
        }
        return try sign(digest: digest.bytes, algorithm: digest.algorithm, padding: options.rsaPadding == .pss ? .pss : .pkcs1v15, ecdsaEncoding: options.ecdsaEncoding)
    }
}
