import CofferCrypto
import CofferFormats
import Foundation
import Testing

@Suite("Checksum lists")
struct ChecksumListTests {
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let empty = DigestAlgorithm.sha256.hash("")

    @Test func writesTheCoreutilsForms() {
        #expect(ChecksumList.line(for: Self.empty, path: "a.txt") == "\(Self.emptySHA256)  a.txt")
        #expect(ChecksumList.line(for: Self.empty, path: "a.txt", style: .bsd) == "SHA256 (a.txt) = \(Self.emptySHA256)")
        #expect(ChecksumList.line(for: Self.empty, path: "a.txt", base64: true) == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=  a.txt")
        #expect(ChecksumList.line(for: DigestAlgorithm.sha512_256.hash(""), path: "x", style: .bsd).hasPrefix("SHA512/256 (x) = "))
    }

    @Test func escapesNamesLikeCoreutils() {
        #expect(ChecksumList.line(for: Self.empty, path: "new\nline") == "\\\(Self.emptySHA256)  new\\nline")
        #expect(ChecksumList.line(for: Self.empty, path: "back\\slash") == "\\\(Self.emptySHA256)  back\\\\slash")
        #expect(ChecksumList.line(for: Self.empty, path: "cr\rx") == "\\\(Self.emptySHA256)  cr\\rx")
        #expect(ChecksumList.displayName("plain") == "plain")
        #expect(ChecksumList.displayName("a\nb") == "\\a\\nb")
    }

    @Test(arguments: ["plain name", "new\nline", "back\\slash\\", "cr\r", "*star", " leading space", "ünïcødé"])
    func roundTripsAnyName(_ name: String) throws {
        for style in [ChecksumList.Style.gnu, .bsd] {
            let line = ChecksumList.line(for: Self.empty, path: name, style: style)
            let entry = try #require(try ChecksumList.parse(line: Substring(line), number: 1, algorithm: .sha256, strict: true))
            #expect(entry.path == name)
            #expect(entry.expected == Self.empty.bytes)
        }
    }

    @Test func readsBinaryModeSingleSpaceCRLFAndIndentation() throws {
        for line in ["\(Self.emptySHA256) *a.txt", "\(Self.emptySHA256) a.txt", "\(Self.emptySHA256)  a.txt\r", "  \(Self.emptySHA256)  a.txt"] {
            let entry = try #require(try ChecksumList.parse(line: Substring(line), number: 3, algorithm: .sha256, strict: false))
            #expect(entry.path == "a.txt")
            #expect(entry.line == 3)
        }
    }

    @Test func skipsBlankLinesAndComments() throws {
        #expect(try ChecksumList.parse(line: "", number: 1, algorithm: .sha256, strict: false) == nil)
        #expect(try ChecksumList.parse(line: "   ", number: 1, algorithm: .sha256, strict: false) == nil)
        #expect(try ChecksumList.parse(line: "# made by coffer", number: 1, algorithm: .sha256, strict: false) == nil)
    }

    @Test func bsdTagChoosesTheAlgorithmUnlessStrict() throws {
        let sha512 = DigestAlgorithm.sha512.hash("")
        let line = Substring(ChecksumList.line(for: sha512, path: "f", style: .bsd))
        let entry = try #require(try ChecksumList.parse(line: line, number: 1, algorithm: .sha256, strict: false))
        #expect(entry.algorithm == .sha512)
        let error = try #require(throws: CofferFormatsError.algorithmMismatch) {
            try ChecksumList.parse(line: line, number: 7, algorithm: .sha256, strict: true)
        }
        #expect(error.line == 7)
    }

    /// With an algorithm named (strict), another length is refused with the algorithm it looks like;
    /// without one, the length chooses (ChecksumVerifierTests).
    @Test func wrongLengthSuggestsTheAlgorithm() throws {
        let line = Substring(ChecksumList.line(for: DigestAlgorithm.sha512.hash(""), path: "f"))
        let error = try #require(throws: CofferFormatsError.algorithmMismatch) {
            try ChecksumList.parse(line: line, number: 2, algorithm: .sha256, strict: true)
        }
        #expect(error.description == "line 2: expected a 64-digit SHA-256 hex digest, found 128 digits (SHA-512-sized; choose the algorithm with -a)")
    }

    @Test(arguments: [
        "nonsense",
        "\(ChecksumListTests.emptySHA256)",
        "\(ChecksumListTests.emptySHA256)  ",
        "zz\(ChecksumListTests.emptySHA256.dropFirst(2))  file",
        "\\\(ChecksumListTests.emptySHA256)  bad\\escape",
        "SHA256 (f = \(ChecksumListTests.emptySHA256)",
        "SHA256 () = \(ChecksumListTests.emptySHA256)",
    ])
    func malformedLinesAreTypedErrorsWithTheirNumber(_ line: String) {
        #expect {
            try ChecksumList.parse(line: Substring(line), number: 42, algorithm: .sha256, strict: false)
        } throws: { error in
            guard let error = error as? CofferFormatsError else { return false }
            return error.line == 42 && (error.code == .malformedChecksumLine || error.code == .algorithmMismatch)
        }
    }

    @Test func overlongLineIsRejected() {
        let line = Substring(String(repeating: "a", count: ChecksumList.maximumLineLength + 1))
        #expect(throws: CofferFormatsError.self) { try ChecksumList.parse(line: line, number: 1, algorithm: .sha256, strict: false) }
    }

    @Test func parsesWholeListsKeepingGoodLinesAroundBadOnes() {
        let text = "# list\n\(Self.emptySHA256)  a\nbroken\n\(Self.emptySHA256)  b\n"
        let results = ChecksumList.parse(text, algorithm: .sha256, strict: false)
        #expect(results.count == 3)
        #expect((try? results[0].get())?.path == "a")
        if case .failure(let error) = results[1] { #expect(error.line == 3) } else { Issue.record("line 3 should fail") }
        #expect((try? results[2].get())?.line == 4)
    }
}

@Suite("Gravatar")
struct GravatarTests {
    /// The worked example in Gravatar's documentation ("Creating the hash") and its MD5 predecessor.
    @Test func documentedExample() throws {
        #expect(try Gravatar.hash(of: "MyEmailAddress@example.com ") == "84059b07d4be67b806386c0aad8070a23f18836bbaae342275dc0a83414c32ee")
        #expect(try Gravatar.hash(of: "MyEmailAddress@example.com ", style: .insecureMD5) == "0bc83cb571cd1c50ba6f3e8a78ef1346")
        let url = try Gravatar.avatarURL(for: "  MyEmailAddress@example.com\n")
        #expect(url.absoluteString == "https://gravatar.com/avatar/84059b07d4be67b806386c0aad8070a23f18836bbaae342275dc0a83414c32ee")
    }

    @Test func parameters() throws {
        let url = try Gravatar.avatarURL(for: "a@example.com", size: 200, default: .identicon, rating: .pg, forceDefault: true)
        #expect(url.query == "s=200&d=identicon&r=pg&f=y")
        let custom = try Gravatar.avatarURL(for: "a@example.com", default: .custom(URL(string: "https://example.com/img.png?x=1")!))
        #expect(custom.query == "d=https%3A%2F%2Fexample.com%2Fimg.png%3Fx%3D1")
    }

    @Test func lowercasesAsciiOnlyAsGravatarDoes() throws {
        #expect(try Gravatar.normalizedEmail(" ÄBC@Example.COM\t") == "Äbc@example.com")
    }

    @Test(arguments: [0, 2049, -1])
    func sizeOutOfRange(_ size: Int) {
        #expect(throws: CofferFormatsError.self) { try Gravatar.avatarURL(for: "a@example.com", size: size) }
    }

    @Test(arguments: ["", "   ", "not-an-email"])
    func invalidEmails(_ email: String) {
        #expect(throws: CofferFormatsError.invalidEmail) { try Gravatar.avatarURL(for: email) }
    }

    @Test func customDefaultMustBeWeb() {
        #expect(throws: CofferFormatsError.self) {
            try Gravatar.avatarURL(for: "a@example.com", default: .custom(URL(fileURLWithPath: "/etc/passwd")))
        }
    }
}

/// A list written on Windows (CRLF) parses line by line, as `sha256sum -c` reads it.
@Suite("Checksum lists with CRLF")
struct ChecksumListCRLFTests {
    @Test func crlfListsParseLineByLine() throws {
        let digest = DigestAlgorithm.sha256.hash(Array("a".utf8))
        let text = ChecksumList.line(for: digest, path: "a") + "\r\n" + ChecksumList.line(for: digest, path: "b") + "\r\n"
        let entries = ChecksumList.parse(text, algorithm: .sha256, strict: false).compactMap { try? $0.get() }
        #expect(entries.map(\.path) == ["a", "b"])
    }
}
