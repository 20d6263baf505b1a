@testable import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two ways a writer can hold its data before commit: a file without a name (Linux), and the
/// fallback, a hidden temporary name.
enum WriterMode: String, CaseIterable, CustomTestStringConvertible {
    case unnamed, hiddenName
    var testDescription: String { rawValue }
    var allowsUnnamed: Bool { self == .unnamed }
}

@Suite("Whole-or-nothing files")
struct WholeOrNothingFileTests {
    static func writer(_ destination: String, overwrite: Bool = false, mode: WriterMode, background: Bool = false) throws -> AtomicFileWriter {
        try AtomicFileWriter(destination: destination, overwrite: overwrite, durable: true, background: background, allowsUnnamed: mode.allowsUnnamed)
    }

    /// While it is being written, the output has no name at all on Linux: nothing a backup, a sync tool
    /// or a crash could find. (Before issue 20 a `.NAME.coffer-XXXXXX` file sat beside the destination.)
    @Test func nothingIsVisibleBeforeCommit() throws {
        let folder = try TemporaryDirectory()
        let writer = try AtomicFileWriter(destination: folder.path("out"))
        try writer.write(Array("partial plaintext".utf8))
        #if os(Linux)
        #expect(writer.isUnnamed)
        #expect(try folder.contents().isEmpty, "no file of any name while writing")
        #endif
        try writer.commit()
        #expect(try folder.contents() == ["out"])
        #expect(try String(contentsOfFile: folder.path("out"), encoding: .utf8) == "partial plaintext")
    }

    /// The no-overwrite promise holds at the instant of naming, not only when the writer was made: a
    /// file that appeared meanwhile is left untouched and the commit fails with `.fileExists`.
    @Test(arguments: WriterMode.allCases, [false, true])
    func aFileCreatedMeanwhileIsNeverReplaced(mode: WriterMode, background: Bool) throws {
        let folder = try TemporaryDirectory()
        let target = folder.path("out")
        let writer = try WholeOrNothingFileTests.writer(target, mode: mode, background: background)
        try writer.write(Array("new".utf8))
        _ = try folder.write("someone else's", to: "out")
        let error = try #require(throws: CofferCoreError.fileExists) { try writer.commit() }
        #expect(error.reason.contains("'\(target)' appeared while it was being written"), "\(error.reason)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "someone else's")
        #expect(try folder.contents() == ["out"], "nothing else is left in the folder")
    }

    @Test(arguments: WriterMode.allCases)
    func overwritingReplacesTheFileWholeAndLeavesNoHiddenName(mode: WriterMode) throws {
        let folder = try TemporaryDirectory()
        let target = try folder.write("old contents", to: "out")
        let writer = try WholeOrNothingFileTests.writer(target, overwrite: true, mode: mode)
        try writer.write(Array("new contents".utf8))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "old contents", "the old file stays until commit")
        try writer.commit()
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new contents")
        #expect(try folder.contents() == ["out"])
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test(arguments: WriterMode.allCases)
    func anExistingDestinationIsRefusedUpFront(mode: WriterMode) throws {
        let folder = try TemporaryDirectory()
        let target = try folder.write("keep", to: "out")
        #expect(throws: CofferCoreError.fileExists) { try WholeOrNothingFileTests.writer(target, mode: mode) }
        #expect(try folder.contents() == ["out"])
    }

    @Test(arguments: WriterMode.allCases)
    func abandoningLeavesNothing(mode: WriterMode) throws {
        let folder = try TemporaryDirectory()
        do {
            let writer = try WholeOrNothingFileTests.writer(folder.path("out"), mode: mode, background: true)
            try writer.write(Fixtures.randomBytes(count: 3 << 20))
            writer.abandon()
        }
        #expect(try folder.contents().isEmpty)
    }

    /// The fallback's hidden file is registered for the signal handlers while it exists, and only then.
    /// (That the handlers remove it is shown on the built binary: FaultTests. Calling
    /// `removeTemporaryFilesNow()` here would remove the files of tests running beside this one.)
    @Test func aFallbackFileIsRegisteredForSignalCleanupWhileItExists() throws {
        let folder = try TemporaryDirectory()
        let writer = try WholeOrNothingFileTests.writer(folder.path("out"), mode: .hiddenName)
        try writer.write(Array("plaintext".utf8))
        #expect(try folder.contents().count == 1, "the fallback writes under a hidden name")
        #expect(writer.isRegisteredForSignalCleanup)
        try writer.commit()
        #expect(!writer.isRegisteredForSignalCleanup)
        #expect(try folder.contents() == ["out"])
        let unnamed = try WholeOrNothingFileTests.writer(folder.path("other"), mode: .unnamed)
        #if os(Linux)
        #expect(!unnamed.isRegisteredForSignalCleanup, "an unnamed file needs no cleanup")
        #endif
        unnamed.abandon()
    }

    @Test func aMissingFolderIsAFileNotFoundErrorNamingIt() throws {
        let folder = try TemporaryDirectory()
        let error = try #require(throws: CofferCoreError.fileNotFound) { try AtomicFileWriter(destination: folder.path("absent/out")) }
        #expect(error.reason.contains("'\(folder.path("absent"))'"), "\(error.reason)")
    }
}

@Suite("Atomic file writing")
struct AtomicFileWriterTests {
    @Test func committedFileIsPrivateAndComplete() throws {
        let folder = try TemporaryDirectory()
        let target = folder.path("key")
        let writer = try AtomicFileWriter(destination: target)
        try writer.write(Array("secret".utf8))
        #expect(!FileManager.default.fileExists(atPath: target), "nothing appears before commit")
        try writer.commit()
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "secret")
        let mode = try #require(FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try folder.contents() == ["key"])
    }

    @Test func abandonedWriteLeavesDestinationUntouched() throws {
        let folder = try TemporaryDirectory()
        let target = try folder.write("original", to: "file")
        do {
            let writer = try AtomicFileWriter(destination: target, overwrite: true)
            try writer.write(Array("half-written".utf8))
            writer.abandon()
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "original")
        #expect(try folder.contents() == ["file"], "no temporary file is left behind")
    }

    @Test func releasedWriterCleansUp() throws {
        let folder = try TemporaryDirectory()
        do {
            let writer = try AtomicFileWriter(destination: folder.path("out"))
            try writer.write(Array("partial".utf8))
        }
        #expect(try folder.contents() == [])
    }

    @Test func existingFileIsRefusedUnlessOverwriting() throws {
        let folder = try TemporaryDirectory()
        let target = try folder.write("keep", to: "file")
        #expect(throws: CofferCoreError.self) { try AtomicFileWriter(destination: target) }
        let writer = try AtomicFileWriter(destination: target, overwrite: true)
        try writer.write(Array("new".utf8))
        try writer.commit()
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new")
    }

    @Test func directoryDestinationIsRefused() throws {
        let folder = try TemporaryDirectory()
        #expect(throws: CofferCoreError.isDirectory) { try AtomicFileWriter(destination: folder.path, overwrite: true) }
    }
}

@Suite("Atomic writes never replace special files")
struct AtomicSpecialFileTests {
    @Test func devicesAndPipesAreRefused() throws {
        let error = try #require(throws: CofferCoreError.invalidArgument) { try AtomicFileWriter(destination: "/dev/null", overwrite: true) }
        #expect(error.reason.contains("is not a regular file"))
        let folder = try TemporaryDirectory()
        let fifo = folder.path("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: CofferCoreError.self) { try AtomicFileWriter(destination: fifo, overwrite: true) }
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR, "/dev/null is still a device")
    }
}
