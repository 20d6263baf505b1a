import CofferCore
import Crypto
import _CryptoExtras
import SwiftASN1
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SigningKey {
    /// Reads an unencrypted PKCS#8 `PrivateKeyInfo` / `OneAsymmetricKey` DER structure (RFC 5208, RFC 5958)
    /// of any supported algorithm.
    /// - Throws: ``CofferCryptoError`` `.invalidKey` or `.unknownAlgorithm`, naming what was found.
    public init(pkcs8DERRepresentation der: [UInt8]) throws(CofferCryptoError) {
        let info: OneAsymmetricKey
        do {
            info = try OneAsymmetricKey(derEncoded: der)
        } catch {
            throw CofferCryptoError(.invalidKey, "expected a DER PKCS#8 private key, found bytes that do not parse as one")
        }
        let oid = info.algorithm.algorithm
        do {
            switch oid {
            case KeyOID.rsaEncryption:
                let key = try _RSA.Signing.PrivateKey(unsafeDERRepresentation: der)
                try self.init(.rsa(key))
            case KeyOID.ecPublicKey:
                switch try VerifyingKey.curve(of: info.algorithm) {
                case KeyOID.secp256r1: try self.init(.p256(P256.Signing.PrivateKey(derRepresentation: der)))
                case KeyOID.secp384r1: try self.init(.p384(P384.Signing.PrivateKey(derRepresentation: der)))
                case KeyOID.secp521r1: try self.init(.p521(P521.Signing.PrivateKey(derRepresentation: der)))
                case let other: throw CofferCryptoError(.unknownAlgorithm, "unsupported elliptic curve \(other)")
                }
            case KeyOID.ed25519:
                try self.init(.ed25519(Curve25519.Signing.PrivateKey(derRepresentation: der)))
            case KeyOID.mldsa65:
                let seed = try MLDSAPrivateKeyEncoding.seed(from: Array(info.privateKey.bytes))
                try self.init(.mldsa65(MLDSA65.PrivateKey(seedRepresentation: seed, publicKey: nil)))
            case KeyOID.mldsa87:
                let seed = try MLDSAPrivateKeyEncoding.seed(from: Array(info.privateKey.bytes))
                try self.init(.mldsa87(MLDSA87.PrivateKey(seedRepresentation: seed, publicKey: nil)))
            case KeyOID.mldsa44:
                throw CofferCryptoError(.unknownAlgorithm, "ML-DSA-44 keys are not supported; use ML-DSA-65 or ML-DSA-87")
            default:
                throw CofferCryptoError(.unknownAlgorithm, "unsupported private-key algorithm \(oid)")
            }
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw CofferCryptoError(.invalidKey, "the \(VerifyingKey.name(of: oid)) private key inside the PKCS#8 structure is invalid")
        }
    }

    /// The private key as unencrypted PKCS#8 DER (`OneAsymmetricKey`, RFC 5958), read back by
    /// ``init(pkcs8DERRepresentation:)``.
    ///
    /// - Warning: the private key in the clear. Write it only to a file created with mode 0600, prefer
    ///   the password-encrypted form, and never log it.
    /// - Throws: ``CofferCryptoError`` `.keyNotExportable` for a key held outside Coffer
    ///   (`init(_:)` of a ``CustomSigningKey``): a token or the Secure Enclave keeps its private key.
    public var pkcs8DERRepresentation: [UInt8] {
        get throws(CofferCryptoError) {
            switch underlying {
            case .rsa(let key): return Array(key.pkcs8DERRepresentation)
            case .p256(let key): return Array(key.derRepresentation)
            case .p384(let key): return Array(key.derRepresentation)
            case .p521(let key): return Array(key.derRepresentation)
            case .ed25519(let key): return Array(key.derRepresentation)
            case .mldsa65(let key): return Self.mldsaPKCS8(oid: KeyOID.mldsa65, seed: Array(key.seedRepresentation))
            case .mldsa87(let key): return Self.mldsaPKCS8(oid: KeyOID.mldsa87, seed: Array(key.seedRepresentation))
            case .custom: throw notExportable("as PKCS#8")
            }
        }
    }

    /// The refusal to export a key held outside Coffer, `form` naming the form asked for.
    package func notExportable(_ form: String) -> CofferCryptoError {
        CofferCryptoError(
            .keyNotExportable,
            "expected a private key Coffer holds to export \(form), found \(algorithm) key \(verifyingKey.fingerprint.keyID), held outside Coffer (a token, the Secure Enclave), which only signs there"
        )
    }

    private static func mldsaPKCS8(oid: ASN1ObjectIdentifier, seed: [UInt8]) -> [UInt8] {
        var coder = DER.Serializer()
        // invariant: serialising a structure we built from a valid seed cannot fail.
        let inner = (try? MLDSAPrivateKeyEncoding.encode(seed: seed)) ?? []
        try? coder.serialize(OneAsymmetricKey(algorithm: AlgorithmIdentifier(algorithm: oid), privateKey: inner))
        return coder.serializedBytes
    }
}
