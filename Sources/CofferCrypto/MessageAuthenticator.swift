import CofferCore
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Computes an HMAC incrementally: feed it data with `update`, then call ``finalize(truncatedTo:)``.
///
/// ```swift
/// let key = try MACKey.generate()
/// var authenticator = MessageAuthenticator(.hmacSHA256, key: key)
/// authenticator.update(requestBody)
/// let tag = try authenticator.finalize()
/// ```
///
/// It is a value: a copy carries on from where the original stood and neither sees the other's updates.
/// A computation keyed once and copied for each message skips hashing the key's padding blocks every
/// time (what a server checking many requests under one key wants).
public struct MessageAuthenticator: Sendable {
    /// The algorithm being computed.
    public let algorithm: MACAlgorithm
    private var state: any MACState

    /// Starts a computation under `key`.
    public init(_ algorithm: MACAlgorithm, key: MACKey) {
        self.algorithm = algorithm
        self.state = switch algorithm {
        case .hmacSHA256: MACStateOf<SHA256>(key: key.symmetricKey)
        case .hmacSHA384: MACStateOf<SHA384>(key: key.symmetricKey)
        case .hmacSHA512: MACStateOf<SHA512>(key: key.symmetricKey)
        case .insecureHMACSHA1: MACStateOf<Insecure.SHA1>(key: key.symmetricKey)
        }
    }

    /// Adds the bytes in a buffer.
    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        state.update(buffer)
    }

    /// Adds a sequence of bytes: `Data`, `[UInt8]`, a slice…
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if handled == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// Adds the UTF-8 encoding of a string.
    public mutating func update(_ string: String) {
        var string = string
        string.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Returns the tag over everything added, optionally truncated to its leftmost `byteCount` bytes.
    /// - Throws: ``CofferCryptoError`` `.invalidTagLength` if `byteCount` is below 10 or above the full length.
    public func finalize(truncatedTo byteCount: Int? = nil) throws(CofferCryptoError) -> MACTag {
        let length = try algorithm.checkedTagLength(byteCount)
        let full = state.finalize()
        return MACTag(algorithm: algorithm, bytes: length == full.count ? full : Array(full.prefix(length)))
    }
}

private protocol MACState: Sendable {
    mutating func update(_ buffer: UnsafeRawBufferPointer)
    func finalize() -> [UInt8]
}

private struct MACStateOf<Function: HashFunction & Sendable>: MACState {
    var hmac: HMAC<Function>

    init(key: SymmetricKey) { hmac = HMAC(key: key) }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        hmac.update(data: buffer)
    }

    func finalize() -> [UInt8] {
        hmac.finalize().withUnsafeBytes { Array($0) }
    }
}

extension MACAlgorithm {
    /// The tag of a byte sequence under `key`, optionally truncated to `byteCount` bytes (at least 10).
    public func authenticationCode<Bytes: Sequence>(
        for bytes: Bytes,
        using key: MACKey,
        truncatedTo byteCount: Int? = nil
    ) throws(CofferCryptoError) -> MACTag where Bytes.Element == UInt8 {
        var authenticator = MessageAuthenticator(self, key: key)
        authenticator.update(bytes)
        return try authenticator.finalize(truncatedTo: byteCount)
    }

    /// The tag of a string's UTF-8 encoding under `key`.
    public func authenticationCode(
        for string: String,
        using key: MACKey,
        truncatedTo byteCount: Int? = nil
    ) throws(CofferCryptoError) -> MACTag {
        var authenticator = MessageAuthenticator(self, key: key)
        authenticator.update(string)
        return try authenticator.finalize(truncatedTo: byteCount)
    }

    /// The tag of a file (or `-` for standard input) under `key`, read in constant memory.
    /// - Throws: `CofferCoreError` if the file cannot be read; ``CofferCryptoError`` for a bad length.
    public func authenticationCode(
        forFileAtPath path: String,
        using key: MACKey,
        truncatedTo byteCount: Int? = nil,
        progress: ((Int64) -> Void)? = nil
    ) throws -> MACTag {
        let length = try checkedTagLength(byteCount)
        var authenticator = MessageAuthenticator(self, key: key)
        var done: Int64 = 0
        try FileReader.open(path).forEachChunk { chunk in
            authenticator.update(chunk)
            done += Int64(chunk.count)
            progress?(done)
        }
        return try authenticator.finalize(truncatedTo: length)
    }

    /// Whether `tag` authenticates `bytes` under `key`, compared in constant time.
    ///
    /// The expected length is fixed by the caller, never by the tag received: with `truncatedTo: nil` only
    /// a full-length tag can be valid, so an attacker cannot weaken the check by sending a shorter tag.
    /// - Throws: ``CofferCryptoError`` `.invalidTagLength` if `byteCount` itself is out of range.
    public func isValidAuthenticationCode<Tag: Collection, Bytes: Sequence>(
        _ tag: Tag,
        for bytes: Bytes,
        using key: MACKey,
        truncatedTo byteCount: Int? = nil
    ) throws(CofferCryptoError) -> Bool where Tag.Element == UInt8, Bytes.Element == UInt8 {
        let expected = try authenticationCode(for: bytes, using: key, truncatedTo: byteCount)
        return ConstantTime.equals(expected.bytes, tag)
    }

    /// Whether `tag` authenticates the file at `path` under `key`; the same length rule as for data.
    /// - Throws: `CofferCoreError` if the file cannot be read; ``CofferCryptoError`` for a bad length.
    public func isValidAuthenticationCode<Tag: Collection>(
        _ tag: Tag,
        forFileAtPath path: String,
        using key: MACKey,
        truncatedTo byteCount: Int? = nil
    ) throws -> Bool where Tag.Element == UInt8 {
        let expected = try authenticationCode(forFileAtPath: path, using: key, truncatedTo: byteCount)
        return ConstantTime.equals(expected.bytes, tag)
    }
}
