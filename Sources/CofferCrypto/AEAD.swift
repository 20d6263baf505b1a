import CofferCore
package import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An authenticated cipher from swift-crypto, for callers that frame their own messages (Coffer's
/// encrypted format is built on it). Keys are 32 bytes, nonces 12, tags 16.
///
/// - Warning: a nonce must never repeat under one key. Prefer `CofferEncryption`, which derives a fresh
///   key per file and counts nonces for you.
public enum AEADAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// AES-256-GCM.
    case aes256GCM = "aes-256-gcm"
    /// ChaCha20-Poly1305 (RFC 8439).
    case chaCha20Poly1305 = "chacha20-poly1305"

    /// Seals `plaintext`, passing ciphertext then the 16-byte tag to `output`.
    public func seal(
        _ plaintext: UnsafeRawBufferPointer,
        key: AEADKey,
        nonce: [UInt8],
        additionalData: [UInt8] = [],
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        switch self {
        case .aes256GCM:
            let box = try AES.GCM.seal(plaintext, using: key.key, nonce: AES.GCM.Nonce(data: nonce), authenticating: additionalData)
            try box.ciphertext.withUnsafeBytes(output)
            try box.tag.withUnsafeBytes(output)
        case .chaCha20Poly1305:
            let box = try ChaChaPoly.seal(plaintext, using: key.key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: additionalData)
            try box.ciphertext.withUnsafeBytes(output)
            try box.tag.withUnsafeBytes(output)
        }
    }

    /// Opens a sealed message; the plaintext reaches `output` only if the tag verified.
    /// - Throws: ``CofferCryptoError`` `.authenticationFailed` for any failure (tag, nonce or length),
    ///   without saying which.
    public func open(
        ciphertext: UnsafeRawBufferPointer,
        tag: UnsafeRawBufferPointer,
        key: AEADKey,
        nonce: [UInt8],
        additionalData: [UInt8] = [],
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let failure = CofferCryptoError(.authenticationFailed, "the message does not authenticate")
        let plaintext: Data
        switch self {
        case .aes256GCM:
            guard let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag),
                let opened = try? AES.GCM.open(box, using: key.key, authenticating: additionalData)
            else { throw failure }
            plaintext = opened
        case .chaCha20Poly1305:
            guard let box = try? ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag),
                let opened = try? ChaChaPoly.open(box, using: key.key, authenticating: additionalData)
            else { throw failure }
            plaintext = opened
        }
        try plaintext.withUnsafeBytes(output)
    }
}

/// A 256-bit AEAD key. Never printed.
public struct AEADKey: Sendable, CustomStringConvertible {
    package let key: SymmetricKey

    /// Wraps 32 bytes. - Throws: ``CofferCryptoError`` `.invalidKey` otherwise.
    public init<Bytes: Collection>(bytes: Bytes) throws(CofferCryptoError) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else { throw CofferCryptoError(.invalidKey, "expected a 32-byte AEAD key, found \(bytes.count) bytes") }
        key = SymmetricKey(data: Array(bytes))
    }

    package init(_ key: SymmetricKey) { self.key = key }

    /// A new random key.
    public static func generate() -> AEADKey { AEADKey(SymmetricKey(size: .bits256)) }

    public var description: String { "AEADKey(256 bits)" }
}
