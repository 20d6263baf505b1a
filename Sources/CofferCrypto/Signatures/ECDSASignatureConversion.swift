import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Converts ECDSA signatures between DER (`SEQUENCE { r, s }`, OpenSSL, X.509) and raw `r‖s` (IEEE P1363,
/// JOSE, WebCrypto, CryptoKit), through swift-crypto's strict parsers.
public enum ECDSASignatureConversion {
    /// `r‖s` from DER. - Throws: ``CofferCryptoError`` `.invalidArgument` for malformed DER or a non-ECDSA key type.
    public static func raw(fromDER der: [UInt8], algorithm: KeyAlgorithm) throws(CofferCryptoError) -> [UInt8] {
        do {
            switch algorithm {
            case .p256: return Array(try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation)
            case .p384: return Array(try P384.Signing.ECDSASignature(derRepresentation: der).rawRepresentation)
            case .p521: return Array(try P521.Signing.ECDSASignature(derRepresentation: der).rawRepresentation)
            default: throw CofferCryptoError(.invalidArgument, "\(algorithm) signatures are not ECDSA")
            }
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw CofferCryptoError(.invalidArgument, "expected a DER ECDSA \(algorithm) signature, found bytes that do not parse as one")
        }
    }

    /// DER from `r‖s`. - Throws: ``CofferCryptoError`` `.invalidArgument` for a wrong length.
    public static func der(fromRaw raw: [UInt8], algorithm: KeyAlgorithm) throws(CofferCryptoError) -> [UInt8] {
        do {
            switch algorithm {
            case .p256: return Array(try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
            case .p384: return Array(try P384.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
            case .p521: return Array(try P521.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
            default: throw CofferCryptoError(.invalidArgument, "\(algorithm) signatures are not ECDSA")
            }
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw CofferCryptoError(.invalidArgument, "expected a \(algorithm == .p256 ? 64 : algorithm == .p384 ? 96 : 132)-byte r||s \(algorithm) signature, found \(raw.count) bytes")
        }
    }
}
