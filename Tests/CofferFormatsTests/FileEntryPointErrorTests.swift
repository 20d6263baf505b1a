import CofferCore
import CofferCrypto
import CofferFormats
import CofferTesting
import Foundation
import Testing

/// Entry points that read files throw a closed set: the reader's `CofferCoreError` alone where nothing
/// else can fail (typed, so `error.code` needs no cast), and `CofferCoreError` for I/O plus the module's
/// error for content where both can.
@Suite("File entry point errors")
struct FileEntryPointErrorTests {
    @Test func readingAloneThrowsCofferCoreErrorTyped() throws {
        let folder = try TemporaryDirectory()
        let missing = folder.path("missing")
        // These compile only because the thrown type is CofferCoreError: `error.code` without a cast.
        do { _ = try DigestAlgorithm.sha256.hash(fileAtPath: missing); Issue.record("hashed a missing file") } catch {
            #expect(error.code == .fileNotFound)
        }
        let key = try SigningKey.generate(.ed25519)
        let file = try SignatureFile.sign(digest: DigestAlgorithm.sha512.hash([1, 2, 3]), with: key, comment: "")
        do { _ = try file.verify(fileAtPath: missing, with: key.verifyingKey); Issue.record("verified a missing file") } catch {
            #expect(error.code == .fileNotFound)
        }
        let small = try folder.write([1, 2, 3], to: "small")
        do { #expect(try FileReader.open(small).readAll(limit: 2) == nil, "over the limit is nil, not an error") } catch {
            Issue.record("reading failed: \(error.code)")
        }
    }

    @Test func filesGiveIOErrorsAsCofferCoreErrorAndContentErrorsAsCofferFormatsError() throws {
        let folder = try TemporaryDirectory()
        let password = DecryptionCredential.password(Array("pw".utf8))
        #expect(throws: CofferCoreError.fileNotFound) {
            try CofferEncryption.decryptFile(atPath: folder.path("missing"), toPath: folder.path("out"), with: password)
        }
        let garbage = try folder.write(Array(repeating: 0x41, count: 100), to: "garbage")
        #expect(throws: CofferFormatsError.self) {
            try CofferEncryption.decryptFile(atPath: garbage, toPath: folder.path("out"), with: password)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("out")), "nothing half-written")
        #expect(throws: CofferFormatsError.self) { try CofferEncryption.inspect(reader: FileReader.open(garbage)) }
        let exists = try folder.write([1], to: "exists")
        #expect(throws: CofferCoreError.fileExists) {
            try CofferEncryption.encryptFile(atPath: garbage, toPath: exists, to: .password(Array("pw".utf8), .scrypt(logN: 10, r: 8, p: 1)))
        }
    }
}
