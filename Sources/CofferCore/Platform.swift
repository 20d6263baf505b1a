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
