import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Chunked file reading")
struct FileReaderTests {
    // Sizes above four chunks take the read-ahead path (a second thread fills one buffer while the
    // caller consumes the other); the guarantees are the same on both paths.
    @Test(arguments: [0, 1, 4095, 4096, 4097, 3 * 4096, 10_000, 4 * 4096 + 1, 8 * 4096, 25 * 4096 + 123])
    func deliversFullChunksThenTheRest(size: Int) throws {
        let folder = try TemporaryDirectory()
        let bytes = Fixtures.randomBytes(count: size)
        let path = try folder.write(bytes, to: "input")
        let reader = try FileReader(path: path)
        #expect(reader.size == Int64(size))
        var received: [UInt8] = []
        var chunkSizes: [Int] = []
        let total = try reader.forEachChunk(chunkSize: 4096) { chunk in
            received.append(contentsOf: chunk)
            chunkSizes.append(chunk.count)
        }
        #expect(total == Int64(size))
        #expect(received == bytes)
        #expect(chunkSizes.dropLast().allSatisfy { $0 == 4096 })
        #expect(chunkSizes.allSatisfy { $0 > 0 })
        #expect(chunkSizes.count == (size + 4095) / 4096)
    }

    struct Stop: Error {}

    @Test(arguments: [2 * 4096, 40 * 4096])
    func throwingBodyStopsReadingAndPropagates(size: Int) throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(Fixtures.randomBytes(count: size), to: "input")
        let reader = try FileReader(path: path)
        var calls = 0
        #expect(throws: Stop.self) {
            try reader.forEachChunk(chunkSize: 4096) { _ in
                calls += 1
                if calls == 2 { throw Stop() }
            }
        }
        #expect(calls == 2)
    }

    @Test func standardInputStyleReadersWorkOnPipes() throws {
        // A pipe has no size, so it is read inline; content still arrives whole and in order.
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let payload = Fixtures.randomBytes(count: 3000)
        _ = payload.withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
        close(descriptors[1])
        let saved = dup(STDIN_FILENO)
        dup2(descriptors[0], STDIN_FILENO)
        defer {
            dup2(saved, STDIN_FILENO)
            close(saved)
            close(descriptors[0])
        }
        let reader = FileReader.standardInput()
        #expect(reader.size == nil)
        #expect(reader.displayName == "-")
        var received: [UInt8] = []
        try reader.forEachChunk(chunkSize: 1024) { received.append(contentsOf: $0) }
        #expect(received == payload)
    }

    @Test func readAllStopsAtTheLimit() throws {
        let folder = try TemporaryDirectory()
        let bytes = Fixtures.randomBytes(count: 100_000)
        let path = try folder.write(bytes, to: "input")
        #expect(try FileReader(path: path).readAll(limit: 100_000) == bytes)
        #expect(try FileReader(path: path).readAll(limit: 99_999) == nil)
        #expect(try FileReader(path: try folder.write([UInt8](), to: "empty")).readAll(limit: 0) == [])
    }

    @Test func missingFileIsTypedAndNamed() throws {
        let error = try #require(throws: CofferCoreError.fileNotFound) { try FileReader(path: "/nonexistent/coffer-test") }
        #expect(error.reason == "cannot open '/nonexistent/coffer-test': no such file or directory")
    }

    @Test func directoryIsRefused() throws {
        let folder = try TemporaryDirectory()
        let error = try #require(throws: CofferCoreError.isDirectory) { try FileReader(path: folder.path) }
        #expect(error.reason.contains("it is a directory"))
    }

    // Root reads every file whatever its mode, so this runs only as an ordinary user.
    @Test(.enabled(if: geteuid() != 0, "root bypasses file permissions"))
    func unreadableFileIsPermissionDenied() throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write("secret", to: "locked")
        chmod(path, 0)
        #expect(throws: CofferCoreError.permissionDenied) { try FileReader(path: path) }
    }

    @Test func nonPositiveChunkSizeIsRejected() throws {
        let folder = try TemporaryDirectory()
        let reader = try FileReader(path: try folder.write("x", to: "x"))
        #expect(throws: CofferCoreError.self) { try reader.forEachChunk(chunkSize: 0) { _ in } }
    }

    @Test func linesAreSplitAndNumbered() throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write("one\ntwo\r\n\nlast", to: "lines")
        var lines: [(String, Int)] = []
        try FileReader(path: path).forEachLine { line, number in lines.append((String(line), number)) }
        #expect(lines.map(\.0) == ["one", "two\r", "", "last"])
        #expect(lines.map(\.1) == [1, 2, 3, 4])
    }

    @Test func overlongLinesAreCutNotBuffered() throws {
        let folder = try TemporaryDirectory()
        let long = String(repeating: "x", count: 200_000)
        let path = try folder.write("short\n\(long)\nafter\n", to: "lines")
        var lines: [String] = []
        try FileReader(path: path).forEachLine(maximumLength: 1000) { line, _ in lines.append(String(line)) }
        #expect(lines.count == 3)
        #expect(lines[0] == "short")
        #expect(lines[1].utf8.count == 1001)
        #expect(lines[2] == "after")
    }
}
