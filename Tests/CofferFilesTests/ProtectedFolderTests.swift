import CofferCore
import CofferFiles
import CofferTestSupport
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Modes and the backup attribute, checked on the real file system of the temporary folder.
@Suite("Protected folders")
struct ProtectedFolderTests {
    private func mode(_ path: String) -> UInt16 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt16(info.st_mode & 0o7777) : 0
    }

    /// The attribute as the kernel stores it, read without CofferFiles.
    private func attribute(_ path: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import os,sys; print(os.getxattr(sys.argv[1], 'user.xdg.robots.backup').decode())", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func createsAPrivateFolderExcludedFromBackups() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.path + "/app/data"
        let folder = try ProtectedFolder(path: path)
        #expect(mode(path) == 0o700)
        guard folder.backupExclusion == .excluded else {
            // Allowed only where the file system cannot hold the attribute, and then it must say so.
            guard case .unsupported = folder.backupExclusion else { Issue.record("backup exclusion: \(folder.backupExclusion)"); return }
            #expect(throws: CofferCoreError.self) { try ProtectedFolder(path: path, requiringBackupExclusion: true) }
            return
        }
        #expect(attribute(path) == "false", "the kernel does not hold user.xdg.robots.backup=false")
        #expect(folder.status.isProtected)
        #expect(folder.status.problems.isEmpty)
    }

    @Test func tightensAnExistingFolderAndWritesFilesAtomicallyWith0600() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.path + "/existing"
        #expect(mkdir(path, 0o755) == 0)
        #expect(!ProtectionStatus.of(path).isProtected)
        #expect(ProtectionStatus.of(path).problems.contains { $0.contains("mode 755") })
        let folder = try ProtectedFolder(path: path)
        #expect(mode(path) == 0o700)
        try folder.write(Array("first".utf8), to: "settings.json")
        #expect(mode(path + "/settings.json") == 0o600)
        try folder.write(Array("second".utf8), to: "settings.json")
        #expect(try folder.read("settings.json") == Array("second".utf8))
        #expect(mode(path + "/settings.json") == 0o600)
        // No temporary files left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["settings.json"])
        for bad in ["", ".", "..", "a/b", "../escape"] {
            #expect(throws: CofferCoreError.self) { try folder.write([1], to: bad) }
        }
    }

    @Test func reportsAndClosesEntriesOpenToOthers() throws {
        let temporary = try TemporaryDirectory()
        let folder = try ProtectedFolder(path: temporary.path + "/p")
        #expect(FileManager.default.createFile(atPath: folder.path + "/open.txt", contents: Data([1]), attributes: [.posixPermissions: 0o644]))
        #expect(mkdir(folder.path + "/sub", 0o755) == 0)
        let status = folder.status
        #expect(Set(status.exposedEntries) == ["open.txt", "sub"])
        #expect(!status.isProtected)
        #expect(Set(folder.tightenContents()) == ["open.txt", "sub"])
        #expect(mode(folder.path + "/open.txt") == 0o600 && mode(folder.path + "/sub") == 0o700)
        #expect(folder.status.exposedEntries.isEmpty)
    }

    @Test func refusesWhatIsNotAFolderOfYourOwn() throws {
        let temporary = try TemporaryDirectory()
        let file = temporary.path + "/file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data([1])))
        #expect(throws: CofferCoreError.self) { try ProtectedFolder(path: file) }
        #expect(symlink(temporary.path, temporary.path + "/link") == 0)
        #expect(throws: CofferCoreError.self) { try ProtectedFolder(path: temporary.path + "/link") }
        #expect(!ProtectionStatus.of(file).isFolder)
        if geteuid() == 0 {
            // root: a folder owned by someone else.
            let other = temporary.path + "/other"
            #expect(mkdir(other, 0o700) == 0 && chown(other, 65534, 65534) == 0)
            #expect(throws: CofferCoreError.self) { try ProtectedFolder(path: other) }
            #expect(!ProtectionStatus.of(other).isOwnedByCurrentUser)
        }
    }

    @Test func applicationDataFollowsXDG() throws {
        let temporary = try TemporaryDirectory()
        let folder = try ProtectedFolder.applicationData(named: "com.example.app", environment: ["XDG_DATA_HOME": temporary.path + "/xdg"])
        #expect(folder.path == temporary.path + "/xdg/com.example.app")
        #expect(try DataLocation.userData(environment: ["HOME": "/home/u"]) == "/home/u/.local/share")
        #expect(throws: CofferCoreError.self) { try ProtectedFolder.applicationData(named: "../x", environment: ["XDG_DATA_HOME": temporary.path]) }
        #expect(throws: CofferCoreError.self) { try DataLocation.userData(environment: [:]) }
    }
}
