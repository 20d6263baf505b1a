import CofferCore
import CofferCrypto
@testable import CofferFormats
import CofferTesting
import Foundation
import Testing

/// Armour (docs/FORMAT-ENCRYPTION.md, "Armour"): the writer produces exactly the specified text, the
/// reader takes what the spec lets it tolerate and refuses the rest with a typed error naming the line.
@Suite("Armour")
struct ArmorTests {
    /// The encrypted-format fixed vector, armoured by an independent encoder (Python's base64 module,
    /// lines cut at 64 characters) and pinned here.
    static let armouredVector = """
        -----BEGIN COFFER ENCRYPTED FILE-----
        Q09GRkVSAEUBARABAwBIrev5yk/Ud0pPOfuMyFKQ+GufSemtxmKg8J745mHVrkqh
        FMCnxtTK4lJftHGrNb9srf4S6mZ8WfEq36OIi3jAxQBi1YFvVIxr8+6bPF/jBXQ3
        OGpuvx9R55BNCmRy1viwtUkoOVudtpweb9oncIeFlirXznKOT4nrrhDsWu5YoZ4P
        t1rc8KcWrxMNgZj/4H9eo+Fe9VM=
        -----END COFFER ENCRYPTED FILE-----

        """

    static func decrypt(_ text: String, in folder: TemporaryDirectory) throws -> [UInt8] {
        try decrypt(Array(text.utf8), in: folder)
    }

    /// Through the public entry point a command uses: a file, the format detected.
    static func decrypt(_ text: [UInt8], in folder: TemporaryDirectory) throws -> [UInt8] {
        let path = try folder.write(text, to: "input")
        var plaintext: [UInt8] = []
        let format = try AnyFormatDecryptor.decrypt(reader: FileReader.open(path), with: .keyBytes(Array(0..<32))) {
            plaintext.append(contentsOf: $0)
        }
        #expect(format == .coffer)
        return plaintext
    }

    @Test func theWriterProducesTheSpecifiedText() throws {
        let file = try Hex.decode(EncryptionFixedVectorTests.file)
        #expect(CofferArmor.armor(file) == Self.armouredVector)
        #expect(try CofferArmor.dearmor(Array(Self.armouredVector.utf8)) == file)
        #expect(CofferArmor.armor([]) == "-----BEGIN COFFER ENCRYPTED FILE-----\n-----END COFFER ENCRYPTED FILE-----\n")
    }

    @Test func theVectorDecryptsThroughFormatDetection() throws {
        let folder = try TemporaryDirectory()
        #expect(try Self.decrypt(Self.armouredVector, in: folder) == Array("hello, coffer".utf8))
    }

    /// Whatever pieces the bytes arrive in, the text is the same, and it reads back.
    @Test(arguments: [0, 1, 47, 48, 49, 3 * 48, 65_536, 1_000_003])
    func anySizeWrittenInAnyPiecesReadsBack(size: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var text: [UInt8] = []
        let writer = ArmorWriter { text.append(contentsOf: $0) }
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + Int.random(in: 1...70_000, using: &generator))
            try bytes[offset..<end].withUnsafeBytes { try writer.write($0) }
            offset = end
        }
        try writer.finish()
        #expect(String(decoding: text, as: UTF8.self) == CofferArmor.armor(bytes))
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n")
        #expect(lines.dropFirst().dropLast().dropLast().allSatisfy { $0.count == 64 }, "every line but the last data line is 64 characters")
        #expect(try CofferArmor.dearmor(text) == bytes)
    }

    /// A multi-segment file streams through the armour reader and decrypts.
    @Test func aLargeArmouredFileDecrypts() throws {
        let folder = try TemporaryDirectory()
        let key = try #require(EncryptionFixedVectorTests.key)
        let plaintext = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let sealed = try CofferEncryption.encrypt(plaintext, to: .key(key))
        #expect(try Self.decrypt(CofferArmor.armor(sealed), in: folder) == plaintext)
    }

    @Test func whatTheSpecTolerates() throws {
        let folder = try TemporaryDirectory()
        let expected = Array("hello, coffer".utf8)
        let crlf = Self.armouredVector.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try Self.decrypt(crlf, in: folder) == expected, "CR LF")
        #expect(try Self.decrypt([0xEF, 0xBB, 0xBF] + Array(crlf.utf8), in: folder) == expected, "a byte order mark")
        #expect(try Self.decrypt("\n  \t\n" + Self.armouredVector + "\n\n   \n", in: folder) == expected, "whitespace around")
        #expect(try Self.decrypt(Self.armouredVector.replacingOccurrences(of: "\n", with: " \t\n"), in: folder) == expected, "blanks at line ends")
        #expect(try Self.decrypt(String(Self.armouredVector.dropLast()), in: folder) == expected, "no final line break")
    }

    /// A change to the vector's text: (find, replace), or text put around it when `find` is empty.
    struct Damage: Sendable, CustomTestStringConvertible {
        let name: String
        let find: String
        let replace: String
        let message: String
        var testDescription: String { name }

        func apply(_ text: String) -> String {
            switch find {
            case "": text + replace
            case "^": replace + text
            default: text.replacingOccurrences(of: find, with: replace)
            }
        }
    }

    @Test(arguments: [
        Damage(name: "a line of 65", find: "rkqh\n", replace: "rkqhA\n", message: "line 2 is longer than 64"),
        Damage(name: "a short line before the last", find: "rkqh\n", replace: "\n", message: "line 3: expected '-----END"),
        Damage(name: "a character outside the alphabet", find: "FMCn", replace: "FM-n", message: "line 3 has a character outside"),
        Damage(name: "padding before the end", find: "jBXQ3\n", replace: "jBXQ=\n", message: "line 4: expected '-----END"),
        Damage(name: "non-canonical last line", find: "9VM=", replace: "9VN=", message: "line 5 is not canonical base64"),
        Damage(name: "an empty line inside", find: "rkqh\n", replace: "rkqh\n\n", message: "line 3 is empty"),
        Damage(name: "no end line", find: "-----END COFFER ENCRYPTED FILE-----\n", replace: "", message: "it is truncated"),
        Damage(name: "text after the end line", find: "", replace: "more\n", message: "line 7: there is text after the end line"),
        Damage(name: "another begin line", find: "BEGIN COFFER", replace: "BEGIN AGE", message: "line 1: expected '-----BEGIN COFFER"),
        Damage(name: "too much whitespace first", find: "^", replace: String(repeating: " ", count: 1_100), message: "more than 1024 bytes of whitespace"),
    ])
    func whatTheSpecRefuses(damage: Damage) throws {
        let folder = try TemporaryDirectory()
        let error = try #require(throws: CofferFormatsError.malformedCiphertext) { try Self.decrypt(damage.apply(Self.armouredVector), in: folder) }
        #expect(error.reason.contains(damage.message), "\(error.reason)")
    }

    @Test func armourHoldsCofferFilesOnly() throws {
        let folder = try TemporaryDirectory()
        for inside in [Array("hello".utf8), [], Array("Salted__12345678".utf8)] {
            let error = try #require(throws: CofferFormatsError.self) { try Self.decrypt(CofferArmor.armor(inside), in: folder) }
            #expect(error.reason.contains("not a Coffer file"), "\(error.reason)")
        }
    }

    /// Every truncation of the armour, and every single-character change to its data, is refused with a
    /// typed error (the Coffer file inside authenticates what the armour cannot).
    @Test func everyTruncationAndEveryDataChangeIsRefused() throws {
        let folder = try TemporaryDirectory()
        let text = Array(Self.armouredVector.utf8)
        let end = Array("\n-----END COFFER ENCRYPTED FILE-----\n".utf8)
        for length in 0..<(text.count - end.count) {
            #expect(throws: (any Error).self, "truncated to \(length) bytes") { try Self.decrypt(Array(text[..<length]), in: folder) }
        }
        let dataLines = 38..<(text.count - end.count)
        for index in dataLines where text[index] != 0x0A {
            var changed = text
            changed[index] = changed[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(throws: CofferFormatsError.self, "character \(index) changed") { try Self.decrypt(changed, in: folder) }
        }
    }

    @Test func binaryFormatsAreNeverTakenForArmour() throws {
        #expect(!CofferArmor.mayBeArmor(EncryptedFileHeader.magic))
        #expect(!CofferArmor.mayBeArmor(Array("Salted__".utf8)))
        #expect(!CofferArmor.mayBeArmor([3, 1, 0, 0]))
        #expect(!CofferArmor.mayBeArmor([]))
        #expect(CofferArmor.mayBeArmor(Array("-----BEGIN".utf8)))
        #expect(CofferArmor.mayBeArmor([0xEF, 0xBB, 0xBF, 0x0A, 0x2D]))
    }
}
