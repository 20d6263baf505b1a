import CofferCore
import Crypto
import _CryptoExtras
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AES-256-CBC with PKCS#7 padding over a stream, for the legacy formats (RNCryptor v3, OpenSSL `enc`):
/// whole blocks are processed as they arrive, chaining the IV from the last ciphertext block, and only
/// the final block is padded. Everything cryptographic is swift-crypto's `AES._CBC`.
struct CBCEncryptor {
    private let key: SymmetricKey
    private var iv: [UInt8]
    private var carry: [UInt8] = []

    init(key: SymmetricKey, iv: [UInt8]) {
        self.key = key
        self.iv = iv
    }

    mutating func update(_ chunk: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        carry.append(contentsOf: chunk)
        let whole = carry.count / 16 * 16
        guard whole > 0 else { return }
        let ciphertext = try AES._CBC.encrypt(carry[0..<whole], using: key, iv: AES._CBC.IV(ivBytes: iv), noPadding: true)
        iv = Array(ciphertext.suffix(16))
        carry.removeFirst(whole)
        try ciphertext.withUnsafeBytes(output)
    }

    mutating func finish(output: (UnsafeRawBufferPointer) throws -> Void) throws {
        let ciphertext = try AES._CBC.encrypt(carry, using: key, iv: AES._CBC.IV(ivBytes: iv))
        try ciphertext.withUnsafeBytes(output)
    }
}

/// The inverse of ``CBCEncryptor``. It holds back the last `trailer` bytes of the input (RNCryptor's
/// HMAC) plus one block, since the final block carries the padding.
struct CBCDecryptor {
    private let key: SymmetricKey
    private var iv: [UInt8]
    private let trailer: Int
    private(set) var carry: [UInt8] = []

    init(key: SymmetricKey, iv: [UInt8], trailer: Int) {
        self.key = key
        self.iv = iv
        self.trailer = trailer
    }

    /// Feeds ciphertext; `consumed` receives every ciphertext byte as it is committed (for a MAC).
    mutating func update(
        _ chunk: UnsafeRawBufferPointer,
        consumed: (UnsafeRawBufferPointer) -> Void,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        carry.append(contentsOf: chunk)
        let available = carry.count - trailer - 16
        let whole = available / 16 * 16
        guard whole > 0 else { return }
        carry[0..<whole].withUnsafeBytes(consumed)
        let plaintext = try AES._CBC.decrypt(carry[0..<whole], using: key, iv: AES._CBC.IV(ivBytes: iv), noPadding: true)
        iv = Array(carry[(whole - 16)..<whole])
        carry.removeFirst(whole)
        try plaintext.withUnsafeBytes(output)
    }

    /// Decrypts the held-back final blocks and returns the trailer. Throws for bad padding or a length
    /// that is not whole blocks.
    mutating func finish(
        consumed: (UnsafeRawBufferPointer) -> Void,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> [UInt8] {
        let body = carry.count - trailer
        guard body >= 16, body % 16 == 0 else {
            throw CofferFormatsError(.malformedCiphertext, "the ciphertext is not a whole number of AES blocks (truncated?)")
        }
        carry[0..<body].withUnsafeBytes(consumed)
        let plaintext = try AES._CBC.decrypt(carry[0..<body], using: key, iv: AES._CBC.IV(ivBytes: iv))
        try plaintext.withUnsafeBytes(output)
        return Array(carry[body...])
    }
}
