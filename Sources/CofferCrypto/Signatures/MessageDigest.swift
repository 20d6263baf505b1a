import CofferCore
import Crypto

/// The SHA-2 digest of a message, computed by Coffer, ready to be signed or verified.
///
/// RSA and ECDSA sign a digest by definition, so a file of any size is hashed in a stream and only the
/// digest meets the key. Ed25519 and ML-DSA sign messages; given a `MessageDigest` they sign the digest's
/// bytes as the message (a pre-hash construction, recorded as such in Coffer's signature files).
///
/// Only SHA-256, SHA-384 and SHA-512 are offered: they are what RSA's DigestInfo and the ECDSA curves'
/// standard pairings name.
public struct MessageDigest: Sendable, Hashable {
    enum Typed: Sendable, Hashable {
        case sha256(SHA256Digest)
        case sha384(SHA384Digest)
        case sha512(SHA512Digest)
    }

    let typed: Typed

    /// The hash function used.
    public var algorithm: DigestAlgorithm {
        switch typed {
        case .sha256: .sha256
        case .sha384: .sha384
        case .sha512: .sha512
        }
    }

    /// The digest bytes.
    public var bytes: [UInt8] {
        switch typed {
        case .sha256(let digest): Array(digest)
        case .sha384(let digest): Array(digest)
        case .sha512(let digest): Array(digest)
        }
    }

    /// The hash functions signatures may use.
    public static let supportedAlgorithms: [DigestAlgorithm] = [.sha256, .sha384, .sha512]

    static func check(_ algorithm: DigestAlgorithm) throws(CofferCryptoError) {
        guard supportedAlgorithms.contains(algorithm) else {
            throw CofferCryptoError(
                .unknownAlgorithm,
                "expected SHA-256, SHA-384 or SHA-512 for a signature, found \(algorithm.standardName)"
            )
        }
    }

    /// The digest of bytes in memory.
    /// - Throws: ``CofferCryptoError`` `.unknownAlgorithm` for a hash other than SHA-256/384/512.
    public init<Bytes: Sequence>(of bytes: Bytes, algorithm: DigestAlgorithm = .sha512) throws(CofferCryptoError)
    where Bytes.Element == UInt8 {
        try Self.check(algorithm)
        var hasher = StreamingHasher(algorithm)
        let handled: Void? = bytes.withContiguousStorageIfAvailable { hasher.update(UnsafeRawBufferPointer($0)) }
        if handled == nil { Array(bytes).withUnsafeBytes { hasher.update($0) } }
        typed = hasher.finalize()
    }

    /// The digest of a file (or `-` for standard input), read in constant memory.
    /// - Throws: `CofferCoreError` if the file cannot be read, ``CofferCryptoError`` for an unsupported hash.
    public init(
        ofFileAtPath path: String,
        algorithm: DigestAlgorithm = .sha512,
        progress: ((Int64) -> Void)? = nil
    ) throws {
        try Self.check(algorithm)
        var hasher = StreamingHasher(algorithm)
        var done: Int64 = 0
        try FileReader.open(path).forEachChunk { chunk in
            hasher.update(chunk)
            done += Int64(chunk.count)
            progress?(done)
        }
        typed = hasher.finalize()
    }
}

/// SHA-2 kept as swift-crypto's own types, which RSA needs to build its DigestInfo.
private struct StreamingHasher {
    private enum State {
        case sha256(SHA256)
        case sha384(SHA384)
        case sha512(SHA512)
    }

    private var state: State

    init(_ algorithm: DigestAlgorithm) {
        switch algorithm {
        case .sha256: state = .sha256(SHA256())
        case .sha384: state = .sha384(SHA384())
        default: state = .sha512(SHA512())
        }
    }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        switch state {
        case .sha256(var hasher):
            hasher.update(bufferPointer: buffer)
            state = .sha256(hasher)
        case .sha384(var hasher):
            hasher.update(bufferPointer: buffer)
            state = .sha384(hasher)
        case .sha512(var hasher):
            hasher.update(bufferPointer: buffer)
            state = .sha512(hasher)
        }
    }

    func finalize() -> MessageDigest.Typed {
        switch state {
        case .sha256(let hasher): .sha256(hasher.finalize())
        case .sha384(let hasher): .sha384(hasher.finalize())
        case .sha512(let hasher): .sha512(hasher.finalize())
        }
    }
}
