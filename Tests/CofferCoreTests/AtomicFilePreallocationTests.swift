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

@Suite("Atomic file preallocation")
struct AtomicFilePreallocationTests {
    /// The size and allocated bytes of the file a writer is writing (it has no name yet).
    static func fileBeingWritten(by writer: AtomicFileWriter) throws -> (size: Int64, allocated: Int64) {
        var info = stat()
        try #require(fstat(writer.fileDescriptor, &info) == 0)
        return (Int64(info.st_size), Int64(info.st_blocks) * 512)
    }

    @Test(arguments: [false, true])
    func theCommittedFileHoldsExactlyWhatWasWritten(background: Bool) throws {
        let folder = try TemporaryDirectory()
        let target = folder.path("out")
        let writer = try AtomicFileWriter(destination: target, durable: false, background: background)
        try writer.preallocate(toSize: 4 << 20)
        #if os(Linux)
        let before = try Self.fileBeingWritten(by: writer)
        #expect(before.size == 4 << 20, "the temporary file is grown to the preallocated size")
        #expect(before.allocated >= 4 << 20, "and its blocks are allocated up front")
        #endif
        let first = Fixtures.randomBytes(count: (1 << 20) + 3)
        let second = Fixtures.randomBytes(count: (2 << 20) + 2)
        try writer.write(first)
        try writer.write(reserving: second.count) { buffer in
            buffer.copyBytes(from: second)
            return second.count
        }
        try writer.commit()
        let written = try Fixtures.contents(ofFile: target)
        #expect(written.count == first.count + second.count, "the preallocated tail is trimmed")
        let intact = written == first + second  // a Bool: Swift Testing would diff megabyte arrays for ever
        #expect(intact, "the bytes written, in order")
        #expect(try folder.contents() == ["out"])
    }

    @Test(arguments: [false, true])
    func writingPastThePreallocationGrowsTheFile(background: Bool) throws {
        let folder = try TemporaryDirectory()
        let target = folder.path("out")
        let writer = try AtomicFileWriter(destination: target, durable: false, background: background)
        try writer.preallocate(toSize: 100)
        try writer.preallocate(toSize: 10)  // smaller than what is already allocated: nothing changes
        let bytes = Fixtures.randomBytes(count: (3 << 20) + 1)
        try writer.write(bytes)
        try writer.commit()
        let written = try Fixtures.contents(ofFile: target)
        #expect(written.count == bytes.count)
        let intact = written == bytes
        #expect(intact, "the bytes written, in order")
    }

    @Test func nothingWrittenAfterPreallocatingCommitsAnEmptyFile() throws {
        let folder = try TemporaryDirectory()
        let target = folder.path("out")
        let writer = try AtomicFileWriter(destination: target, durable: false)
        try writer.preallocate(toSize: 1 << 20)
        try writer.commit()
        #expect(try Fixtures.contents(ofFile: target).isEmpty)
    }

    @Test(arguments: [false, true])
    func abandoningAfterPreallocatingLeavesNothing(background: Bool) throws {
        let folder = try TemporaryDirectory()
        let target = try folder.write("original", to: "file")
        do {
            let writer = try AtomicFileWriter(destination: target, overwrite: true, durable: false, background: background)
            try writer.preallocate(toSize: 8 << 20)
            try writer.write(Fixtures.randomBytes(count: 1 << 20))
            writer.abandon()
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "original")
        #expect(try folder.contents() == ["file"])
    }

    /// A size no disk here holds (1 EiB): the file system refuses it up front (ENOSPC or EFBIG), and the
    /// error names the destination.
    @Test func aSizeTheDiskCannotHoldFailsBeforeAnyWrite() throws {
        let folder = try TemporaryDirectory()
        let target = try folder.write("original", to: "file")
        let writer = try AtomicFileWriter(destination: target, overwrite: true, durable: false)
        #if os(Linux)
        let error = try #require(throws: CofferCoreError.ioFailure) { try writer.preallocate(toSize: 1 << 60) }
        #expect(error.reason.hasPrefix("cannot preallocate 1152921504606846976 bytes for '\(target)': "), "\(error.reason)")
        #else
        try? writer.preallocate(toSize: 1 << 60)
        #endif
        writer.abandon()
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "original")
        #expect(try folder.contents() == ["file"])
    }
}
