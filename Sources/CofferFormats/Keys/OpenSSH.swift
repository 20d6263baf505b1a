import CofferCore
public import CofferCrypto
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
        let (type, blob) = try wire(key)
        let comment = comment.map { " " + $0.replacingNewlines() } ?? ""
        return "\(type) \(Base64.encode(blob))\(comment)"
    }

    /// The key's SSH wire encoding (RFC 4253 §6.6): what an OpenSSH line carries in base64, and what
    /// `ssh-keygen -l` hashes.
    static func wire(_ key: VerifyingKey) throws(CofferFormatsError) -> (type: String, blob: [UInt8]) {
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
        return (type, blob)
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
        guard fields.count >= 2, let blob = try? Base64.decode(fields[1].trimmingCharacters(in: .whitespacesAndNewlines)) else {
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
            let comment = fields.count > 2 ? String(fields[2]).trimmingCharacters(in: .whitespaces) : nil
            return ImportedKey(key: .verifying(key), format: .openSSH, encoding: .pem, comment: comment?.isEmpty == false ? comment : nil)
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

    // MARK: - Private keys (PROTOCOL.key, `openssh-key-v1`)

    /// Reads an unencrypted `openssh-key-v1` private key (ssh-keygen's default format since OpenSSH 7.8):
    /// Ed25519, ECDSA P-256/384/521 or RSA. The public key it lists must be the private key's, and the
    /// check numbers and padding must be intact.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for a passphrase-protected key (naming the
    ///   ssh-keygen command that removes the passphrase from a copy), `.malformedKey` for damage.
    static func readPrivate(_ der: [UInt8]) throws(CofferFormatsError) -> ImportedKey {
        let magic = Array("openssh-key-v1".utf8) + [0]
        guard der.starts(with: magic) else { throw CofferFormatsError(.malformedKey, "the OpenSSH private key does not start with 'openssh-key-v1'") }
        var reader = Reader(bytes: der[magic.count...])
        let cipher = String(decoding: try reader.string(), as: UTF8.self)
        let kdf = String(decoding: try reader.string(), as: UTF8.self)
        _ = try reader.string()  // KDF options
        guard cipher == "none" && kdf == "none" else {
            throw CofferFormatsError(
                .unsupported,
                "the OpenSSH private key is protected by a passphrase (\(cipher), \(kdf)), which Coffer does not read; "
                    + "decrypt a copy with 'cp KEY KEY.plain && ssh-keygen -p -N \"\" -f KEY.plain', read that copy "
                    + "(store it as password-encrypted PKCS#8), and delete KEY.plain"
            )
        }
        guard try reader.uint32() == 1 else { throw CofferFormatsError(.unsupported, "the OpenSSH file holds several keys; Coffer reads files of one") }
        let publicBlob = try reader.string()
        var section = Reader(bytes: try reader.string()[...])
        guard reader.bytes.isEmpty else { throw CofferFormatsError(.malformedKey, "the OpenSSH private key has trailing bytes") }
        guard try section.uint32() == section.uint32() else {
            throw CofferFormatsError(.malformedKey, "the OpenSSH private key's check numbers differ: it is damaged")
        }
        let type = String(decoding: try section.string(), as: UTF8.self)
        let key: SigningKey
        do {
            switch type {
            case "ssh-ed25519":
                let publicKey = try section.string()
                let secret = try section.string()
                guard publicKey.count == 32, secret.count == 64, Array(secret.suffix(32)) == publicKey else {
                    throw CofferFormatsError(.malformedKey, "the OpenSSH Ed25519 private key is damaged")
                }
                key = try SigningKey(.ed25519(Curve25519.Signing.PrivateKey(rawRepresentation: secret.prefix(32))))
            case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521":
                _ = try section.string()  // curve name, implied by the type
                _ = try section.string()  // public point, checked against the private scalar below
                let scalar = Array(try section.string().drop { $0 == 0 })
                switch type {
                case "ecdsa-sha2-nistp256": key = try SigningKey(.p256(P256.Signing.PrivateKey(rawRepresentation: padded(scalar, to: 32))))
                case "ecdsa-sha2-nistp384": key = try SigningKey(.p384(P384.Signing.PrivateKey(rawRepresentation: padded(scalar, to: 48))))
                default: key = try SigningKey(.p521(P521.Signing.PrivateKey(rawRepresentation: padded(scalar, to: 66))))
                }
            case "ssh-rsa":
                let n = try section.string(), e = try section.string(), d = try section.string()
                _ = try section.string()  // iqmp, which swift-crypto recomputes
                let p = try section.string(), q = try section.string()
                key = try SigningKey(.rsa(_RSA.Signing.PrivateKey(n: n, e: e, d: d, p: p, q: q)))
            default:
                throw CofferFormatsError(.unsupported, "OpenSSH key type \(type) is not supported")
            }
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            throw CofferFormatsError(.malformedKey, "the OpenSSH \(type) private key is invalid")
        }
        let comment = String(decoding: try section.string(), as: UTF8.self)
        for (index, byte) in section.bytes.enumerated() where Int(byte) != index + 1 {
            throw CofferFormatsError(.malformedKey, "the OpenSSH private key's padding is damaged")
        }
        guard try wire(key.verifyingKey).blob == publicBlob else {
            throw CofferFormatsError(.malformedKey, "the OpenSSH private key's public half does not match its private key")
        }
        return ImportedKey(key: .signing(key), format: .openSSH, encoding: .pem, comment: comment.isEmpty ? nil : comment)
    }

    private static func padded(_ scalar: [UInt8], to length: Int) throws(CofferFormatsError) -> [UInt8] {
        guard scalar.count <= length else { throw CofferFormatsError(.malformedKey, "the OpenSSH ECDSA private scalar is too long") }
        return [UInt8](repeating: 0, count: length - scalar.count) + scalar
    }

    private struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func uint32() throws(CofferFormatsError) -> UInt32 {
            guard bytes.count >= 4 else { throw CofferFormatsError(.malformedKey, "the OpenSSH key is truncated") }
            let value = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            bytes = bytes.dropFirst(4)
            return value
        }

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

extension VerifyingKey {
    /// `SHA256:` and the unpadded base64 SHA-256 of the key's SSH wire encoding: exactly the fingerprint
    /// `ssh-keygen -l` and `ssh` print for this key.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for a key OpenSSH has no encoding for (ML-DSA).
    public func sshFingerprint() throws(CofferFormatsError) -> String {
        var text = Base64.encode(DigestAlgorithm.sha256.hash(try OpenSSHCodec.wire(self).blob).bytes)
        while text.hasSuffix("=") { text.removeLast() }
        return "SHA256:" + text
    }

    /// The line `ssh-keygen -lf` prints for this key: its size in bits, ``sshFingerprint()``, the
    /// comment (`no comment` when there is none) and the type in capitals.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for a key OpenSSH has no encoding for (ML-DSA).
    public func sshKeygenFingerprintLine(comment: String?) throws(CofferFormatsError) -> String {
        let (bits, type): (Int, String) = switch algorithm {
        case .ed25519: (256, "ED25519")
        case .p256: (256, "ECDSA")
        case .p384: (384, "ECDSA")
        case .p521: (521, "ECDSA")
        case .rsa(let bits): (bits, "RSA")
        case .mldsa65, .mldsa87: (0, "")
        }
        let fingerprint = try sshFingerprint()
        let shown = comment.map { $0.isEmpty ? "no comment" : $0.replacingNewlines() } ?? "no comment"
        return "\(bits) \(fingerprint) \(shown) (\(type))"
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
