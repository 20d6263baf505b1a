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

/// The calling thread's last C error as a message, e.g. "No such file or directory".
func systemErrorMessage(_ code: Int32) -> String {
    guard let message = strerror(code) else { return "error \(code)" }
    return String(cString: message)
}

/// Turns an `errno` from a failed system call on `path` into a typed error that names the path.
func fileError(_ code: Int32, action: String, path: String) -> CofferCoreError {
    let reason = "cannot \(action) '\(path)': \(systemErrorMessage(code).lowercasedFirst)"
    switch code {
    case ENOENT, ENOTDIR: return CofferCoreError(.fileNotFound, reason)
    case EACCES, EPERM: return CofferCoreError(.permissionDenied, reason)
    case EISDIR: return CofferCoreError(.isDirectory, reason)
    default: return CofferCoreError(.ioFailure, reason)
    }
}

extension String {
    var lowercasedFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }
}

/// `open(2)` for reading, close-on-exec; returns the descriptor or -1 with `errno` set.
func openForReading(_ path: String) -> Int32 {
    path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
}

/// The most one `write(2)` call is given: 1 MiB.
///
/// A call that covers a whole 2 MiB-aligned range of a file lets Linux (ext4 with large folios, 6.16
/// and later) cache that range in one 2 MiB folio. On virtual machines whose host hands out such blocks
/// lazily, those writes measured 10 to 15 times slower here (1 GiB in 2.9 s against 0.17–0.26 s in
/// 1 MiB calls; docs/PERFORMANCE.md). A 1 MiB call never covers such a range, and costs nothing more.
let maximumWriteSize = 1 << 20

/// Writes all of `bytes` to a file descriptor, retrying short writes and interrupted calls, in calls
/// of at most 1 MiB.
/// - Throws: ``CofferCoreError`` `.ioFailure` naming `name`, e.g. when the disk is full or the reader
///   of a pipe has gone.
public func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, name: String) throws(CofferCoreError) {
    guard var base = bytes.baseAddress else { return }
    var remaining = bytes.count
    while remaining > 0 {
        let written = write(descriptor, base, min(remaining, maximumWriteSize))
        if written > 0 {
            remaining -= written
            base += written
        } else if written < 0 && errno != EINTR {
            throw fileError(errno, action: "write", path: name)
        }
    }
}

/// Flushes a folder to stable storage, so that names created, renamed or removed in it survive a crash.
/// File systems that cannot flush a folder (EINVAL) keep names durable by other means.
/// - Throws: ``CofferCoreError`` naming the folder.
public func syncFolder(_ path: String) throws(CofferCoreError) {
    if coffer_sync_folder(path) != 0 && errno != EINVAL {
        throw fileError(errno, action: "flush the folder", path: path)
    }
}

/// Creates a new file `folder/.prefix-XXXXXX` with mode 0600 (`mkstemp`), returning its descriptor and path.
func makeTemporaryFile(in folder: String, prefix: String) throws(CofferCoreError) -> (descriptor: Int32, path: String) {
    var template = Array("\(folder)/.\(prefix)-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
        guard let base = buffer.baseAddress else { return -1 }
        return mkstemp(base)
    }
    guard descriptor >= 0 else { throw fileError(errno, action: "create a file in", path: folder) }
    // mkstemp already uses 0600 on glibc and Darwin; fchmod makes the guarantee explicit.
    _ = fchmod(descriptor, 0o600)
    let path = template.withUnsafeBufferPointer { buffer in
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return (descriptor, path)
}
