#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
import Foundation
#endif
import CofferCore
import CCofferSupport

/// Whether a folder is excluded from backups.
public enum BackupExclusion: Hashable, Sendable, CustomStringConvertible {
    /// Marked: the freedesktop attribute `user.xdg.robots.backup` is `false` (Linux), or
    /// `isExcludedFromBackup` is set (Apple platforms).
    case excluded
    /// Not marked.
    case notExcluded
    /// The file system cannot hold the mark (no user extended attributes); backups will include it.
    case unsupported(String)

    public var description: String {
        switch self {
        case .excluded: "excluded from backups"
        case .notExcluded: "not excluded from backups"
        case .unsupported(let reason): "cannot be excluded from backups: \(reason)"
        }
    }
}

enum BackupMark {
    /// The freedesktop.org attribute backup tools honour (Déjà Dup, Borg with the right option, …).
    static let attribute = "user.xdg.robots.backup"

    /// Marks `path` as excluded from backups.
    static func apply(to path: String) throws(CofferCoreError) -> BackupExclusion {
        #if canImport(Darwin)
        var url = URL(fileURLWithPath: path, isDirectory: true)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        do {
            try url.setResourceValues(values)
        } catch {
            throw CofferCoreError(.ioFailure, "cannot exclude '\(path)' from backups: \(error)", underlying: error)
        }
        return .excluded
        #else
        let value = Array("false".utf8)
        let status = value.withUnsafeBytes { bytes in
            coffer_set_attribute(path, attribute, bytes.baseAddress, UInt(bytes.count))
        }
        if status == 0 { return .excluded }
        let code = errno
        if code == ENOTSUP || code == EOPNOTSUPP {
            return .unsupported("the file system does not support user extended attributes, so backup tools cannot be told to skip it")
        }
        throw CofferCoreError(code == EACCES || code == EPERM ? .permissionDenied : .ioFailure,
                              "cannot set \(attribute) on '\(path)': \(String(cString: strerror(code)))")
        #endif
    }

    /// Reads the mark of `path`.
    static func read(_ path: String) -> BackupExclusion {
        #if canImport(Darwin)
        let url = URL(fileURLWithPath: path, isDirectory: true)
        let excluded = (try? url.resourceValues(forKeys: [.isExcludedFromBackupKey]).isExcludedFromBackup) ?? nil
        return excluded == true ? .excluded : .notExcluded
        #else
        var buffer = [UInt8](repeating: 0, count: 16)
        let length = buffer.withUnsafeMutableBytes { bytes in
            coffer_get_attribute(path, attribute, bytes.baseAddress, UInt(bytes.count))
        }
        if length >= 0 {
            return String(decoding: buffer.prefix(length), as: UTF8.self) == "false" ? .excluded : .notExcluded
        }
        let code = errno
        if code == ENOTSUP || code == EOPNOTSUPP {
            return .unsupported("the file system does not support user extended attributes")
        }
        return .notExcluded
        #endif
    }
}
