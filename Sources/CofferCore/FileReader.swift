#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import Dispatch

/// Reads a file or standard input front to back in large chunks through one reused buffer, so that
/// inputs of any size are processed in constant memory.
///
/// Every chunk handed to the body is exactly `chunkSize` bytes except the last, which may be shorter
/// (or absent, for an empty input). The reader closes the file when it is released.
///
/// ```swift
/// let reader = try FileReader(path: "backup.tar")
/// try reader.forEachChunk { chunk in hasher.update(chunk) }
/// ```
public final class FileReader {
    /// The chunk size used when a caller does not choose one: 1 MiB, large enough that system-call
    /// overhead is negligible next to hashing, small enough to stay in the CPU's caches.
    public static let defaultChunkSize = 1 << 20

    /// The name to show to a person: the path as given, or `-` for standard input.
    public let displayName: String
    /// The size in bytes when the input is a regular file (as of opening it), `nil` for pipes and terminals.
    public let size: Int64?
    /// The permission bits of the opened file (`0o600`), as of opening it; `nil` for standard input.
    public let permissions: UInt32?
    /// The user id owning the opened file, as of opening it; `nil` for standard input.
    public let owner: UInt32?

    private let descriptor: Int32
    private let ownsDescriptor: Bool

    /// Opens a file for reading.
    /// - Throws: ``CofferCoreError`` with `.fileNotFound`, `.permissionDenied`, `.isDirectory` or
    ///   `.ioFailure`, naming the path and the operating system's reason.
    public init(path: String) throws(CofferCoreError) {
        let descriptor = openForReading(path)
        guard descriptor >= 0 else { throw fileError(errno, action: "open", path: path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw fileError(code, action: "inspect", path: path)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            close(descriptor)
            throw CofferCoreError(.isDirectory, "cannot read '\(path)': it is a directory")
        }
        self.descriptor = descriptor
        self.ownsDescriptor = true
        self.displayName = path
        self.size = info.st_mode & S_IFMT == S_IFREG ? Int64(info.st_size) : nil
        self.permissions = UInt32(info.st_mode & 0o7777)
        self.owner = UInt32(info.st_uid)
        #if os(Linux)
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        #endif
    }

    private init(standardInput: Void) {
        var info = stat()
        let isRegular = fstat(STDIN_FILENO, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        self.descriptor = STDIN_FILENO
        self.ownsDescriptor = false
        self.displayName = "-"
        self.size = isRegular ? Int64(info.st_size) : nil
        self.permissions = nil
        self.owner = nil
    }

    /// A reader of this process's standard input, shown as `-`. It does not close standard input.
    public static func standardInput() -> FileReader { FileReader(standardInput: ()) }

    /// Opens `path`, or standard input when `path` is `-`.
    public static func open(_ path: String) throws(CofferCoreError) -> FileReader {
        path == "-" ? standardInput() : try FileReader(path: path)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Calls `body` with each successive chunk of the input until the end, and returns the total byte count.
    ///
    /// The buffer passed to `body` is reused: copy out anything that must outlive the call.
    /// - Parameters:
    ///   - chunkSize: bytes per chunk; must be positive.
    ///   - body: called with each chunk, in order.
    /// - Throws: ``CofferCoreError`` `.ioFailure` if reading fails, or whatever `body` throws.
    @discardableResult
    public func forEachChunk(
        chunkSize: Int = FileReader.defaultChunkSize,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int64 {
        try forEachChunk(chunkSize: chunkSize) { chunk, _ in try body(chunk) }
    }

    /// Regular files larger than this many chunks are read ahead on a second thread.
    static let readAheadThresholdChunks: Int64 = 4

    /// Like ``forEachChunk(chunkSize:_:)-(_,(UnsafeRawBufferPointer)->Void)``, and also says which chunk is
    /// the last: the input is read one chunk ahead, so a streaming format can mark its final segment
    /// without copying the data aside. `body` is not called for an empty input.
    @discardableResult
    public func forEachChunk(
        chunkSize: Int,
        _ body: (_ chunk: UnsafeRawBufferPointer, _ isLast: Bool) throws -> Void
    ) throws -> Int64 {
        guard chunkSize > 0 else {
            throw CofferCoreError(.invalidArgument, "expected a positive chunk size, found \(chunkSize)")
        }
        // Reading overlaps with the caller's work only for regular files large enough for it to pay off
        // (a thread hand-off costs microseconds, a 1 GiB read from the page cache about 80 ms). Pipes
        // are read inline: a read from a pipe can block for ever, and a reader thread stuck there could
        // not be stopped if the caller gave up.
        if let size, size > Int64(chunkSize) * Self.readAheadThresholdChunks {
            return try forEachChunkReadingAhead(chunkSize: chunkSize, body)
        }
        return try forEachChunkInline(chunkSize: chunkSize, body)
    }

    /// Two buffers on the calling thread: the next chunk is read before the current one is handed out.
    private func forEachChunkInline(
        chunkSize: Int,
        _ body: (UnsafeRawBufferPointer, Bool) throws -> Void
    ) throws -> Int64 {
        var current = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
        var next = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
        defer {
            current.deallocate()
            next.deallocate()
        }
        let name = readableName
        var filled = try Self.fill(current, from: descriptor, name: name)
        var total: Int64 = 0
        while filled > 0 {
            let isLast: Bool
            var nextFilled = 0
            if filled < chunkSize {
                isLast = true
            } else {
                nextFilled = try Self.fill(next, from: descriptor, name: name)
                isLast = nextFilled == 0
            }
            try body(UnsafeRawBufferPointer(rebasing: current[0..<filled]), isLast)
            total += Int64(filled)
            if isLast { break }
            swap(&current, &next)
            filled = nextFilled
        }
        return total
    }

    /// A reader thread fills three buffers in turn while `body` consumes them: one being processed, one
    /// read ahead (to know whether the current chunk is the last), one being filled.
    ///
    /// The two sides hand buffers back and forth through semaphores; the reader never touches a buffer
    /// the consumer holds. If `body` throws, the reader is told to stop and is waited for before the
    /// buffers are freed, so no reader outlives the call.
    private func forEachChunkReadingAhead(
        chunkSize: Int,
        _ body: (UnsafeRawBufferPointer, Bool) throws -> Void
    ) throws -> Int64 {
        let shared = ReadAheadState(chunkSize: chunkSize, slots: 3)
        defer { shared.deallocate() }
        let descriptor = self.descriptor
        let name = self.readableName
        DispatchQueue.global(qos: .userInitiated).async {
            var index = 0
            while true {
                shared.empty.wait()
                if shared.cancelled.load() { break }
                let slot = shared.slots[index]
                do {
                    slot.count = try Self.fill(slot.buffer, from: descriptor, name: name)
                } catch {
                    slot.error = error
                    slot.count = 0
                }
                let finished = slot.error != nil || slot.count < slot.buffer.count
                shared.full.signal()
                if finished { break }
                index = (index + 1) % shared.slots.count
            }
            shared.producerDone.signal()
        }
        defer { shared.producerDone.wait() }

        var index = 0
        func take() throws -> ReadAheadState.Slot {
            shared.full.wait()
            let slot = shared.slots[index]
            index = (index + 1) % shared.slots.count
            if let error = slot.error { throw error }
            return slot
        }
        var total: Int64 = 0
        do {
            var current = try take()
            while current.count > 0 {
                var next: ReadAheadState.Slot?
                if current.count == chunkSize { next = try take() }
                let isLast = (next?.count ?? 0) == 0
                try body(UnsafeRawBufferPointer(rebasing: current.buffer[0..<current.count]), isLast)
                total += Int64(current.count)
                shared.empty.signal()
                guard let following = next, !isLast else { break }
                current = following
            }
        } catch {
            shared.cancelled.store(true)
            shared.empty.signal()
            throw error
        }
        return total
    }

    /// Reads the rest of the input into memory, for small inputs such as keys and signatures.
    /// - Returns: the bytes, or `nil` if there are more than `limit` (reading stops there).
    /// - Throws: ``CofferCoreError`` `.ioFailure` if reading fails.
    public func readAll(limit: Int) throws(CofferCoreError) -> [UInt8]? {
        struct TooLarge: Error {}
        var bytes: [UInt8] = []
        if let size { bytes.reserveCapacity(Int(min(size, Int64(limit)))) }
        do {
            try forEachChunk(chunkSize: 1 << 16) { chunk in
                guard bytes.count + chunk.count <= limit else { throw TooLarge() }
                bytes.append(contentsOf: chunk)
            }
        } catch is TooLarge {
            return nil
        } catch let error as CofferCoreError {
            throw error
        } catch {
            throw CofferCoreError(.ioFailure, "reading failed", underlying: error)
        }
        return bytes
    }

    /// Reads up to `count` bytes from the current position: fewer only at the end of the input. Use it
    /// for a header before streaming the rest with ``forEachChunk(chunkSize:_:)-(_,(UnsafeRawBufferPointer)->Void)``, which continues
    /// from where this stopped.
    public func readPrefix(upTo count: Int) throws(CofferCoreError) -> [UInt8] {
        guard count > 0 else { return [] }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        defer { buffer.deallocate() }
        let filled = try Self.fill(buffer, from: descriptor, name: readableName)
        return Array(buffer[0..<filled])
    }

    /// The name used in read errors.
    private var readableName: String { displayName == "-" ? "standard input" : displayName }

    /// Reads until `buffer` is full or the input ends; returns the number of bytes placed.
    private static func fill(
        _ buffer: UnsafeMutableRawBufferPointer,
        from descriptor: Int32,
        name: String
    ) throws(CofferCoreError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let count = read(descriptor, base + filled, buffer.count - filled)
            if count > 0 {
                filled += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw fileError(errno, action: "read", path: name)
            }
        }
        return filled
    }
}
