import CofferCore
import CofferCrypto
import Crypto
import _CryptoExtras
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JSON Web Keys: RSA and EC (RFC 7517/7518), Ed25519 as OKP (RFC 8037), and ML-DSA as AKP
/// (draft-ietf-cose-dilithium: `pub` is the raw public key, `priv` the 32-byte seed).
enum JWKCodec {
    struct Fields: Codable {
        var kty: String?
        var crv: String?
        var alg: String?
        var kid: String?
        var x: String?
        var y: String?
        var d: String?
        var n: String?
        var e: String?
        var p: String?
        var q: String?
        var dp: String?
        var dq: String?
        var qi: String?
        var pub: String?
        var priv: String?
        var keys: [Fields]?
    }

    static func read(_ text: String, allowingLegacyRSA: Bool) throws(CofferFormatsError) -> ImportedKey {
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(text.utf8))
        } catch {
            throw CofferFormatsError(.malformedKey, "found text that starts like JSON but is not a valid JWK object")
        }
        if fields.keys != nil {
            throw CofferFormatsError(.unsupported, "found a JWK Set ({\"keys\": [...]}); extract the one key you need")
        }
        guard let kty = fields.kty else { throw CofferFormatsError(.malformedKey, "the JWK has no \"kty\" member") }
        func bytes(_ name: String, _ value: String?, count: Int? = nil) throws(CofferFormatsError) -> [UInt8] {
            guard let value else { throw CofferFormatsError(.malformedKey, "the \(kty) JWK has no \"\(name)\" member") }
            let decoded: [UInt8]
            do { decoded = try Base64.decodeURLSafe(value) } catch {
                throw CofferFormatsError(.malformedKey, "the JWK's \"\(name)\" is not unpadded base64url: \(error.reason)", underlying: error)
            }
            if let count, decoded.count != count {
                throw CofferFormatsError(.malformedKey, "expected the JWK's \"\(name)\" to be \(count) bytes, found \(decoded.count)")
            }
            return decoded
        }
        do {
            switch kty {
            case "RSA":
                let n = try bytes("n", fields.n)
                let e = try bytes("e", fields.e)
                if fields.d != nil {
                    let key = try _RSA.Signing.PrivateKey(
                        n: n, e: e, d: try bytes("d", fields.d), p: try bytes("p", fields.p), q: try bytes("q", fields.q)
                    )
                    return ImportedKey(key: .signing(try SigningKey(.rsa(key))), format: .jwk, encoding: .pem)
                }
                let key = try _RSA.Signing.PublicKey(n: n, e: e)
                return ImportedKey(key: .verifying(try VerifyingKey(.rsa(key), allowingLegacyRSA: allowingLegacyRSA)), format: .jwk, encoding: .pem)
            case "EC":
                let size: Int
                switch fields.crv {
                case "P-256": size = 32
                case "P-384": size = 48
                case "P-521": size = 66
                default: throw CofferFormatsError(.unsupported, "unsupported JWK curve \(fields.crv ?? "(none)")")
                }
                let point = [0x04] + (try bytes("x", fields.x, count: size)) + (try bytes("y", fields.y, count: size))
                let publicKey: VerifyingKey
                switch size {
                case 32: publicKey = try VerifyingKey(.p256(P256.Signing.PublicKey(x963Representation: point)))
                case 48: publicKey = try VerifyingKey(.p384(P384.Signing.PublicKey(x963Representation: point)))
                default: publicKey = try VerifyingKey(.p521(P521.Signing.PublicKey(x963Representation: point)))
                }
                guard fields.d != nil else { return ImportedKey(key: .verifying(publicKey), format: .jwk, encoding: .pem) }
                let d = try bytes("d", fields.d, count: size)
                let key: SigningKey
                switch size {
                case 32: key = try SigningKey(.p256(P256.Signing.PrivateKey(rawRepresentation: d)))
                case 48: key = try SigningKey(.p384(P384.Signing.PrivateKey(rawRepresentation: d)))
                default: key = try SigningKey(.p521(P521.Signing.PrivateKey(rawRepresentation: d)))
                }
                guard key.verifyingKey == publicKey else {
                    throw CofferFormatsError(.malformedKey, "the JWK's \"x\"/\"y\" do not belong to its \"d\"")
                }
                return ImportedKey(key: .signing(key), format: .jwk, encoding: .pem)
            case "OKP":
                guard fields.crv == "Ed25519" else {
                    throw CofferFormatsError(.unsupported, "unsupported OKP curve \(fields.crv ?? "(none)"); Coffer signs with Ed25519")
                }
                let publicKey = try VerifyingKey(.ed25519(Curve25519.Signing.PublicKey(rawRepresentation: try bytes("x", fields.x, count: 32))))
                guard fields.d != nil else { return ImportedKey(key: .verifying(publicKey), format: .jwk, encoding: .pem) }
                let key = try SigningKey(.ed25519(Curve25519.Signing.PrivateKey(rawRepresentation: try bytes("d", fields.d, count: 32))))
                guard key.verifyingKey == publicKey else {
                    throw CofferFormatsError(.malformedKey, "the JWK's \"x\" does not belong to its \"d\"")
                }
                return ImportedKey(key: .signing(key), format: .jwk, encoding: .pem)
            case "AKP":
                let publicBytes = try bytes("pub", fields.pub)
                let publicKey: VerifyingKey
                switch fields.alg {
                case "ML-DSA-65": publicKey = try VerifyingKey(.mldsa65(MLDSA65.PublicKey(rawRepresentation: publicBytes)))
                case "ML-DSA-87": publicKey = try VerifyingKey(.mldsa87(MLDSA87.PublicKey(rawRepresentation: publicBytes)))
                default: throw CofferFormatsError(.unsupported, "unsupported AKP algorithm \(fields.alg ?? "(none)")")
                }
                guard fields.priv != nil else { return ImportedKey(key: .verifying(publicKey), format: .jwk, encoding: .pem) }
                let seed = try bytes("priv", fields.priv, count: 32)
                let key: SigningKey = fields.alg == "ML-DSA-65"
                    ? try SigningKey(.mldsa65(MLDSA65.PrivateKey(seedRepresentation: seed, publicKey: nil)))
                    : try SigningKey(.mldsa87(MLDSA87.PrivateKey(seedRepresentation: seed, publicKey: nil)))
                guard key.verifyingKey == publicKey else {
                    throw CofferFormatsError(.malformedKey, "the JWK's \"pub\" does not belong to its \"priv\"")
                }
                return ImportedKey(key: .signing(key), format: .jwk, encoding: .pem)
            default:
                throw CofferFormatsError(.unsupported, "unsupported JWK key type \"\(kty)\"")
            }
        } catch let error as CofferFormatsError {
            throw error
        } catch let error as CofferCryptoError {
            throw CofferFormatsError(.malformedKey, "JWK: \(error.reason)", underlying: error)
        } catch {
            throw CofferFormatsError(.malformedKey, "the \(kty) JWK holds an invalid key")
        }
    }

    static func write(public key: VerifyingKey) throws(CofferFormatsError) -> [UInt8] {
        var fields = Fields()
        fields.kid = key.fingerprint.keyID
        switch key.underlying {
        case .rsa(let rsa):
            guard let primitives = try? rsa.getKeyPrimitives() else {
                throw CofferFormatsError(.malformedKey, "could not read the RSA key's modulus and exponent")
            }
            fields.kty = "RSA"
            fields.n = Base64.encodeURLSafe(Array(primitives.modulus).drop { $0 == 0 })
            fields.e = Base64.encodeURLSafe(Array(primitives.publicExponent).drop { $0 == 0 })
        case .p256, .p384, .p521:
            let point = try AppleCodec.publicBytes(key)
            let size = (point.count - 1) / 2
            fields.kty = "EC"
            fields.crv = key.algorithm.description
            fields.x = Base64.encodeURLSafe(point[1...size])
            fields.y = Base64.encodeURLSafe(point[(size + 1)...])
        case .ed25519(let ed):
            fields.kty = "OKP"
            fields.crv = "Ed25519"
            fields.x = Base64.encodeURLSafe(Array(ed.rawRepresentation))
        case .mldsa65(let ml):
            fields.kty = "AKP"
            fields.alg = "ML-DSA-65"
            fields.pub = Base64.encodeURLSafe(Array(ml.rawRepresentation))
        case .mldsa87(let ml):
            fields.kty = "AKP"
            fields.alg = "ML-DSA-87"
            fields.pub = Base64.encodeURLSafe(Array(ml.rawRepresentation))
        }
        return encode(fields)
    }

    static func write(private key: SigningKey) throws(CofferFormatsError) -> [UInt8] {
        try key.requireExportable("as a JWK")
        guard var fields = try? JSONDecoder().decode(Fields.self, from: Data(write(public: key.verifyingKey))) else {
            throw CofferFormatsError(.malformedKey, "could not build the JWK")
        }
        switch key.underlying {
        case .rsa(let rsa):
            guard let structure = try? RSAPrivateKeyStructure(derEncoded: Array(rsa.derRepresentation)) else {
                throw CofferFormatsError(.malformedKey, "could not read the RSA key's private parameters")
            }
            fields.d = Base64.encodeURLSafe(structure.privateExponent.drop { $0 == 0 })
            fields.p = Base64.encodeURLSafe(structure.prime1.drop { $0 == 0 })
            fields.q = Base64.encodeURLSafe(structure.prime2.drop { $0 == 0 })
            fields.dp = Base64.encodeURLSafe(structure.exponent1.drop { $0 == 0 })
            fields.dq = Base64.encodeURLSafe(structure.exponent2.drop { $0 == 0 })
            fields.qi = Base64.encodeURLSafe(structure.coefficient.drop { $0 == 0 })
        case .p256(let ec): fields.d = Base64.encodeURLSafe(Array(ec.rawRepresentation))
        case .p384(let ec): fields.d = Base64.encodeURLSafe(Array(ec.rawRepresentation))
        case .p521(let ec): fields.d = Base64.encodeURLSafe(Array(ec.rawRepresentation))
        case .ed25519(let ed): fields.d = Base64.encodeURLSafe(Array(ed.rawRepresentation))
        case .mldsa65(let ml): fields.priv = Base64.encodeURLSafe(Array(ml.seedRepresentation))
        case .mldsa87(let ml): fields.priv = Base64.encodeURLSafe(Array(ml.seedRepresentation))
        case .custom: throw CofferFormatsError(.keyNotExportable, "a key held outside Coffer has no JWK")
        }
        return encode(fields)
    }

    fileprivate static func encode(_ fields: Fields) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // invariant: a struct of optional strings always encodes.
        return Array((try? encoder.encode(fields)) ?? Data()) + [UInt8(ascii: "\n")]
    }
}

/// X25519 keys as JWK (RFC 8037 §2: `{"kty":"OKP","crv":"X25519","x":…[,"d":…]}`), for encryption
/// recipients and identities.
extension JWKCodec {
    /// The X25519 key a JWK holds, public half and (when it has `d`) private key; nil for a JWK of
    /// another curve or type.
    static func readX25519(_ bytes: [UInt8]) throws(CofferFormatsError) -> (Curve25519.KeyAgreement.PublicKey, Curve25519.KeyAgreement.PrivateKey?)? {
        guard let text = String(validating: bytes, as: UTF8.self), text.drop(while: \.isWhitespace).first == "{",
            let fields = try? JSONDecoder().decode(Fields.self, from: Data(text.utf8)),
            fields.kty == "OKP", fields.crv == "X25519"
        else { return nil }
        func member(_ name: String, _ value: String?) throws(CofferFormatsError) -> [UInt8] {
            guard let value else { throw CofferFormatsError(.malformedKey, "the X25519 JWK has no \"\(name)\" member") }
            guard let decoded = try? Base64.decodeURLSafe(value), decoded.count == 32 else {
                throw CofferFormatsError(.malformedKey, "the X25519 JWK's \"\(name)\" is not 32 bytes of unpadded base64url")
            }
            return decoded
        }
        let x = try member("x", fields.x)
        guard let publicKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: x) else {
            throw CofferFormatsError(.malformedKey, "the X25519 JWK's \"x\" is not a public key")
        }
        guard fields.d != nil else { return (publicKey, nil) }
        var d = try member("d", fields.d)
        defer { SecretBytes.wipe(&d) }
        guard let privateKey = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: d) else {
            throw CofferFormatsError(.malformedKey, "the X25519 JWK's \"d\" is not a private key")
        }
        guard privateKey.publicKey.rawRepresentation == publicKey.rawRepresentation else {
            throw CofferFormatsError(.malformedKey, "the JWK's \"x\" does not belong to its \"d\"")
        }
        return (publicKey, privateKey)
    }

    /// An X25519 key as a JWK, with `d` when `privateKey` is given; `kid` is the key id Coffer prints.
    static func writeX25519(public publicKey: Curve25519.KeyAgreement.PublicKey, private privateKey: Curve25519.KeyAgreement.PrivateKey? = nil) -> [UInt8] {
        var fields = Fields()
        fields.kty = "OKP"
        fields.crv = "X25519"
        fields.kid = KeyFingerprint(subjectPublicKeyInfo: Array(publicKey.derRepresentation)).keyID
        fields.x = Base64.encodeURLSafe(Array(publicKey.rawRepresentation))
        if let privateKey { fields.d = Base64.encodeURLSafe(Array(privateKey.rawRepresentation)) }
        return encode(fields)
    }
}
