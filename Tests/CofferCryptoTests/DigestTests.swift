import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Digests")
struct DigestTests {
    /// FIPS 180-4 / FIPS 202 "abc" answers (also in NIST's example files).
    static let abc: [(DigestAlgorithm, String)] = [
        (.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (.sha384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
        (.sha512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
        (.sha512_256, "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"),
        (.sha3_256, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"),
        (.sha3_384, "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25"),
        (.sha3_512, "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"),
        (.insecureSHA1, "a9993e364706816aba3e25717850c26c9cd0d89d"),
        (.insecureMD5, "900150983cd24fb0d6963f7d28e17f72"),
    ]

    @Test func knownAnswersForEveryAlgorithm() {
        #expect(Set(Self.abc.map(\.0)) == Set(DigestAlgorithm.allCases), "every algorithm has a known answer")
        for (algorithm, expected) in Self.abc {
            let digest = algorithm.hash("abc")
            #expect(digest.hex == expected, "\(algorithm)")
            #expect(digest.bytes.count == algorithm.byteCount)
            #expect(digest.algorithm == algorithm)
        }
    }

    @Test func stringDataAndBytesAgree() {
        let text = "The quick brown fox jumps over the lazy dog ✓"
        for algorithm in DigestAlgorithm.allCases {
            let fromString = algorithm.hash(text)
            #expect(algorithm.hash(Data(text.utf8)) == fromString)
            #expect(algorithm.hash(Array(text.utf8)) == fromString)
            #expect(algorithm.hash(Array(text.utf8)[...]) == fromString)
            // A non-contiguous sequence takes the buffered path.
            #expect(algorithm.hash(AnySequence(Array(text.utf8))) == fromString)
        }
    }

    @Test func incrementalEqualsOneShotAtEverySplit() {
        let bytes = Fixtures.randomBytes(count: 300)
        for algorithm in DigestAlgorithm.allCases {
            let expected = algorithm.hash(bytes)
            for split in stride(from: 0, through: bytes.count, by: 37) {
                var digester = Digester(algorithm)
                digester.update(bytes[..<split])
                digester.update(bytes[split...])
                #expect(digester.finalize() == expected, "\(algorithm) split at \(split)")
            }
        }
    }

    @Test func millionAs() {
        var digester = Digester(.sha256)
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { digester.update(block) }
        #expect(digester.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func finalizeCanBeRepeatedAndContinued() {
        var digester = Digester(.sha256)
        digester.update("ab")
        let partial = digester.finalize()
        #expect(partial == DigestAlgorithm.sha256.hash("ab"))
        digester.update("c")
        #expect(digester.finalize() == DigestAlgorithm.sha256.hash("abc"))
    }

    @Test func copiesAreIndependent() {
        var first = Digester(.sha512)
        first.update("shared ")
        var second = first
        first.update("one")
        second.update("two")
        #expect(first.finalize() == DigestAlgorithm.sha512.hash("shared one"))
        #expect(second.finalize() == DigestAlgorithm.sha512.hash("shared two"))
    }

    @Test func namesResolve() {
        #expect(DigestAlgorithm(name: "SHA-256") == .sha256)
        #expect(DigestAlgorithm(name: "sha3-512") == .sha3_512)
        #expect(DigestAlgorithm(name: "SHA-512/256") == .sha512_256)
        #expect(DigestAlgorithm(name: "insecure-md5") == .insecureMD5)
        #expect(DigestAlgorithm(name: "md5") == nil, "broken algorithms need their insecure- name")
        #expect(DigestAlgorithm(name: "sha1") == nil)
        #expect(DigestAlgorithm.insecureMD5.isInsecure && DigestAlgorithm.insecureSHA1.isInsecure)
        #expect(!DigestAlgorithm.recommended.contains { $0.isInsecure })
    }

    @Test func digestValueChecksLength() throws {
        #expect(throws: CofferCryptoError.self) { try DigestValue(algorithm: .sha256, bytes: [1, 2, 3]) }
        let value = try DigestValue(algorithm: .insecureMD5, bytes: Array(repeating: 0, count: 16))
        #expect(value.description == "insecure-md5:" + String(repeating: "0", count: 32))
    }

    @Test func encodings() {
        let digest = DigestAlgorithm.sha256.hash("")
        #expect(digest.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(digest.base64 == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        #expect(digest.base64URL == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU")
        #expect(digest.matches(Array(digest.bytes)))
        #expect(!digest.matches(Array(digest.bytes.dropLast())))
    }
}

@Suite("File digests")
struct FileDigestTests {
    static let chunk = FileReader.defaultChunkSize

    @Test(arguments: [0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk + 17])
    func fileEqualsMemoryAtChunkBoundaries(size: Int) throws {
        let folder = try TemporaryDirectory()
        let bytes = Fixtures.randomBytes(count: size)
        let path = try folder.write(bytes, to: "input.bin")
        for algorithm in DigestAlgorithm.allCases {
            #expect(try algorithm.hash(fileAtPath: path) == algorithm.hash(bytes), "\(algorithm) at \(size) bytes")
        }
    }

    @Test func progressReportsEveryChunkAndTheTotal() throws {
        let folder = try TemporaryDirectory()
        let size = 3 * Self.chunk + 5
        let path = try folder.write(Fixtures.randomBytes(count: size), to: "input.bin")
        var reports: [Int64] = []
        _ = try DigestAlgorithm.sha256.hash(fileAtPath: path) { reports.append($0) }
        #expect(reports == [1, 2, 3].map { Int64($0 * Self.chunk) } + [Int64(size)])
    }

    @Test func unreadableFileThrowsCoreError() {
        #expect(throws: CofferCoreError.fileNotFound) { try DigestAlgorithm.sha256.hash(fileAtPath: "/nonexistent/file") }
    }
}
