public import CofferCore
import Crypto
import _CryptoExtras

/// Computes a digest incrementally: feed it data with `update`, then call ``finalize()`` once.
///
/// Use it when the input arrives in pieces (a network stream, a file read in chunks). For data already in
/// memory, ``DigestAlgorithm/hash(_:)-(Bytes)`` is one call; for files,
/// ``DigestAlgorithm/hash(fileAtPath:chunkSize:progress:)`` streams in constant memory.
///
/// ```swift
/// var digester = Digester(.sha256)
/// digester.update("hello, ")
/// digester.update(Array("world".utf8))
/// let digest = digester.finalize()   // sha256:09ca7e4e…
/// ```
public struct Digester: Sendable {
    /// The algorithm being computed.
    public let algorithm: DigestAlgorithm
    private var state: any HashState

    /// Starts a new computation.
    public init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        self.state = switch algorithm {
        case .sha256: HashStateOf<SHA256>()
        case .sha384: HashStateOf<SHA384>()
        case .sha512: HashStateOf<SHA512>()
        case .sha512_256: HashStateOf<SHA512256>()
        case .sha3_256: HashStateOf<SHA3_256>()
        case .sha3_384: HashStateOf<SHA3_384>()
        case .sha3_512: HashStateOf<SHA3_512>()
        case .insecureSHA1: HashStateOf<Insecure.SHA1>()
        case .insecureMD5: HashStateOf<Insecure.MD5>()
        }
    }

    /// Adds the bytes in a buffer.
    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        state.update(buffer)
    }

    /// Adds a sequence of bytes: `Data`, `[UInt8]`, a slice, or any other `Sequence` of `UInt8`.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if handled != nil { return }
        var pending: [UInt8] = []
        pending.reserveCapacity(4096)
        for byte in bytes {
            pending.append(byte)
            if pending.count == 4096 {
                pending.withUnsafeBytes { update($0) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        pending.withUnsafeBytes { update($0) }
    }

    /// Adds the UTF-8 encoding of a string.
    public mutating func update(_ string: String) {
        var string = string
        string.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Returns the digest of everything added so far. The digester can keep accepting data afterwards;
    /// a later `finalize()` covers all data added, before and after.
    public func finalize() -> DigestValue {
        state.finalize(algorithm)
    }
}

/// One algorithm's running state behind a uniform interface, so `Digester` stores no per-case switch.
private protocol HashState: Sendable {
    mutating func update(_ buffer: UnsafeRawBufferPointer)
    func finalize(_ algorithm: DigestAlgorithm) -> DigestValue
}

private struct HashStateOf<Function: HashFunction & Sendable>: HashState {
    var function = Function()

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        function.update(bufferPointer: buffer)
    }

    func finalize(_ algorithm: DigestAlgorithm) -> DigestValue {
        DigestValue(computed: function.finalize(), algorithm: algorithm)
    }
}

extension DigestAlgorithm {
    /// The digest of a byte sequence (`Data`, `[UInt8]`, slices…).
    public func hash<Bytes: Sequence>(_ bytes: Bytes) -> DigestValue where Bytes.Element == UInt8 {
        var digester = Digester(self)
        digester.update(bytes)
        return digester.finalize()
    }

    /// The digest of a string's UTF-8 encoding.
    public func hash(_ string: String) -> DigestValue {
        var digester = Digester(self)
        digester.update(string)
        return digester.finalize()
    }

    /// The digest of a buffer's bytes.
    public func hash(_ buffer: UnsafeRawBufferPointer) -> DigestValue {
        var digester = Digester(self)
        digester.update(buffer)
        return digester.finalize()
    }

    /// The digest of a file, read in chunks through one reused buffer: memory use does not grow with the
    /// file's size. Pass `-` to read standard input.
    ///
    /// - Parameters:
    ///   - path: the file to read, or `-` for standard input.
    ///   - chunkSize: bytes per read; the default suits files of every size.
    ///   - progress: called after each chunk with the number of bytes hashed so far.
    /// - Throws: `CofferCoreError` if the file cannot be opened or read.
    public func hash(
        fileAtPath path: String,
        chunkSize: Int = FileReader.defaultChunkSize,
        progress: ((Int64) -> Void)? = nil
    ) throws(CofferCoreError) -> DigestValue {
        try hash(reading: FileReader.open(path), chunkSize: chunkSize, progress: progress)
    }

    /// The digest of everything a `FileReader` yields, in constant memory.
    /// - Throws: `CofferCoreError` if reading fails.
    public func hash(
        reading reader: FileReader,
        chunkSize: Int = FileReader.defaultChunkSize,
        progress: ((Int64) -> Void)? = nil
    ) throws(CofferCoreError) -> DigestValue {
        var digester = Digester(self)
        var done: Int64 = 0
        // The body throws nothing, so whatever the reader throws is its own CofferCoreError.
        try CofferCoreError.wrapping({ () throws -> Void in
            try reader.forEachChunk(chunkSize: chunkSize) { chunk in
                digester.update(chunk)
                done += Int64(chunk.count)
                progress?(done)
            }
        }, otherwise: { CofferCoreError(.ioFailure, "reading failed", underlying: $0) })
        return digester.finalize()
    }
}
