import CofferCore
import Crypto
import Foundation

/// A 256-bit data key sealed to one device's encryption key with HPKE (RFC 9180), as the registration
/// server answers `POST /data-keys` (docs/SERVER.md, "Data keys"): the key never travels in clear, so
/// logs, proxies and a TLS-terminating load balancer see only the envelope.
///
/// Layout: suite (1 byte: 1 = DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305; 2 =
/// DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM) ‖ encapsulated key (32 or 65 bytes) ‖ sealed key
/// (32 + 16 bytes). HPKE's info is `coffer-data-key v1`; its associated data is the `context` both sides
/// build from the key's id, version and the device's key id, so an envelope cannot be passed off as
/// another key, version or device.
public enum DataKeyEnvelope {
    static var info: Data { Data("coffer-data-key v1".utf8) }

    /// Seals `key` (32 bytes) to `recipient`.
    /// - Throws: ``CofferFormatsError`` `.invalidArgument` for a key that is not 32 bytes.
    public static func seal(_ key: [UInt8], to recipient: RecipientPublicKey, context: [UInt8]) throws(CofferFormatsError) -> [UInt8] {
        guard key.count == 32 else { throw CofferFormatsError(.invalidArgument, "a data key is 32 bytes, found \(key.count)") }
        return try CofferFormatsError.wrapping("sealing the data key") { () throws -> [UInt8] in
            switch recipient {
            case .x25519(let publicKey):
                var sender = try HPKE.Sender(recipientKey: publicKey, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: info)
                return [1] + Array(sender.encapsulatedKey) + Array(try sender.seal(key, authenticating: context))
            case .p256(let publicKey):
                var sender = try HPKE.Sender(recipientKey: publicKey, ciphersuite: .P256_SHA256_AES_GCM_256, info: info)
                return [2] + Array(sender.encapsulatedKey) + Array(try sender.seal(key, authenticating: context))
            }
        }
    }

    /// Opens an envelope with the device's private key.
    /// - Throws: ``CofferFormatsError`` `.malformedCiphertext` for an envelope of the wrong shape or for
    ///   another suite than the key's, `.authenticationFailed` for another device's envelope, a changed
    ///   byte or another context.
    public static func open(_ envelope: [UInt8], with identity: RecipientPrivateKey, context: [UInt8]) throws(CofferFormatsError) -> [UInt8] {
        let authentication = CofferFormatsError(.authenticationFailed, "the data key does not open with this device's key (another device's, or altered)")
        switch (envelope.first, identity) {
        case (1, .x25519(let privateKey)):
            guard envelope.count == 1 + 32 + 48 else { throw CofferFormatsError(.malformedCiphertext, "an X25519 data-key envelope is 81 bytes, found \(envelope.count)") }
            guard var recipient = try? HPKE.Recipient(
                privateKey: privateKey, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: info, encapsulatedKey: Data(envelope[1..<33])
            ), let key = try? recipient.open(envelope[33...], authenticating: context) else { throw authentication }
            return Array(key)
        case (2, .p256(let privateKey)):
            guard envelope.count == 1 + 65 + 48 else { throw CofferFormatsError(.malformedCiphertext, "a P-256 data-key envelope is 114 bytes, found \(envelope.count)") }
            guard var recipient = try? HPKE.Recipient(
                privateKey: privateKey, ciphersuite: .P256_SHA256_AES_GCM_256, info: info, encapsulatedKey: Data(envelope[1..<66])
            ), let key = try? recipient.open(envelope[66...], authenticating: context) else { throw authentication }
            return Array(key)
        default:
            throw CofferFormatsError(.malformedCiphertext, "the data-key envelope's suite (\(envelope.first.map(String.init) ?? "none")) does not match this device's key")
        }
    }

    /// The associated data both sides bind an envelope to: `<dataKeyId>:<version>:<deviceKeyId>`.
    public static func context(dataKeyID: String, version: Int64, deviceKeyID: String) -> [UInt8] {
        Array("\(dataKeyID):\(version):\(deviceKeyID)".utf8)
    }
}
