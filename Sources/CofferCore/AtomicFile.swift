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

/// Writes a file so that it appears whole or not at all, whatever ends the process.
///
/// The data goes to a file with **no name** in the destination's folder (Linux `O_TMPFILE`, mode 0600
/// whatever the umask), which the kernel removes if the process ends for any reason, SIGKILL and power
/// loss included. ``commit()`` gives it its name only after the last byte was written (for a decryption:
/// after the last byte authenticated). Without `overwrite`, naming refuses to replace anything, so a
/// file someone created at the destination meanwhile is never clobbered; with `overwrite`, the new file
/// replaces the old in one `rename(2)`.
///
/// Where unnamed files are unavailable (other platforms, or file systems without them), the data goes to
/// a hidden temporary name beside the destination that is removed on failure, on release, and — when
/// the program called ``ProcessProtection/removeTemporaryFilesOnSignals()`` — by SIGINT, SIGTERM, SIGHUP, SIGQUIT and
/// SIGPIPE; only SIGKILL or a crash can leave it behind then.
///
/// With `durable` (the default), ``commit()`` returns only once the data and the new name are on stable
/// storage: the file is flushed before it is named and its folder after, so that even a power cut
/// cannot leave a damaged file under the final name nor lose a file that was reported written.
public final class AtomicFileWriter {
    /// The final path.
    public let destination: String
    /// The destination's folder.
    private let folder: String
    /// The hidden name the data is written under, or nil while it has none (an unnamed file).
    private var temporaryPath: String?
    /// The signal-cleanup registration of `temporaryPath`, or -1.
    private var cleanupSlot: Int32 = -1
    private var descriptor: Int32
    private var finished = false
    private let overwrite: Bool
    private let durable: Bool
    /// Small writes are gathered here and reach the file in 1 MiB system calls.
    private var buffer: UnsafeMutableRawBufferPointer?
    private var buffered = 0
    private static let bufferSize = 1 << 20
    private var background: BackgroundWriter?
    /// The file size ``preallocate(toSize:)`` set up; ``commit()`` trims the file to what was written.
    private var preallocatedSize: Int64 = 0

    /// Creates the file that will become `destination`.
    /// - Parameters:
    ///   - destination: the path the file gets at ``commit()``.
    ///   - overwrite: when `false`, an existing destination is refused now, and ``commit()`` refuses to
    ///     replace one that appeared meanwhile.
    ///   - durable: when `true` (the default), ``commit()`` returns only once the file and its name are
    ///     on stable storage. Pass `false` for outputs that are not the only copy of their data (a
    ///     decryption, whose ciphertext remains): they are still named only when complete, and the
    ///     operating system flushes them later, as `cp`, `age` and `openssl` leave it.
    ///   - background: write on a second thread, overlapping the kernel's work with the caller's; for
    ///     large streamed outputs. With `durable`, writeback starts as the data is written, so that the
    ///     final flush finds little left to do.
    /// - Throws: ``CofferCoreError`` `.fileExists` when the destination exists (without `overwrite`),
    ///   `.isDirectory`, `.invalidArgument` for a device or pipe, or the error of creating the file.
    public convenience init(destination: String, overwrite: Bool = false, durable: Bool = true, background: Bool = false) throws(CofferCoreError) {
        try self.init(destination: destination, overwrite: overwrite, durable: durable, background: background, allowsUnnamed: true)
    }

    /// - Parameter allowsUnnamed: false takes the fallback (a hidden temporary name) even where unnamed
    ///   files exist, for tests of that path.
    init(destination: String, overwrite: Bool, durable: Bool, background: Bool, allowsUnnamed: Bool) throws(CofferCoreError) {
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
                throw CofferCoreError(.fileExists, "'\(destination)' already exists; choose another name or allow overwriting")
            }
        }
        let name: String
        if let slash = destination.lastIndex(of: "/") {
            folder = slash == destination.startIndex ? "/" : String(destination[..<slash])
            name = String(destination[destination.index(after: slash)...])
        } else {
            folder = "."
            name = destination
        }
        self.destination = destination
        self.overwrite = overwrite
        self.durable = durable
        let unnamed = allowsUnnamed ? coffer_open_unnamed(folder) : -1
        if unnamed >= 0 {
            descriptor = unnamed
        } else if !allowsUnnamed || [EOPNOTSUPP, ENOTSUP, EISDIR, EINVAL].contains(errno) {
            let (descriptor, path) = try makeTemporaryFile(in: folder, prefix: "\(name).coffer")
            self.descriptor = descriptor
            temporaryPath = path
            cleanupSlot = coffer_cleanup_register(path)
        } else {
            throw fileError(errno, action: "create a file in", path: folder)
        }
        if background { self.background = BackgroundWriter(descriptor: descriptor, name: destination, startsWriteback: durable) }
    }

    /// Whether the data is being written to a file without a name, which nothing can leave behind
    /// (false where the platform or the file system lacks unnamed files).
    public var isUnnamed: Bool { temporaryPath == nil && !finished }

    /// The descriptor of the file being written, for tests that inspect it.
    var fileDescriptor: Int32 { descriptor }

    /// Whether a hidden name of this writer is registered for removal by the signal handlers.
    var isRegisteredForSignalCleanup: Bool { cleanupSlot >= 0 }

    /// Appends bytes to the file.
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
    /// (at most `count`) to the file. For producers that can put their output anywhere, such as a cipher
    /// sealing a chunk: it saves the copy that `write(_:)` makes.
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

    /// Writes what is buffered, flushes it to stable storage when durable, and gives the file its name.
    /// - Throws: ``CofferCoreError``: `.fileExists` when, without `overwrite`, something appeared at the
    ///   destination meanwhile (it is left untouched); `.ioFailure` and others from writing, flushing or
    ///   naming. On failure nothing is left behind and the destination is as it was.
    public func commit() throws(CofferCoreError) {
        guard !finished else { return }
        do {
            try flush()
            try background?.finish()
            background = nil
            try trimPreallocation()
            if durable { try syncDescriptor() }
            try name()
        } catch {
            finished = true
            cleanUp()
            throw error
        }
        finished = true
        releaseBuffer()
        let closed = close(descriptor)
        let closeCode = errno
        descriptor = -1
        if closed != 0 && closeCode != EINTR {
            // Some file systems (NFS) report a failed write only here: the file is not what was written.
            unlink(destination)
            throw fileError(closeCode, action: "close", path: destination)
        }
        // The new name must survive a crash too.
        if durable { try syncFolder(folder) }
    }

    private func trimPreallocation() throws(CofferCoreError) {
        guard preallocatedSize > 0 else { return }
        // Writes advance the file offset from 0, so the offset is the number of bytes written.
        let written = Int64(lseek(descriptor, 0, SEEK_CUR))
        if written < 0 || (written < preallocatedSize && ftruncate(descriptor, off_t(written)) != 0) {
            throw fileError(errno, action: "trim the preallocated space of", path: destination)
        }
    }

    private func syncDescriptor() throws(CofferCoreError) {
        while fsync(descriptor) != 0 {
            guard errno == EINTR else { throw fileError(errno, action: "flush", path: destination) }
        }
    }

    /// Gives the data its final name, refusing to replace anything unless overwriting. On failure a
    /// hidden name stays in `temporaryPath` for ``cleanUp()`` to remove.
    private func name() throws(CofferCoreError) {
        if temporaryPath == nil {
            guard overwrite else {
                if coffer_link_unnamed(descriptor, destination) != 0 { throw namingError(errno) }
                return
            }
            // No call links a file over an existing name: link it under a hidden name, then rename that.
            try linkUnderHiddenName()
        }
        guard let hidden = temporaryPath else { return }
        if overwrite {
            guard rename(hidden, destination) == 0 else { throw fileError(errno, action: "rename onto", path: destination) }
        } else {
            try renameWithoutReplacing(hidden)
        }
        forgetTemporaryPath()
    }

    private func renameWithoutReplacing(_ path: String) throws(CofferCoreError) {
        if coffer_rename_noreplace(path, destination) == 0 { return }
        guard errno == ENOSYS || errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP else { throw namingError(errno) }
        // A file system without RENAME_NOREPLACE: link(2) refuses an existing name just the same.
        guard link(path, destination) == 0 else { throw namingError(errno) }
        unlink(path)
    }

    /// Links the unnamed file under a fresh hidden name beside the destination, registered for removal
    /// on signals, and keeps that name in `temporaryPath`.
    private func linkUnderHiddenName() throws(CofferCoreError) {
        let base = destination.split(separator: "/").last.map(String.init) ?? destination
        for _ in 0..<16 {
            // A name, not a secret: the system generator through the standard library is enough.
            let suffix = String(UInt64.random(in: 0..<(1 << 48)), radix: 36)
            let hidden = "\(folder)/.\(base).coffer-\(suffix)"
            let slot = coffer_cleanup_register(hidden)
            if coffer_link_unnamed(descriptor, hidden) == 0 {
                temporaryPath = hidden
                cleanupSlot = slot
                return
            }
            let code = errno
            coffer_cleanup_unregister(slot)
            guard code == EEXIST else { throw fileError(code, action: "create a file in", path: folder) }
        }
        throw CofferCoreError(.ioFailure, "cannot find a free temporary name in '\(folder)'")
    }

    private func namingError(_ code: Int32) -> CofferCoreError {
        guard code == EEXIST else { return fileError(code, action: "create", path: destination) }
        return CofferCoreError(
            .fileExists,
            "'\(destination)' appeared while it was being written; it was left as it is and the new output discarded"
        )
    }

    /// Drops the hidden name from the signal cleanup (it no longer exists, or is about to be removed).
    private func forgetTemporaryPath() {
        coffer_cleanup_unregister(cleanupSlot)
        cleanupSlot = -1
        temporaryPath = nil
    }

    /// Discards everything written; the destination is left as it was.
    public func abandon() {
        guard !finished else { return }
        finished = true
        cleanUp()
    }

    private func releaseBuffer() {
        guard let buffer else { return }
        // The buffer may hold plaintext: wipe it before giving it back.
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.deallocate()
        self.buffer = nil
    }

    private func cleanUp() {
        // Stop the writer thread before the descriptor closes; its errors no longer matter.
        try? background?.finish()
        background = nil
        releaseBuffer()
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        if let temporaryPath { unlink(temporaryPath) }
        forgetTemporaryPath()
    }

    deinit { abandon() }
}
