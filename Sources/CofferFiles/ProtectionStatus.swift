#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How well a folder is protected: its mode and owner, its backup exclusion, and the entries inside it
/// that others could read.
public struct ProtectionStatus: Sendable {
    /// The path examined.
    public let path: String
    /// Whether the path exists and is a folder (not a symbolic link to one).
    public let isFolder: Bool
    /// The permission bits, e.g. `0o700`.
    public let mode: UInt16
    /// The owner's user id.
    public let owner: UInt32
    /// Whether the owner is the current (effective) user.
    public let isOwnedByCurrentUser: Bool
    /// The backup mark.
    public let backupExclusion: BackupExclusion
    /// Entries below the folder (relative paths) that grant any permission to group or others.
    public let exposedEntries: [String]

    /// Whether the folder is protected: a folder you own with mode 0700, excluded from backups, with
    /// nothing inside open to group or others.
    public var isProtected: Bool {
        isFolder && isOwnedByCurrentUser && mode == 0o700 && backupExclusion == .excluded && exposedEntries.isEmpty
    }

    /// What is wrong, one phrase per problem; empty when ``isProtected``.
    public var problems: [String] {
        guard isFolder else { return ["'\(path)' is not a folder"] }
        var found: [String] = []
        if !isOwnedByCurrentUser { found.append("owned by user \(owner), not by you") }
        if mode != 0o700 { found.append("mode \(String(mode, radix: 8)) instead of 700") }
        if backupExclusion != .excluded { found.append(backupExclusion.description) }
        if !exposedEntries.isEmpty {
            let listed = exposedEntries.prefix(5).joined(separator: ", ")
            found.append("\(exposedEntries.count) entr\(exposedEntries.count == 1 ? "y" : "ies") open to group or others (\(listed)\(exposedEntries.count > 5 ? ", …" : ""))")
        }
        return found
    }

    /// Examines `path` without changing anything (at most 10,000 entries below it are looked at).
    public static func of(_ path: String) -> ProtectionStatus {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            return ProtectionStatus(path: path, isFolder: false, mode: 0, owner: 0, isOwnedByCurrentUser: false, backupExclusion: .notExcluded, exposedEntries: [])
        }
        var exposed: [String] = []
        var budget = 10_000
        collectExposed(in: path, relative: "", into: &exposed, budget: &budget)
        return ProtectionStatus(
            path: path,
            isFolder: true,
            mode: UInt16(info.st_mode & 0o7777),
            owner: UInt32(info.st_uid),
            isOwnedByCurrentUser: info.st_uid == geteuid(),
            backupExclusion: BackupMark.read(path),
            exposedEntries: exposed
        )
    }

    /// Removes group and other permissions from every entry below `path` that the current user owns
    /// (symbolic links are not followed); returns the relative paths changed.
    static func tightenEntries(below path: String) -> [String] {
        var changed: [String] = []
        var budget = 100_000
        walk(path, relative: "", budget: &budget) { full, relative, info in
            guard info.st_uid == geteuid(), info.st_mode & S_IFMT != S_IFLNK, info.st_mode & 0o077 != 0 else { return }
            if chmod(full, mode_t(info.st_mode & 0o7700)) == 0 { changed.append(relative) }
        }
        return changed
    }

    private static func collectExposed(in path: String, relative: String, into exposed: inout [String], budget: inout Int) {
        walk(path, relative: relative, budget: &budget) { _, relative, info in
            if info.st_mode & S_IFMT != S_IFLNK && info.st_mode & 0o077 != 0 { exposed.append(relative) }
        }
    }

    private static func walk(_ path: String, relative: String, budget: inout Int, visit: (String, String, stat) -> Void) {
        guard let directory = opendir(path) else { return }
        defer { closedir(directory) }
        while budget > 0, let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            budget -= 1
            let full = path + "/" + name
            let inner = relative.isEmpty ? name : relative + "/" + name
            var info = stat()
            guard lstat(full, &info) == 0 else { continue }
            visit(full, inner, info)
            if info.st_mode & S_IFMT == S_IFDIR { walk(full, relative: inner, budget: &budget, visit: visit) }
        }
    }
}
