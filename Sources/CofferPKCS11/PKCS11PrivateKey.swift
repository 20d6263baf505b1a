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
    /// unless `hash` says otherwise, with `padding`. The private key never leaves the token.
    /// - Throws: ``PKCS11Error`` naming `C_SignInit` or `C_Sign` and the token: `.notPermitted` for a key
    ///   without `CKA_SIGN` or a mechanism the token lacks.
    public func sign(_ message: [UInt8], hash: DigestAlgorithm? = nil, padding: RSAPadding = .pkcs1v15) throws(PKCS11Error) -> [UInt8] {
        try sign(message, hash: hash, padding: padding, ecdsaEncoding: .der)
    }

    func sign(_ message: [UInt8], hash: DigestAlgorithm?, padding: RSAPadding, ecdsaEncoding: ECDSAEncoding) throws(PKCS11Error) -> [UInt8] {
        switch type {
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

    private func rawSign(mechanism type: CK_MECHANISM_TYPE, parameter: UnsafeMutableRawBufferPointer?, input: [UInt8]) throws(PKCS11Error) -> [UInt8] {
        var mechanism = CK_MECHANISM(mechanism: type, pParameter: parameter?.baseAddress, ulParameterLen: CK_ULONG(parameter?.count ?? 0))
        let module = session.module
        // C_SignInit and C_Sign are one operation of the session: both under the module's lock.
        module.lock.lock()
        defer { module.lock.unlock() }
        let list = module.functions.pointee
        let started = list.C_SignInit?(session.handle, &mechanism, handle) ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        guard started == CKR_OK else { throw PKCS11Error.failed("C_SignInit", started, token: session.tokenLabel) }
        var input = input
        var length: CK_ULONG = 0
        let sized = input.withUnsafeMutableBufferPointer { list.C_Sign?(session.handle, $0.baseAddress, CK_ULONG($0.count), nil, &length) } ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        guard sized == CKR_OK else { throw PKCS11Error.failed("C_Sign", sized, token: session.tokenLabel) }
        var signature = [UInt8](repeating: 0, count: Int(length))
        let signed = input.withUnsafeMutableBufferPointer { message in
            signature.withUnsafeMutableBufferPointer { list.C_Sign?(session.handle, message.baseAddress, CK_ULONG(message.count), $0.baseAddress, &length) }
        } ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        guard signed == CKR_OK else { throw PKCS11Error.failed("C_Sign", signed, token: session.tokenLabel) }
        return Array(signature.prefix(Int(length)))
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

    /// The key's RFC 7512 URI, which names it for `coffer` (`-k pkcs11:…`) and for other tools.
    public var uri: PKCS11URI {
        PKCS11URI(token: session.tokenLabel, object: label, id: id, type: "private")
    }
}

extension PKCS11PrivateKey: MessageSigner {
    /// The public half (``publicKey``), which verifies this key's signatures.
    public var verifyingKey: VerifyingKey { publicKey }

    /// Signs on the token as a software key of the same type signs with the same options: files,
    /// signature files, `--raw` signatures and RFC 9421 requests take a token key unchanged.
    public func signature(for message: [UInt8], options: SignatureOptions) throws -> [UInt8] {
        try sign(message, hash: options.hash, padding: options.rsaPadding == .pss ? .pss : .pkcs1v15, ecdsaEncoding: options.ecdsaEncoding)
    }
}
