import CofferCore
import CofferFormats
import CofferTestSupport
import CofferTesting
import Testing

/// `AnyFormatDecryptor.decryptToStream`, behind `coffer decrypt -o -` (issue 20): plaintext reaches the
/// stream only once authenticated, and nothing is spooled to disk.
@Suite("Decrypting to a stream")
struct StreamDecryptionTests {
    static func file(_ bytes: [UInt8], in folder: TemporaryDirectory) throws -> FileReader {
        try FileReader(path: folder.write(bytes, to: "input"))
    }

    /// A Coffer file streams chunk by chunk; when it turns out truncated, what was released is exactly
    /// the authenticated chunks before the cut, and the call throws.
    @Test func aTruncatedCofferFileReleasesOnlyWhatAuthenticatedThenThrows() throws {
        let folder = try TemporaryDirectory()
        let keyBytes = Fixtures.randomBytes(count: 32)
        let key = try EncryptionKey(bytes: keyBytes)
        let plaintext = Fixtures.randomBytes(count: 3 << 20)
        let sealed = try CofferEncryption.encrypt(plaintext, to: .key(key))
        var released: [UInt8] = []
        #expect(throws: CofferFormatsError.authenticationFailed) {
            try AnyFormatDecryptor.decryptToStream(reader: Self.file(Array(sealed.prefix(sealed.count - 100_000)), in: folder), with: .keyBytes(keyBytes)) {
                released.append(contentsOf: $0)
            }
        }
        #expect(released.count == 2 << 20, "the two whole chunks before the cut")
        let prefixIntact = released == Array(plaintext.prefix(released.count))
        #expect(prefixIntact)

        var whole: [UInt8] = []
        let format = try AnyFormatDecryptor.decryptToStream(reader: Self.file(sealed, in: folder), with: .keyBytes(keyBytes)) { whole.append(contentsOf: $0) }
        #expect(format == .coffer)
        let intact = whole == plaintext
        #expect(intact)
    }

    /// RNCryptor authenticates at its end: an altered file releases nothing at all, a good one all of it.
    @Test func anRNCryptorFileIsReleasedOnlyAfterItsEndAuthenticated() throws {
        let folder = try TemporaryDirectory()
        let password = Array("correct horse".utf8)
        let plaintext = Fixtures.randomBytes(count: 300_000)
        var sealed = try RNCryptor.encrypt(plaintext, with: .password(password))
        var released: [UInt8] = []
        _ = try AnyFormatDecryptor.decryptToStream(reader: Self.file(sealed, in: folder), with: .password(password)) { released.append(contentsOf: $0) }
        #expect(released == plaintext)

        sealed[sealed.count - 40] ^= 1
        released = []
        #expect(throws: CofferFormatsError.self) {
            try AnyFormatDecryptor.decryptToStream(reader: Self.file(sealed, in: folder), with: .password(password)) { released.append(contentsOf: $0) }
        }
        #expect(released.isEmpty, "nothing of an altered RNCryptor file reaches the stream")
    }

    /// Held in memory up to the limit, and refused beyond it with `.tooLarge` before anything is released.
    @Test func aLegacyPlaintextAboveTheMemoryLimitIsRefusedWithNothingReleased() throws {
        let folder = try TemporaryDirectory()
        let password = Array("correct horse".utf8)
        let sealed = try OpenSSLEnc.encrypt(Fixtures.randomBytes(count: 200_000), password: password)
        var released = 0
        let error = try #require(throws: CofferFormatsError.tooLarge) {
            try AnyFormatDecryptor.decryptToStream(reader: Self.file(sealed, in: folder), with: .password(password), memoryLimit: 100_000) {
                released += $0.count
            }
        }
        #expect(error.reason.contains("at most 100000 bytes"), "\(error.reason)")
        #expect(released == 0)
    }
}
