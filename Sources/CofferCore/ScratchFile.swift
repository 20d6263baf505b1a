#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A private temporary file with no name: created 0600 in the temporary folder and unlinked at once, so
/// it disappears when closed, even if the process is killed. For holding data (decrypted plaintext) until
/// it is known to be good, then replaying it.
public final class ScratchFile {
    private let descriptor: Int32
    private var size: Int64 = 0

    /// Creates the file in `$TMPDIR` (or `/tmp`).
    public init() throws(CofferCoreError) {
        let folder = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        let (descriptor, path) = try makeTemporaryFile(in: folder, prefix: "coffer-scratch")
        unlink(path)
        self.descriptor = descriptor
    }

    /// Appends bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(CofferCoreError) {
        try writeAll(bytes, to: descriptor, name: "a scratch file")
        size += Int64(bytes.count)
    }

    /// Calls `body` with the whole contents, front to back, in 1 MiB chunks.
    public func replay(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        var offset: Int64 = 0
        while offset < size {
            let count = pread(descriptor, buffer.baseAddress, min(buffer.count, Int(size - offset)), off_t(offset))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw fileError(errno, action: "read back", path: "a scratch file") }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }

    deinit { close(descriptor) }
}
