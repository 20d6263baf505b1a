import CofferCore
import CofferCrypto
import Crypto
import Dispatch

/// Where the engine's output goes: a file writer that lends its staging buffers (no copy), or a closure
/// that is handed each finished chunk from the engine's own buffer.
enum ChunkSink {
    case writer(AtomicFileWriter)
    case closure((UnsafeRawBufferPointer) throws -> Void)

    /// Passes header bytes and other small pieces on.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        switch self {
        case .writer(let writer): try writer.write(bytes)
        case .closure(let output): try output(bytes)
        }
    }

    /// Allocates the output file's space for `byteCount` bytes in all (see
    /// `AtomicFileWriter/preallocate(toSize:)`); nothing to do for a closure.
    func preallocate(toSize byteCount: Int64) throws {
        guard case .writer(let writer) = self, byteCount > 0 else { return }
        try writer.preallocate(toSize: byteCount)
    }
}

/// Seals and opens the segments of Coffer's stream, a chunk of up to 16 segments at a time.
///
/// Segments are independent once their counters are fixed, so the segments of a chunk are sealed (or
/// opened) on two threads at once, each writing into its own place of one output buffer: the file
/// writer's staging buffer, or the engine's own reused one for other outputs. The chunk is handed on only
/// when every segment in it succeeded, in order. No segment allocates a buffer of ours; the engine's
/// buffer is wiped before it is freed.
final class SegmentEngine: @unchecked Sendable {
    let cipher: EncryptionCipher
    let key: AEADKey
    let segmentSize: Int
    let segmentsPerChunk: Int
    /// Allocated on first use by a closure sink.
    private var ownBuffer: UnsafeMutableRawBufferPointer?
    private var counter: UInt64 = 0

    /// How many threads seal a chunk's segments.
    static let workers = 2

    init(cipher: EncryptionCipher, key: SymmetricKey, segmentSize: Int) {
        self.cipher = cipher
        self.key = AEADKey(key)
        self.segmentSize = segmentSize
        self.segmentsPerChunk = max(1, (1 << 20) / segmentSize)
    }

    func deallocate() {
        guard let ownBuffer else { return }
        ownBuffer.initializeMemory(as: UInt8.self, repeating: 0)
        ownBuffer.deallocate()
        self.ownBuffer = nil
    }

    var plaintextChunkSize: Int { segmentsPerChunk * segmentSize }
    var sealedChunkSize: Int { segmentsPerChunk * (segmentSize + 16) }

    /// The sealed size of `count` plaintext bytes: a 16-byte tag per segment, and an empty plaintext is
    /// one empty final segment.
    func sealedSize(ofPlaintext count: Int64) -> Int64 {
        let size = Int64(segmentSize)
        return count + 16 * max(1, (count + size - 1) / size)
    }

    /// The plaintext size of `count` sealed bytes when they are well formed (the inverse of
    /// ``sealedSize(ofPlaintext:)``); 0 for a count no stream has.
    func plaintextSize(ofSealed count: Int64) -> Int64 {
        guard count > 0 else { return 0 }
        let sealed = Int64(segmentSize) + 16
        return max(0, count - 16 * ((count + sealed - 1) / sealed))
    }

    /// The STREAM nonce: an 11-byte big-endian counter and the last-segment flag.
    private static func nonce(_ counter: UInt64, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { nonce[3 + index] = UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64(index))) }
        nonce[11] = last ? 1 : 0
        return nonce
    }

    /// Runs `segment` for every segment index of a chunk on the workers, and throws the first error any
    /// of them hit.
    ///
    /// Indices are handed out one at a time to whichever worker asks next, not split in fixed halves: on a
    /// virtual machine the host can pause one of our threads for milliseconds, and the other then takes
    /// the rest of the chunk instead of waiting at the end of it.
    private func forEachSegment(
        count: Int,
        input: UnsafeRawPointer?,
        output: UnsafeMutableRawBufferPointer,
        _ segment: @escaping @Sendable (_ index: Int, _ buffers: ChunkBuffers) throws -> Void
    ) throws {
        let queue = SegmentQueue(count: count)
        let buffers = ChunkBuffers(input: input, output: output)
        let work: @Sendable (Int) -> Void = { _ in
            while let index = queue.take() {
                do { try segment(index, buffers) } catch { queue.fail(error) }
            }
        }
        if count > 1 {
            DispatchQueue.concurrentPerform(iterations: Self.workers, execute: work)
        } else {
            work(0)
        }
        if let error = queue.firstError { throw error }
    }

    /// Seals a plaintext chunk (whole segments, the final one possibly short when `isLastChunk`) into
    /// `sink`.
    func seal(_ chunk: UnsafeRawBufferPointer, isLastChunk: Bool, to sink: ChunkSink) throws {
        try emit(to: sink, count: sealedChunkSize) { try seal(chunk, isLastChunk: isLastChunk, into: $0) }
    }

    /// Opens a sealed chunk into `sink`; its plaintext is passed on only if every segment in it
    /// authenticated.
    func open(_ chunk: UnsafeRawBufferPointer, isLastChunk: Bool, to sink: ChunkSink) throws {
        try emit(to: sink, count: plaintextChunkSize) { try open(chunk, isLastChunk: isLastChunk, into: $0) }
    }

    private func emit(to sink: ChunkSink, count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        switch sink {
        case .writer(let writer):
            try writer.write(reserving: count, fill)
        case .closure(let output):
            let buffer = ownBuffer ?? UnsafeMutableRawBufferPointer.allocate(byteCount: sealedChunkSize, alignment: 64)
            ownBuffer = buffer
            let written = try fill(buffer)
            try output(UnsafeRawBufferPointer(rebasing: buffer[0..<written]))
        }
    }

    /// Seals a plaintext chunk into `output` (at least ``sealedChunkSize`` bytes); returns the sealed length.
    func seal(_ chunk: UnsafeRawBufferPointer, isLastChunk: Bool, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        precondition(output.count >= sealedChunkSize && chunk.count <= plaintextChunkSize)
        let count = max(1, (chunk.count + segmentSize - 1) / segmentSize)
        let first = counter
        counter += UInt64(count)
        let (cipher, key, segmentSize, chunkCount) = (cipher.aead, key, segmentSize, chunk.count)
        let sealedSize = segmentSize + 16
        try forEachSegment(count: count, input: chunk.baseAddress, output: output) { index, buffers in
            let start = index * segmentSize
            let plaintext = UnsafeRawBufferPointer(start: buffers.input.map { $0 + start }, count: max(0, min(segmentSize, chunkCount - start)))
            var written = index * sealedSize
            let nonce = SegmentEngine.nonce(first + UInt64(index), last: isLastChunk && index == count - 1)
            try cipher.seal(plaintext, key: key, nonce: nonce) { piece in
                UnsafeMutableRawBufferPointer(rebasing: buffers.output[written..<(written + piece.count)]).copyMemory(from: piece)
                written += piece.count
            }
        }
        return (count - 1) * sealedSize + (chunkCount - (count - 1) * segmentSize) + 16
    }

    /// Opens a sealed chunk into `output` (at least ``plaintextChunkSize`` bytes); returns the plaintext
    /// length. Throws if any segment fails to authenticate; the caller then discards `output`.
    func open(_ chunk: UnsafeRawBufferPointer, isLastChunk: Bool, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        precondition(output.count >= plaintextChunkSize && chunk.count <= sealedChunkSize)
        let sealedSize = segmentSize + 16
        let count = (chunk.count + sealedSize - 1) / sealedSize
        let finalLength = chunk.count - (count - 1) * sealedSize
        // A final segment must hold its tag; an empty final segment is allowed only as the whole file.
        guard finalLength >= 16, !(isLastChunk && finalLength == 16 && (counter > 0 || count > 1)) else {
            throw CofferEncryption.authenticationFailure
        }
        let first = counter
        counter += UInt64(count)
        let (cipher, key, segmentSize, chunkCount) = (cipher.aead, key, segmentSize, chunk.count)
        try forEachSegment(count: count, input: chunk.baseAddress, output: output) { index, buffers in
            guard let base = buffers.input else { throw CofferEncryption.authenticationFailure }
            let start = index * sealedSize
            let length = min(sealedSize, chunkCount - start)
            var written = index * segmentSize
            let nonce = SegmentEngine.nonce(first + UInt64(index), last: isLastChunk && index == count - 1)
            do {
                try cipher.open(
                    ciphertext: UnsafeRawBufferPointer(start: base + start, count: length - 16),
                    tag: UnsafeRawBufferPointer(start: base + start + length - 16, count: 16),
                    key: key, nonce: nonce
                ) { piece in
                    UnsafeMutableRawBufferPointer(rebasing: buffers.output[written..<(written + piece.count)]).copyMemory(from: piece)
                    written += piece.count
                }
            } catch {
                throw CofferEncryption.authenticationFailure
            }
        }
        return (count - 1) * segmentSize + finalLength - 16
    }
}

/// The input and output of one chunk, shared by the workers. Each segment index is handed to exactly one
/// worker (``SegmentQueue``), which alone reads and writes that segment's bytes.
struct ChunkBuffers: @unchecked Sendable {
    let input: UnsafeRawPointer?
    let output: UnsafeMutableRawBufferPointer
}

/// Hands out a chunk's segment indices, each once, to whichever worker asks next, and keeps the first
/// error; after an error no further index is handed out.
private final class SegmentQueue: @unchecked Sendable {
    private let lock = DispatchSemaphore(value: 1)
    private let count: Int
    private var next = 0
    private var error: (any Error)?

    init(count: Int) { self.count = count }

    /// The next index nobody has taken, or `nil` when all are taken or a worker failed.
    func take() -> Int? {
        lock.wait()
        defer { lock.signal() }
        guard error == nil, next < count else { return nil }
        next += 1
        return next - 1
    }

    func fail(_ error: any Error) {
        lock.wait()
        if self.error == nil { self.error = error }
        lock.signal()
    }

    var firstError: (any Error)? {
        lock.wait()
        defer { lock.signal() }
        return error
    }
}
