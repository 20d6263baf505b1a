#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
import Foundation
#endif
public import CofferCore

/// An application's private data folder: mode 0700, owned by the current user, excluded from backups,
/// with files written atomically at mode 0600.
///
/// ```swift
/// let folder = try ProtectedFolder.applicationData(named: "com.example.notes")
/// try folder.write(Array(json.utf8), to: "settings.json")
/// if case .unsupported(let why) = folder.backupExclusion { log.warning("\(why)") }
/// ```
///
/// On Linux backups are excluded with the freedesktop attribute `user.xdg.robots.backup=false`; on Apple
/// platforms with `isExcludedFromBackup`, re-applied after every write (as Apple advises: some writes
/// replace the folder's metadata). A file system without user extended attributes is reported in
/// ``backupExclusion``, never silently ignored; pass `requiringBackupExclusion: true` to make it an error.
public struct ProtectedFolder: Sendable {
    /// The folder's path.
    public let path: String
    /// Whether the folder is excluded from backups, as applied when it was opened.
    public let backupExclusion: BackupExclusion
    private let requiresExclusion: Bool

    /// Opens `path`, creating it (and missing parents) if needed, and protects it: mode 0700 and the
    /// backup exclusion.
    /// - Parameters:
    ///   - path: the folder.
    ///   - requiringBackupExclusion: throw rather than report when the file system cannot hold
    ///     the backup exclusion.
    /// - Throws: `CofferCoreError` when the path is not a folder, belongs to another user, or cannot be
    ///   created or changed.
    public init(path: String, requiringBackupExclusion: Bool = false) throws(CofferCoreError) {
        guard !path.isEmpty else { throw CofferCoreError(.invalidArgument, "the folder path is empty") }
        try Self.createFolder(path)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw CofferCoreError(.ioFailure, "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CofferCoreError(.invalidArgument, "'\(path)' is not a folder (a file or a symbolic link); choose a folder path")
        }
        guard info.st_uid == geteuid() else {
            throw CofferCoreError(.permissionDenied, "'\(path)' belongs to user \(info.st_uid), not to you (\(geteuid())); a protected folder must be your own")
        }
        if info.st_mode & 0o7777 != 0o700, chmod(path, 0o700) != 0 {
            throw CofferCoreError(.permissionDenied, "cannot set mode 0700 on '\(path)': \(String(cString: strerror(errno)))")
        }
        let exclusion = try BackupMark.apply(to: path)
        if requiringBackupExclusion, case .unsupported(let reason) = exclusion {
            throw CofferCoreError(.ioFailure, "'\(path)' cannot be excluded from backups: \(reason)")
        }
        self.path = path
        self.backupExclusion = exclusion
        self.requiresExclusion = requiringBackupExclusion
    }

    /// The application data folder `name` inside the user's data location (`DataLocation/userData(environment:)`:
    /// `$XDG_DATA_HOME` or `~/.local/share` on Linux, Application Support on Apple platforms), opened as
    /// ``init(path:requiringBackupExclusion:)`` does.
    /// - Throws: `CofferCoreError` `.invalidArgument` for a name that is empty, `.`/`..` or contains `/`;
    ///   or when no home folder is known.
    public static func applicationData(named name: String, environment: [String: String] = DataLocation.currentEnvironment) throws(CofferCoreError) -> ProtectedFolder {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw CofferCoreError(.invalidArgument, "'\(name)' is not a folder name (no '/', not '.' or '..')")
        }
        return try ProtectedFolder(path: try DataLocation.userData(environment: environment) + "/" + name)
    }

    /// Writes `bytes` to `name` in the folder atomically (a temporary file, flushed, then renamed) with
    /// mode 0600, replacing any previous file, and re-applies the backup exclusion.
    /// - Throws: `CofferCoreError` for a name with `/` or `.`/`..`, or when writing fails; the previous
    ///   file is then untouched and no temporary file is left behind.
    public func write(_ bytes: some Sequence<UInt8>, to name: String) throws(CofferCoreError) {
        let destination = try filePath(name)
        let writer = try AtomicFileWriter(destination: destination, overwrite: true, durable: true)
        try writer.write(bytes)
        try writer.commit()
        let exclusion = try BackupMark.apply(to: path)
        if requiresExclusion, case .unsupported(let reason) = exclusion {
            throw CofferCoreError(.ioFailure, "'\(path)' cannot be excluded from backups: \(reason)")
        }
    }

    /// Reads the file `name` in the folder, refusing files larger than `limit` bytes.
    /// - Throws: `CofferCoreError`: `.fileNotFound` and the other file errors, `.invalidArgument` when
    ///   the file is larger than `limit`.
    public func read(_ name: String, limit: Int = 64 << 20) throws -> [UInt8] {
        let file = try filePath(name)
        guard let bytes = try FileReader.open(file).readAll(limit: limit) else {
            throw CofferCoreError(.invalidArgument, "'\(file)' is larger than \(limit) bytes")
        }
        return bytes
    }

    /// Removes group and other permissions from everything below the folder that you own (symbolic
    /// links are not followed); returns the relative paths it changed.
    @discardableResult
    public func tightenContents() -> [String] { ProtectionStatus.tightenEntries(below: path) }

    /// The folder's current protection, as ``ProtectionStatus/of(_:)`` reports it.
    public var status: ProtectionStatus { ProtectionStatus.of(path) }

    private func filePath(_ name: String) throws(CofferCoreError) -> String {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw CofferCoreError(.invalidArgument, "'\(name)' is not a file name inside the folder (no '/', not '.' or '..')")
        }
        return path + "/" + name
    }

    /// `mkdir -p` with mode 0700 for the last component (parents get 0700 too when they are created).
    private static func createFolder(_ path: String) throws(CofferCoreError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw CofferCoreError(errno == EACCES ? .permissionDenied : .ioFailure,
                                      "cannot create '\(prefix)': \(String(cString: strerror(errno)))")
            }
        }
    }
}
