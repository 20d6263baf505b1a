@testable import CofferFormats
import CofferTestSupport
import CofferTesting
import Crypto
import Testing

@Suite("Encrypted file sizes")
struct SegmentSizeTests {
    static let segment = 1 << Int(CofferEncryption.defaultSegmentLog)

    /// The sizes the file paths preallocate must be the exact sizes written: the sealed size of a
    /// plaintext, and back.
    @Test(arguments: [0, 1, segment - 1, segment, segment + 1, 16 * segment, 16 * segment + 1, 33 * segment - 5])
    func preallocatedSizesAreExact(size: Int) throws {
        let key = EncryptionKey.generate()
        for cipher in EncryptionCipher.allCases {
            let sealed = try CofferEncryption.encrypt(Fixtures.randomBytes(count: size), to: .key(key), cipher: cipher)
            let source = MemorySource(sealed)
            let header = try EncryptedFileHeader.parse { try source.readPrefix(upTo: $0) }
            let engine = SegmentEngine(cipher: cipher, key: SymmetricKey(size: .bits256), segmentSize: header.segmentSize)
            defer { engine.deallocate() }
            let payload = Int64(sealed.count - header.encodedSize)
            #expect(engine.sealedSize(ofPlaintext: Int64(size)) == payload, "\(cipher) \(size)")
            #expect(engine.plaintextSize(ofSealed: payload) == Int64(size), "\(cipher) \(size)")
        }
    }

    @Test func sizesNoStreamHasGiveNoPlaintext() {
        let engine = SegmentEngine(cipher: .aes256GCM, key: SymmetricKey(size: .bits256), segmentSize: Self.segment)
        defer { engine.deallocate() }
        #expect(engine.plaintextSize(ofSealed: -5) == 0)
        #expect(engine.plaintextSize(ofSealed: 0) == 0)
        #expect(engine.plaintextSize(ofSealed: 15) == 0)
    }
}
