public import CofferTesting
#if canImport(Glibc)
import Glibc
#endif

/// A tmpfs of a few blocks mounted on a fresh temporary folder, unmounted when released: a disk that
/// fills up, for tests of what a write does on a full disk. Mounting needs root (``canMount``).
public final class SmallDisk: Sendable {
    /// The folder the tmpfs is mounted on.
    public let folder: TemporaryDirectory
    /// Its path.
    public var path: String { folder.path }

    /// Whether this process may mount a tmpfs (root, and a kernel that lets it).
    public static let canMount: Bool = {
        #if os(Linux)
        guard getuid() == 0, let probe = try? TemporaryDirectory() else { return false }
        guard mount("tmpfs", probe.path, "tmpfs", 0, "size=64k") == 0 else { return false }
        umount(probe.path)
        return true
        #else
        return false
        #endif
    }()

    /// Mounts a tmpfs of `size` (`mount`'s spelling: `1m`, `64k`) on a new temporary folder.
    /// - Throws: ``SmallDiskError`` when the mount fails.
    public init(size: String = "1m") throws {
        folder = try TemporaryDirectory()
        #if os(Linux)
        guard mount("tmpfs", folder.path, "tmpfs", 0, "size=\(size),mode=0700") == 0 else { throw SmallDiskError(errno: errno) }
        #else
        throw SmallDiskError(errno: ENOSYS)
        #endif
    }

    deinit {
        #if os(Linux)
        umount(path)
        #endif
    }

    /// Fills the disk to its last block with a file named `name`, which ``free(_:)`` removes.
    public func fill(_ name: String = "filler") {
        let descriptor = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        // The last partial block, byte by byte.
        while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, 1) }) > 0 {}
    }

    /// Removes a file ``fill(_:)`` made, giving its space back.
    public func free(_ name: String = "filler") {
        unlink(path + "/" + name)
    }
}

/// A tmpfs could not be mounted.
public struct SmallDiskError: Error, CustomStringConvertible {
    /// The `errno` of `mount(2)`.
    public let errno: Int32
    public var description: String { "mount(tmpfs) failed: errno \(errno)" }
}
