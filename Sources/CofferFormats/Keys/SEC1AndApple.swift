import CofferCore
import CofferCrypto
import Crypto
import SwiftASN1
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SEC 1 `ECPrivateKey` (`-----BEGIN EC PRIVATE KEY-----`), as `openssl ecparam -genkey` and older tools write.
enum SEC1Codec {
    static func read(_ der: [UInt8]) throws -> SigningKey {
        let structure = try ECPrivateKeyStructure(derEncoded: der)
        let curve: ASN1ObjectIdentifier
        if let named = structure.curve {
            curve = named
        } else {
            switch structure.privateKey.count {
            case 32: curve = KeyOID.secp256r1
            case 48: curve = KeyOID.secp384r1
            case 66: curve = KeyOID.secp521r1
            default: throw CofferFormatsError(.malformedKey, "a SEC1 key without a named curve and with a \(structure.privateKey.count)-byte scalar")
            }
        }
        let key: SigningKey
        switch curve {
        case KeyOID.secp256r1: key = try SigningKey(.p256(P256.Signing.PrivateKey(rawRepresentation: structure.privateKey)))
        case KeyOID.secp384r1: key = try SigningKey(.p384(P384.Signing.PrivateKey(rawRepresentation: structure.privateKey)))
        case KeyOID.secp521r1: key = try SigningKey(.p521(P521.Signing.PrivateKey(rawRepresentation: structure.privateKey)))
        default: throw CofferFormatsError(.unsupported, "unsupported elliptic curve \(curve)")
        }
        if let publicKey = structure.publicKey, !ConstantTime.equals(publicKey, try AppleCodec.publicBytes(key.verifyingKey)) {
            throw CofferFormatsError(.malformedKey, "the public key stored in the SEC1 structure does not belong to its private key")
        }
        return key
    }

    static func write(_ key: SigningKey) throws(CofferFormatsError) -> [UInt8] {
        try key.requireExportable("as SEC1")
        let scalar: [UInt8]
        let curve: ASN1ObjectIdentifier
        switch key.underlying {
        case .p256(let ec): (scalar, curve) = (Array(ec.rawRepresentation), KeyOID.secp256r1)
        case .p384(let ec): (scalar, curve) = (Array(ec.rawRepresentation), KeyOID.secp384r1)
        case .p521(let ec): (scalar, curve) = (Array(ec.rawRepresentation), KeyOID.secp521r1)
        default: throw CofferFormatsError(.wrongKeyKind, "SEC1 holds EC keys; this is an \(key.algorithm) key")
        }
        return derBytes(ECPrivateKeyStructure(privateKey: scalar, curve: curve, publicKey: try AppleCodec.publicBytes(key.verifyingKey)))
    }
}

/// The bytes of Apple's `SecKeyCopyExternalRepresentation` (and `SecKeyCreateWithData`): PKCS#1 DER for
/// RSA, ANSI X9.63 `04‖X‖Y` for EC public keys and `04‖X‖Y‖K` for EC private keys.
enum AppleCodec {
    /// Reads raw EC bytes (RSA's PKCS#1 DER is read as PKCS#1). Returns nil when the bytes do not look
    /// like an X9.63 key at all.
    static func read(_ bytes: [UInt8], keyClass: AppleKeyClass?) throws(CofferFormatsError) -> ImportedKey.Key? {
        let candidates: [(Int, KeyAlgorithm, AppleKeyClass)] = [
            (65, .p256, .publicKey), (97, .p384, .publicKey), (133, .p521, .publicKey),
            (97, .p256, .privateKey), (145, .p384, .privateKey), (199, .p521, .privateKey),
        ]
        var matching = candidates.filter { $0.0 == bytes.count }
        guard !matching.isEmpty else { return nil }
        if let keyClass {
            matching = matching.filter { $0.2 == keyClass }
            guard !matching.isEmpty else {
                throw CofferFormatsError(.malformedKey, "\(bytes.count) bytes cannot be an Apple EC \(keyClass.rawValue) key")
            }
        } else if matching.count > 1 {
            throw CofferFormatsError(
                .ambiguousKey,
                "97 bytes of Apple key data are either a P-384 public key or a P-256 private key; say which key class it is"
            )
        }
        let (_, algorithm, keyClassFound) = matching[0]
        do {
            switch (algorithm, keyClassFound) {
            case (.p256, .publicKey): return .verifying(try VerifyingKey(.p256(P256.Signing.PublicKey(x963Representation: bytes))))
            case (.p384, .publicKey): return .verifying(try VerifyingKey(.p384(P384.Signing.PublicKey(x963Representation: bytes))))
            case (.p521, .publicKey): return .verifying(try VerifyingKey(.p521(P521.Signing.PublicKey(x963Representation: bytes))))
            case (.p256, .privateKey): return .signing(try SigningKey(.p256(P256.Signing.PrivateKey(x963Representation: bytes))))
            case (.p384, .privateKey): return .signing(try SigningKey(.p384(P384.Signing.PrivateKey(x963Representation: bytes))))
            case (.p521, .privateKey): return .signing(try SigningKey(.p521(P521.Signing.PrivateKey(x963Representation: bytes))))
            default: return nil
            }
        } catch {
            throw CofferFormatsError(.malformedKey, "the Apple \(algorithm) \(keyClassFound.rawValue) key is invalid (point not on the curve, or scalar out of range)")
        }
    }

    /// `04‖X‖Y` for EC keys.
    static func publicBytes(_ key: VerifyingKey) throws(CofferFormatsError) -> [UInt8] {
        switch key.underlying {
        case .p256(let ec): return Array(ec.x963Representation)
        case .p384(let ec): return Array(ec.x963Representation)
        case .p521(let ec): return Array(ec.x963Representation)
        case .rsa(let rsa): return Array(rsa.pkcs1DERRepresentation)
        default:
            throw CofferFormatsError(.unsupported, "Apple's SecKey has no external representation for \(key.algorithm) keys")
        }
    }

    static func privateBytes(_ key: SigningKey) throws(CofferFormatsError) -> [UInt8] {
        try key.requireExportable("in Apple's external representation")
        switch key.underlying {
        case .p256(let ec): return Array(ec.x963Representation)
        case .p384(let ec): return Array(ec.x963Representation)
        case .p521(let ec): return Array(ec.x963Representation)
        case .rsa(let rsa): return Array(rsa.derRepresentation)
        default:
            throw CofferFormatsError(.unsupported, "Apple's SecKey has no external representation for \(key.algorithm) keys")
        }
    }
}
