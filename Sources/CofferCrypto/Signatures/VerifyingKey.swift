import CofferCore
public import Crypto
public import _CryptoExtras
import SwiftASN1
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A public key that verifies signatures, whichever algorithm is inside.
///
/// Every key has a ``fingerprint`` (SHA-256 of its SubjectPublicKeyInfo DER), a short ``KeyFingerprint/keyID``
/// shown wherever a key is named, and a ``KeyFingerprint/readAloud`` form for comparing keys by voice.
public struct VerifyingKey: Sendable, Hashable, CustomStringConvertible {
    /// The swift-crypto key inside.
    public enum Underlying: Sendable {
        /// An RSA public key.
        case rsa(_RSA.Signing.PublicKey)
        /// An ECDSA public key on P-256.
        case p256(P256.Signing.PublicKey)
        /// An ECDSA public key on P-384.
        case p384(P384.Signing.PublicKey)
        /// An ECDSA public key on P-521.
        case p521(P521.Signing.PublicKey)
        /// An Ed25519 public key.
        case ed25519(Curve25519.Signing.PublicKey)
        /// An ML-DSA-65 public key (FIPS 204).
        case mldsa65(MLDSA65.PublicKey)
        /// An ML-DSA-87 public key (FIPS 204).
        case mldsa87(MLDSA87.PublicKey)
    }

    /// The swift-crypto key.
    package let underlying: Underlying
    /// The SubjectPublicKeyInfo DER encoding (RFC 5280), the canonical form Coffer fingerprints.
    public let derRepresentation: [UInt8]

    init(trusted underlying: Underlying) {
        self.underlying = underlying
        self.derRepresentation = Self.spki(of: underlying)
    }

    /// Wraps a swift-crypto key.
    /// - Parameters:
    ///   - underlying: the swift-crypto public key.
    ///   - allowingLegacyRSA: accept RSA keys below 2048 bits (1024-bit keys still verify old
    ///     signatures).
    /// - Warning: 1024-bit RSA can be factored by a well-funded attacker; use only to check signatures
    ///   made long ago, never to trust new ones.
    /// - Throws: ``CofferCryptoError`` `.invalidKey` for RSA below 2048 bits without `allowingLegacyRSA`,
    ///   or below 1024 bits at all.
    public init(_ underlying: Underlying, allowingLegacyRSA: Bool = false) throws(CofferCryptoError) {
        if case .rsa(let key) = underlying {
            let bits = key.keySizeInBits
            if bits < 1024 || (bits < SigningKey.minimumRSABits && !allowingLegacyRSA) {
                throw CofferCryptoError(
                    .invalidKey,
                    "expected an RSA key of at least \(SigningKey.minimumRSABits) bits, found \(bits) bits"
                        + (bits >= 1024 ? " (legacy keys need the explicit unsafe option)" : "")
                )
            }
        }
        self.init(trusted: underlying)
    }

    /// Reads a SubjectPublicKeyInfo DER structure of any supported algorithm.
    /// - Throws: ``CofferCryptoError`` `.invalidKey` for malformed DER, an unknown algorithm, or a
    ///   point not on its curve, naming what was found.
    public init(derRepresentation der: [UInt8], allowingLegacyRSA: Bool = false) throws(CofferCryptoError) {
        let spki: SubjectPublicKeyInfo
        do {
            spki = try SubjectPublicKeyInfo(derEncoded: der)
        } catch {
            throw CofferCryptoError(.invalidKey, "expected a DER SubjectPublicKeyInfo, found bytes that do not parse as one")
        }
        let key = Array(spki.key.bytes)
        let oid = spki.algorithm.algorithm
        do {
            switch oid {
            case KeyOID.rsaEncryption:
                // Parsed without swift-crypto's size check so that the policy below (2048 bits, or 1024
                // with the explicit legacy option) decides, with a message that says so.
                let rsa = try _RSA.Signing.PublicKey(unsafeDERRepresentation: der)
                try self.init(.rsa(rsa), allowingLegacyRSA: allowingLegacyRSA)
            case KeyOID.ecPublicKey:
                switch try Self.curve(of: spki.algorithm) {
                case KeyOID.secp256r1: try self.init(.p256(P256.Signing.PublicKey(derRepresentation: der)))
                case KeyOID.secp384r1: try self.init(.p384(P384.Signing.PublicKey(derRepresentation: der)))
                case KeyOID.secp521r1: try self.init(.p521(P521.Signing.PublicKey(derRepresentation: der)))
                case let other: throw CofferCryptoError(.unknownAlgorithm, "unsupported elliptic curve \(other)")
                }
            case KeyOID.ed25519:
                try self.init(.ed25519(Curve25519.Signing.PublicKey(rawRepresentation: key)))
            case KeyOID.mldsa65:
                try self.init(.mldsa65(MLDSA65.PublicKey(rawRepresentation: key)))
            case KeyOID.mldsa87:
                try self.init(.mldsa87(MLDSA87.PublicKey(rawRepresentation: key)))
            default:
                throw CofferCryptoError(.unknownAlgorithm, "unsupported public-key algorithm \(oid)")
            }
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw CofferCryptoError(.invalidKey, "the \(Self.name(of: oid)) public key inside the SubjectPublicKeyInfo is invalid")
        }
        // Re-encoding must give back the input: no trailing bytes, no alternative encodings.
        guard ConstantTime.equals(derRepresentation, der) || oid == KeyOID.rsaEncryption || oid == KeyOID.ecPublicKey else {
            throw CofferCryptoError(.invalidKey, "the SubjectPublicKeyInfo is not in canonical DER")
        }
    }

    static func curve(of algorithm: AlgorithmIdentifier) throws -> ASN1ObjectIdentifier {
        guard let parameters = algorithm.parameters else {
            throw CofferCryptoError(.invalidKey, "an EC public key without a named curve")
        }
        do {
            return try ASN1ObjectIdentifier(asn1Any: parameters)
        } catch {
            throw CofferCryptoError(.invalidKey, "expected a named curve for the EC key, found explicit or malformed parameters")
        }
    }

    static func name(of oid: ASN1ObjectIdentifier) -> String {
        switch oid {
        case KeyOID.rsaEncryption: "RSA"
        case KeyOID.ecPublicKey: "EC"
        case KeyOID.ed25519: "Ed25519"
        case KeyOID.mldsa65: "ML-DSA-65"
        case KeyOID.mldsa87: "ML-DSA-87"
        default: "\(oid)"
        }
    }

    /// The kind of key.
    public var algorithm: KeyAlgorithm {
        switch underlying {
        case .rsa(let key): .rsa(bits: key.keySizeInBits)
        case .p256: .p256
        case .p384: .p384
        case .p521: .p521
        case .ed25519: .ed25519
        case .mldsa65: .mldsa65
        case .mldsa87: .mldsa87
        }
    }

    /// The key's fingerprint, key id and read-aloud form.
    public var fingerprint: KeyFingerprint { KeyFingerprint(spki: derRepresentation) }

    /// The SubjectPublicKeyInfo as PEM (`-----BEGIN PUBLIC KEY-----`), as OpenSSL writes it.
    public var pemRepresentation: String { PEMArmor.encode(derRepresentation, label: "PUBLIC KEY") }

    public var description: String { "VerifyingKey(\(algorithm), id \(fingerprint.keyID))" }

    public static func == (lhs: VerifyingKey, rhs: VerifyingKey) -> Bool {
        ConstantTime.equals(lhs.derRepresentation, rhs.derRepresentation)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(derRepresentation) }

    private static func spki(of key: Underlying) -> [UInt8] {
        switch key {
        case .rsa(let key): return Array(key.derRepresentation)
        case .p256(let key): return Array(key.derRepresentation)
        case .p384(let key): return Array(key.derRepresentation)
        case .p521(let key): return Array(key.derRepresentation)
        case .ed25519(let key): return Array(key.derRepresentation)
        case .mldsa65(let key): return encodeSPKI(oid: KeyOID.mldsa65, key: Array(key.rawRepresentation))
        case .mldsa87(let key): return encodeSPKI(oid: KeyOID.mldsa87, key: Array(key.rawRepresentation))
        }
    }

    private static func encodeSPKI(oid: ASN1ObjectIdentifier, key: [UInt8]) -> [UInt8] {
        var coder = DER.Serializer()
        // invariant: serialising a structure we built from valid parts cannot fail.
        try? coder.serialize(SubjectPublicKeyInfo(algorithm: AlgorithmIdentifier(algorithm: oid), key: key))
        return coder.serializedBytes
    }

    // MARK: - Verifying

    /// Whether `signature` is valid for a message held in memory, made as
    /// ``SigningKey/signature(for:options:)-(Message,_)`` makes it. Malformed signatures (wrong length, bad DER) are simply invalid.
    public func isValidSignature<Signature: Collection, Message: Sequence>(
        _ signature: Signature,
        for message: Message,
        options: SignatureOptions = SignatureOptions()
    ) -> Bool where Signature.Element == UInt8, Message.Element == UInt8 {
        switch underlying {
        case .ed25519(let key): return key.isValidSignature(Array(signature), for: Array(message))
        case .mldsa65(let key): return key.isValidSignature(Array(signature), for: Array(message))
        case .mldsa87(let key): return key.isValidSignature(Array(signature), for: Array(message))
        case .rsa, .p256, .p384, .p521:
            guard let digest = try? SigningKey.digest(of: message, algorithm: options.hash ?? algorithm.defaultHash) else { return false }
            return isValidSignature(signature, forSignable: digest, options: options)
        }
    }

    /// Whether `signature` is valid for a digest Coffer computed (see
    /// ``SigningKey/signature(for:options:)-(DigestValue,_)``). A digest that is not
    /// ``DigestValue/isSignable`` (made from bytes, or not SHA-2) verifies nothing: the answer is false.
    public func isValidSignature<Signature: Collection>(
        _ signature: Signature,
        for digest: DigestValue,
        options: SignatureOptions = SignatureOptions()
    ) -> Bool where Signature.Element == UInt8 {
        guard let signable = try? digest.signableDigest() else { return false }
        return isValidSignature(signature, forSignable: signable, options: options)
    }

    private func isValidSignature<Signature: Collection>(
        _ signature: Signature,
        forSignable digest: DigestValue.Signable,
        options: SignatureOptions
    ) -> Bool where Signature.Element == UInt8 {
        let bytes = Array(signature)
        switch underlying {
        case .rsa(let key):
            let padding: _RSA.Signing.Padding = options.rsaPadding == .pss ? .PSS : .insecurePKCS1v1_5
            let value = _RSA.Signing.RSASignature(rawRepresentation: bytes)
            switch digest {
            case .sha256(let typed): return key.isValidSignature(value, for: typed, padding: padding)
            case .sha384(let typed): return key.isValidSignature(value, for: typed, padding: padding)
            case .sha512(let typed): return key.isValidSignature(value, for: typed, padding: padding)
            }
        case .p256(let key):
            let value = options.ecdsaEncoding == .der
                ? try? P256.Signing.ECDSASignature(derRepresentation: bytes)
                : try? P256.Signing.ECDSASignature(rawRepresentation: bytes)
            guard let value else { return false }
            return digest.withTyped { key.isValidSignature(value, for: $0) }
        case .p384(let key):
            let value = options.ecdsaEncoding == .der
                ? try? P384.Signing.ECDSASignature(derRepresentation: bytes)
                : try? P384.Signing.ECDSASignature(rawRepresentation: bytes)
            guard let value else { return false }
            return digest.withTyped { key.isValidSignature(value, for: $0) }
        case .p521(let key):
            let value = options.ecdsaEncoding == .der
                ? try? P521.Signing.ECDSASignature(derRepresentation: bytes)
                : try? P521.Signing.ECDSASignature(rawRepresentation: bytes)
            guard let value else { return false }
            return digest.withTyped { key.isValidSignature(value, for: $0) }
        case .ed25519(let key): return digest.withTyped { key.isValidSignature(bytes, for: Array($0)) }
        case .mldsa65(let key): return digest.withTyped { key.isValidSignature(bytes, for: Array($0)) }
        case .mldsa87(let key): return digest.withTyped { key.isValidSignature(bytes, for: Array($0)) }
        }
    }

    /// Whether `signature` is valid for the SHA-2 digest of bytes in memory, made as
    /// ``SigningKey/signature(forDigestOf:options:)`` makes it.
    public func isValidSignature<Signature: Collection, Message: Sequence>(
        _ signature: Signature,
        forDigestOf message: Message,
        options: SignatureOptions = SignatureOptions(hash: .sha512)
    ) -> Bool where Signature.Element == UInt8, Message.Element == UInt8 {
        guard let digest = try? SigningKey.digest(of: message, algorithm: options.hash ?? .sha512) else { return false }
        return isValidSignature(signature, forSignable: digest, options: options)
    }

    /// Whether `signature` is valid for the SHA-2 digest of a file, hashed in a stream as
    /// ``SigningKey/signature(forDigestOfFileAtPath:options:progress:)`` does.
    /// - Throws: `CofferCoreError` if the file cannot be read (an unreadable file is an error, not a forgery).
    public func isValidSignature<Signature: Collection>(
        _ signature: Signature,
        forDigestOfFileAtPath path: String,
        options: SignatureOptions = SignatureOptions(hash: .sha512),
        progress: ((Int64) -> Void)? = nil
    ) throws -> Bool where Signature.Element == UInt8 {
        let digest = try SigningKey.digest(ofFileAtPath: path, algorithm: options.hash ?? .sha512, progress: progress)
        return isValidSignature(signature, forSignable: digest, options: options)
    }
}
