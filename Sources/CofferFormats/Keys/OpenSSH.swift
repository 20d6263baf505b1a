import CofferCore
import CofferCrypto
import Crypto
import _CryptoExtras
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// OpenSSH public-key lines (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4): `TYPE BASE64 [COMMENT]`.
enum OpenSSHCodec {
    static let keyTypes: Set<String> = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa"]

    static func write(_ key: VerifyingKey, comment: String?) throws(CofferFormatsError) -> String {
        var blob: [UInt8] = []
        let type: String
        switch key.underlying {
        case .ed25519(let ed):
            type = "ssh-ed25519"
            append(string: Array(type.utf8), to: &blob)
            append(string: Array(ed.rawRepresentation), to: &blob)
        case .p256(let ec): type = try ecdsa(&blob, curve: "nistp256", point: Array(ec.x963Representation))
        case .p384(let ec): type = try ecdsa(&blob, curve: "nistp384", point: Array(ec.x963Representation))
        case .p521(let ec): type = try ecdsa(&blob, curve: "nistp521", point: Array(ec.x963Representation))
        case .rsa(let rsa):
            type = "ssh-rsa"
            guard let primitives = try? rsa.getKeyPrimitives() else {
                throw CofferFormatsError(.malformedKey, "could not read the RSA key's modulus and exponent")
            }
            append(string: Array(type.utf8), to: &blob)
            append(string: mpint(Array(primitives.publicExponent)), to: &blob)
            append(string: mpint(Array(primitives.modulus)), to: &blob)
        case .mldsa65, .mldsa87:
            throw CofferFormatsError(.unsupported, "OpenSSH has no public-key format for \(key.algorithm)")
        }
        let comment = comment.map { " " + $0.replacingNewlines() } ?? ""
        return "\(type) \(Base64.encode(blob))\(comment)"
    }

    private static func ecdsa(_ blob: inout [UInt8], curve: String, point: [UInt8]) throws(CofferFormatsError) -> String {
        let type = "ecdsa-sha2-\(curve)"
        append(string: Array(type.utf8), to: &blob)
        append(string: Array(curve.utf8), to: &blob)
        append(string: point, to: &blob)
        return type
    }

    static func read(_ line: String, allowingLegacyRSA: Bool) throws(CofferFormatsError) -> ImportedKey {
        let fields = line.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, let blob = try? Base64.decode(fields[1]) else {
            throw CofferFormatsError(.malformedKey, "expected an OpenSSH public-key line 'TYPE BASE64 [COMMENT]'")
        }
        var reader = Reader(bytes: blob[...])
        do {
            let type = String(decoding: try reader.string(), as: UTF8.self)
            guard type == fields[0] else { throw CofferFormatsError(.malformedKey, "the OpenSSH key's type field says \(type), its blob another") }
            let key: VerifyingKey
            switch type {
            case "ssh-ed25519":
                key = try VerifyingKey(.ed25519(Curve25519.Signing.PublicKey(rawRepresentation: try reader.string())))
            case "ecdsa-sha2-nistp256":
                _ = try reader.string()
                key = try VerifyingKey(.p256(P256.Signing.PublicKey(x963Representation: try reader.string())))
            case "ecdsa-sha2-nistp384":
                _ = try reader.string()
                key = try VerifyingKey(.p384(P384.Signing.PublicKey(x963Representation: try reader.string())))
            case "ecdsa-sha2-nistp521":
                _ = try reader.string()
                key = try VerifyingKey(.p521(P521.Signing.PublicKey(x963Representation: try reader.string())))
            case "ssh-rsa":
                let e = try reader.string().drop { $0 == 0 }
                let n = try reader.string().drop { $0 == 0 }
                key = try VerifyingKey(.rsa(_RSA.Signing.PublicKey(n: Array(n), e: Array(e))), allowingLegacyRSA: allowingLegacyRSA)
            default:
                throw CofferFormatsError(.unsupported, "OpenSSH key type \(type) is not supported")
            }
            guard reader.bytes.isEmpty else { throw CofferFormatsError(.malformedKey, "the OpenSSH key blob has trailing bytes") }
            return ImportedKey(key: .verifying(key), format: .openSSH, encoding: .pem)
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            throw CofferFormatsError(.malformedKey, "the OpenSSH \(fields[0]) key is invalid")
        }
    }

    private static func append(string: [UInt8], to blob: inout [UInt8]) {
        blob += BigEndian.bytes(UInt32(string.count)) + string
    }

    /// RFC 4251 §5 mpint: big-endian, no leading zeros, a zero byte added when the top bit is set.
    private static func mpint(_ magnitude: [UInt8]) -> [UInt8] {
        let trimmed = Array(magnitude.drop { $0 == 0 })
        if let first = trimmed.first, first & 0x80 != 0 { return [0] + trimmed }
        return trimmed
    }

    private struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func string() throws(CofferFormatsError) -> [UInt8] {
            guard bytes.count >= 4 else { throw CofferFormatsError(.malformedKey, "the OpenSSH key blob is truncated") }
            let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            bytes = bytes.dropFirst(4)
            guard length <= bytes.count else { throw CofferFormatsError(.malformedKey, "the OpenSSH key blob is truncated") }
            let value = Array(bytes.prefix(length))
            bytes = bytes.dropFirst(length)
            return value
        }
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
