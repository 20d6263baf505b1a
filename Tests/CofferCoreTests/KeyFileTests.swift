import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// One reader for key, certificate and secret files: one limit, typed errors, permissions reported.
@Suite("Key files")
struct KeyFileTests {
    @Test func readsSmallFilesAndReportsPermissions() throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write([1, 2, 3], to: "k")
        #expect(chmod(path, 0o600) == 0)
        var file = try KeyFile(contentsOf: path)
        #expect(file.bytes == [1, 2, 3] && file.permissions == 0o600 && !file.isExposedToOtherUsers)
        file.wipe()
        #expect(file.bytes.isEmpty)
        #expect(chmod(path, 0o640) == 0)
        #expect(try KeyFile(contentsOf: path).isExposedToOtherUsers)
    }

    @Test func theLimitIsOneMebibyteExactly() throws {
        let folder = try TemporaryDirectory()
        let fits = try folder.write([UInt8](repeating: 7, count: KeyFile.maximumSize), to: "fits")
        #expect(try KeyFile(contentsOf: fits).bytes.count == 1 << 20)
        let over = try folder.write([UInt8](repeating: 7, count: KeyFile.maximumSize + 1), to: "over")
        #expect(throws: CofferCoreError.invalidArgument) { _ = try KeyFile(contentsOf: over) }
        #expect(throws: CofferCoreError.fileNotFound) { _ = try KeyFile(contentsOf: folder.path("absent")) }
        #expect(throws: CofferCoreError.isDirectory) { _ = try KeyFile(contentsOf: folder.path) }
    }

    @Test func encodingsDecodeWithOneTrailingLineBreak() throws {
        #expect(try SecretEncoding.hex.decode(Array("0aff\r\n".utf8)) == [0x0A, 0xFF])
        #expect(try SecretEncoding.base64.decode(Array("AQID\n".utf8)) == [1, 2, 3])
        #expect(try SecretEncoding.raw.decode(Array("ab\n".utf8)) == Array("ab\n".utf8), "raw bytes keep their line feed")
        #expect(throws: CofferCoreError.self) { try SecretEncoding.hex.decode(Array("0a\n\n".utf8)) }
        #expect(throws: CofferCoreError.self) { try SecretEncoding.base64.decode(Array("not base64".utf8)) }
    }

    @Test func detectionFindsTheOneEncodingOfTheRightLength() {
        let key = (0..<32).map { UInt8($0) }
        #expect(SecretEncoding.detect(key, lengths: [32]) == key)
        #expect(SecretEncoding.detect(Array((Hex.encode(key) + "\n").utf8), lengths: [32]) == key)
        #expect(SecretEncoding.detect(Array((Base64.encode(key) + "\r\n").utf8), lengths: [32, 64]) == key)
        #expect(SecretEncoding.detect(Array("short".utf8), lengths: [32]) == nil)
    }
}
