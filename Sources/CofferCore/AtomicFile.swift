import CCofferSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Writes a file so that readers see either the old contents or the complete new ones, never a part.
///
/// Data goes to a temporary file created beside the destination with mode 0600 (never wider, whatever
/// the umask); ``commit()`` flushes it to disk and renames it over the destination. If the writer is
/// released without committing, or ``abandon()`` is called, the temporary file is removed and the
/// destination is untouched, so a failure never leaves plaintext or half-written output behind.
public final class AtomicFileWriter {
    /// The final path.
    public let destination: String
    private let temporaryPath: String
    private var descriptor: Int32
    private var finished = false
    private let durable: Bool
    /// Small writes are gathered here and reach the file in 1 MiB system calls.
    private var buffer: UnsafeMutableRawBufferPointer?
    private var buffered = 0
    private static let bufferSize = 1 << 20
    private var background: BackgroundWriter?
    /// The file size ``preallocate(toSize:)`` set up; ``commit()`` trims the file to what was written.
    private var preallocatedSize: Int64 = 0

    /// Creates the temporary file beside `destination`.
    /// - Parameters:
    ///   - overwrite: when `false`, an existing destination is refused up front.
    ///   - durable: when `true` (the default), ``commit()`` waits for the data to reach stable storage
    ///     before renaming, so that even a system crash cannot leave a damaged file under the final name.
    ///     Large streamed outputs may pass `false`: the rename still happens only after everything was
    ///     written, as `cp`, `age` and `openssl` leave it to the operating system to flush.
    /// - Throws: ``CofferCoreError`` if the destination exists (without `overwrite`), is a directory, or the
    ///   folder cannot be written.
    ///   - background: write on a second thread, overlapping the kernel's work with the caller's; for
    ///     large streamed outputs.
    public init(destination: String, overwrite: Bool = false, durable: Bool = true, background: Bool = false) throws(CofferCoreError) {
        var info = stat()
        if stat(destination, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR {
                throw CofferCoreError(.isDirectory, "cannot write '\(destination)': it is a directory")
            }
            // Renaming over a device or a pipe would replace it (as root, /dev/null itself) with a file.
            if info.st_mode & S_IFMT != S_IFREG {
                throw CofferCoreError(
                    .invalidArgument,
                    "'\(destination)' is not a regular file (a device or a pipe); write to standard output instead"
                )
            }
            if !overwrite {
                throw CofferCoreError(.invalidArgument, "'\(destination)' already exists; choose another name or allow overwriting")
            }
        }
        let folder: String
        let name: String
        if let slash = destination.lastIndex(of: "/") {
            folder = slash == destination.startIndex ? "/" : String(destination[..<slash])
            name = String(destination[destination.index(after: slash)...])
        } else {
            folder = "."
            name = destination
        }
        let (descriptor, temporaryPath) = try makeTemporaryFile(in: folder, prefix: "\(name).coffer")
        self.descriptor = descriptor
        self.temporaryPath = temporaryPath
        self.destination = destination
        self.durable = durable
        if background { self.background = BackgroundWriter(descriptor: descriptor, name: destination) }
    }

    /// Appends bytes to the temporary file.
    /// - Throws: ``CofferCoreError`` `.ioFailure` (the disk is full, say); the writer should then be abandoned.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(CofferCoreError) {
        if let background {
            try background.append(bytes)
            return
        }
        guard bytes.count < Self.bufferSize else {
            try flush()
            try writeAll(bytes, to: descriptor, name: destination)
            return
        }
        let buffer = self.buffer ?? UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 64)
        self.buffer = buffer
        if buffered + bytes.count > buffer.count { try flush() }
        UnsafeMutableRawBufferPointer(rebasing: buffer[buffered..<(buffered + bytes.count)]).copyMemory(from: bytes)
        buffered += bytes.count
    }

    /// Lends `body` `count` bytes to write into in place, and appends the number of bytes it returns
    /// (at most `count`) to the temporary file. For producers that can put their output anywhere, such
    /// as a cipher sealing a chunk: it saves the copy that `write(_:)` makes.
    /// If `body` throws, nothing it wrote is appended and its error is rethrown.
    /// - Throws: `body`'s error, or ``CofferCoreError`` `.ioFailure` from writing.
    public func write(reserving count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        if let background {
            try background.append(reserving: count, body)
            return
        }
        if buffered + count > (buffer?.count ?? 0) { try flush() }
        let buffer: UnsafeMutableRawBufferPointer
        if let existing = self.buffer, existing.count >= count {
            buffer = existing
        } else {
            // Nothing is buffered here (flushed above): the old buffer is wiped and replaced by a larger one.
            if let old = self.buffer {
                old.initializeMemory(as: UInt8.self, repeating: 0)
                old.deallocate()
            }
            buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, Self.bufferSize), alignment: 64)
            self.buffer = buffer
        }
        let written = try body(UnsafeMutableRawBufferPointer(rebasing: buffer[buffered..<(buffered + count)]))
        precondition((0...count).contains(written), "the closure reported more bytes than it was lent")
        buffered += written
    }

    private func flush() throws(CofferCoreError) {
        guard let buffer, buffered > 0 else { return }
        let pending = buffered
        buffered = 0
        try writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<pending]), to: descriptor, name: destination)
    }

    /// Appends a byte sequence.
    public func write<Bytes: Sequence>(_ bytes: Bytes) throws(CofferCoreError) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        let failure: CofferCoreError? = array.withUnsafeBytes { buffer in
            do throws(CofferCoreError) { try write(buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Allocates disk space for the whole file before it is written, when its final size is known (or
    /// bounded from above): a full disk is then reported before any work is done, the file system can
    /// lay the file out in one piece, and the writes skip block allocation (on ext4 they cost about a
    /// quarter less, and far less when the host is slow to hand out memory). The committed file still
    /// holds exactly the bytes written: ``commit()`` trims whatever was allocated beyond them.
    ///
    /// Best effort: where the platform or the file system cannot preallocate (outside Linux, or a file
    /// system without `fallocate`), it does nothing.
    /// - Throws: ``CofferCoreError`` `.ioFailure` when the disk (or the user's quota) lacks the space, or
    ///   the size is beyond what the file system allows; the writer should then be abandoned.
    public func preallocate(toSize byteCount: Int64) throws(CofferCoreError) {
        guard !finished, byteCount > preallocatedSize else { return }
        while coffer_preallocate(descriptor, byteCount) != 0 {
            let code = errno
            switch code {
            case EINTR:
                continue
            case ENOSPC, EDQUOT, EFBIG:
                throw fileError(code, action: "preallocate \(byteCount) bytes for", path: destination)
            default:
                return  // Not supported here: the writes allocate as they go.
            }
        }
        preallocatedSize = byteCount
    }

    /// Widens or narrows the final file's mode (it starts as 0600); for files that hold no secret, such
    /// as public keys (0644).
    public func setPermissions(_ mode: UInt16) throws(CofferCoreError) {
        guard fchmod(descriptor, mode_t(mode)) == 0 else { throw fileError(errno, action: "set permissions on", path: destination) }
    }

    /// Flushes the data to stable storage and renames the temporary file onto the destination.
    /// - Throws: ``CofferCoreError``; on failure the temporary file is removed.
    public func commit() throws(CofferCoreError) {
        guard !finished else { return }
        do {
            try flush()
            try background?.finish()
            background = nil
        } catch {
            finished = true
            cleanUp()
            throw error
        }
        finished = true
        if preallocatedSize > 0 {
            // Writes advance the file offset from 0, so the offset is the number of bytes written.
            let written = Int64(lseek(descriptor, 0, SEEK_CUR))
            if written < 0 || (written < preallocatedSize && ftruncate(descriptor, off_t(written)) != 0) {
                let code = errno
                cleanUp()
                throw fileError(code, action: "trim the preallocated space of", path: destination)
            }
        }
        if durable && fsync(descriptor) != 0 {
            let code = errno
            cleanUp()
            throw fileError(code, action: "flush", path: destination)
        }
        close(descriptor)
        descriptor = -1
        if let buffer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
            self.buffer = nil
        }
        if rename(temporaryPath, destination) != 0 {
            let code = errno
            unlink(temporaryPath)
            throw fileError(code, action: "rename onto", path: destination)
        }
    }

    /// Discards everything written; the destination is left as it was.
    public func abandon() {
        guard !finished else { return }
        finished = true
        cleanUp()
    }

    private func cleanUp() {
        // Stop the writer thread before the descriptor closes; its errors no longer matter.
        try? background?.finish()
        background = nil
        if let buffer {
            // The buffer may hold plaintext: wipe it before giving it back.
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
            self.buffer = nil
        }
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        unlink(temporaryPath)
    }

    deinit { abandon() }
}
