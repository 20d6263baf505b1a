import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("coffer hash")
struct HashCommandTests {
    /// Files whose names exercise sha256sum's escaping.
    static func sampleFolder() throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory()
        try folder.write("hello\n", to: "hello.txt")
        try folder.write([UInt8](), to: "empty")
        try folder.write(Fixtures.randomBytes(count: FileReader.defaultChunkSize + 1), to: "chunky.bin")
        try folder.write("x", to: "with space")
        try folder.write("y", to: "back\\slash")
        try folder.write("z", to: "new\nline")
        return folder
    }

    static let names = ["hello.txt", "empty", "chunky.bin", "with space", "back\\slash", "new\nline"]

    @Test(.enabled(if: haveCoreutils), arguments: [("sha256", "sha256sum"), ("sha512", "sha512sum")])
    func outputIsByteForByteCoreutils(algorithm: String, reference: String) async throws {
        let folder = try Self.sampleFolder()
        let ours = try await coffer(["hash", "-a", algorithm] + Self.names, in: folder)
        let theirs = try await tool(reference, Self.names, in: folder)
        #expect(ours.status == 0, "\(ours.standardError)")
        #expect(ours.standardError.isEmpty)
        #expect(ours.output == theirs.output)
    }

    @Test(.enabled(if: haveCoreutils))
    func standardInputIsNamedDash() async throws {
        let ours = try await coffer("hash", input: Array("abc".utf8))
        #expect(ours.output == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\n")
        let explicit = try await coffer("hash", "-", input: Array("abc".utf8))
        #expect(explicit.output == ours.output)
    }

    @Test(.enabled(if: haveCoreutils))
    func sha256sumChecksOurList() async throws {
        let folder = try Self.sampleFolder()
        let list = try await coffer(["hash"] + Self.names, in: folder)
        try folder.write(list.standardOutput, to: "SUMS")
        let check = try await tool("sha256sum", ["-c", "SUMS"], in: folder)
        #expect(check.status == 0, "\(check.standardError)")
        #expect(check.lines.count == Self.names.count)
        #expect(check.lines.allSatisfy { $0.hasSuffix(": OK") })
    }

    @Test(.enabled(if: haveCoreutils))
    func weCheckSha256sumsList() async throws {
        let folder = try Self.sampleFolder()
        let list = try await tool("sha256sum", Self.names, in: folder)
        try folder.write(list.standardOutput, to: "SUMS")
        let check = try await coffer("hash", "--check", "SUMS", in: folder)
        #expect(check.status == 0, "\(check.standardError)")
        #expect(check.lines == ["hello.txt: OK", "empty: OK", "chunky.bin: OK", "with space: OK", "\\back\\\\slash: OK", "\\new\\nline: OK"])
        let quiet = try await coffer("hash", "--check", "--quiet", "SUMS", in: folder)
        #expect(quiet.status == 0 && quiet.output.isEmpty)
    }

    @Test(.enabled(if: haveCoreutils))
    func weCheckTaggedAndSha512Lists() async throws {
        let folder = try Self.sampleFolder()
        let tagged = try await tool("sha512sum", ["--tag", "hello.txt", "empty"], in: folder)
        try folder.write(tagged.standardOutput, to: "SUMS")
        // Without -a the BSD tag chooses the algorithm; with a different -a it is an error.
        let check = try await coffer("hash", "--check", "SUMS", in: folder)
        #expect(check.status == 0, "\(check.standardError)")
        #expect(check.lines == ["hello.txt: OK", "empty: OK"])
        let wrong = try await coffer("hash", "-a", "sha256", "--check", "SUMS", in: folder)
        #expect(wrong.status == 2)
        #expect(wrong.standardError.contains("coffer: error: SUMS:1: the line is tagged SHA512 but SHA-256 was asked for"))
    }

    @Test func mismatchExitsOneAndNamesTheFile() async throws {
        let folder = try Self.sampleFolder()
        let list = try await coffer("hash", "hello.txt", "empty", in: folder)
        try folder.write(list.standardOutput, to: "SUMS")
        try folder.write("tampered\n", to: "hello.txt")
        let check = try await coffer("hash", "--check", "SUMS", in: folder)
        #expect(check.status == 1)
        #expect(check.lines == ["hello.txt: FAILED", "empty: OK"])
        #expect(check.standardError == "coffer: warning: 1 computed checksum did NOT match\n")
    }

    @Test func missingListedFileFailsWithReason() async throws {
        let folder = try Self.sampleFolder()
        let list = try await coffer("hash", "hello.txt", in: folder)
        try folder.write(list.output + list.output.replacingOccurrences(of: "hello.txt", with: "gone.txt"), to: "SUMS")
        let check = try await coffer("hash", "--check", "SUMS", in: folder)
        #expect(check.status == 1)
        #expect(check.lines == ["hello.txt: OK", "gone.txt: FAILED open or read"])
        #expect(check.standardError.contains("coffer: error: cannot open 'gone.txt': no such file or directory"))
        #expect(check.standardError.contains("coffer: warning: 1 listed file could not be read"))
    }

    @Test func malformedLinesAreReportedWithLineNumbers() async throws {
        let folder = try Self.sampleFolder()
        let good = try await coffer("hash", "hello.txt", in: folder).output
        try folder.write("# comment\n\(good)garbage line\n\(String(repeating: "a", count: 128))  hello.txt\n", to: "SUMS")
        // -a named: a line of another length is malformed (without it, the length says SHA-512).
        let check = try await coffer("hash", "--check", "-a", "sha256", "SUMS", in: folder)
        #expect(check.status == 2)
        #expect(check.lines == ["hello.txt: OK"])
        #expect(check.standardError.contains("coffer: error: SUMS:3: expected a 64-digit hex or base64 SHA-256 digest, found 7 characters that are neither"))
        #expect(check.standardError.contains("coffer: error: SUMS:4: expected a 64-digit SHA-256 hex digest, found 128 digits"))
        #expect(check.standardError.contains("coffer: warning: 2 lines are improperly formatted"))
        let guessing = try await coffer("hash", "--check", "SUMS", in: folder)
        #expect(guessing.status == 1 && guessing.lines == ["hello.txt: OK", "hello.txt: FAILED"])
    }

    @Test func listWithNoUsableLineIsAnError() async throws {
        let folder = try TemporaryDirectory()
        try folder.write("# nothing here\n", to: "SUMS")
        let check = try await coffer("hash", "--check", "SUMS", in: folder)
        #expect(check.status == 2)
        #expect(check.standardError.hasPrefix("coffer: error: no properly formatted checksum lines found\n"))
    }

    @Test func unreadableInputsExitTwoAndOthersStillPrint() async throws {
        let folder = try Self.sampleFolder()
        let result = try await coffer("hash", "missing.txt", "hello.txt", ".", in: folder)
        #expect(result.status == 2)
        #expect(result.lines == ["5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  hello.txt"])
        #expect(result.standardError == """
            coffer: error: cannot open 'missing.txt': no such file or directory
            coffer: error: cannot read '.': it is a directory

            """)
    }

    @Test func base64TagAndJSONForms() async throws {
        let folder = try Self.sampleFolder()
        let base64 = try await coffer("hash", "--base64", "empty", in: folder)
        #expect(base64.output == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=  empty\n")
        let tagged = try await coffer("hash", "--tag", "-a", "sha3-256", "empty", in: folder)
        #expect(tagged.output == "SHA3-256 (empty) = a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a\n")
        let json = try await coffer("hash", "--json", "hello.txt", "empty", in: folder)
        #expect(json.lines.count == 2)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(json.lines[0].utf8)) as? [String: Any])
        #expect(first["path"] as? String == "hello.txt")
        #expect(first["algorithm"] as? String == "sha256")
        #expect(first["hex"] as? String == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
        #expect(first["size"] as? Int == 6)
        // Base64 lists are read back too.
        try folder.write(base64.standardOutput, to: "SUMS")
        #expect(try await coffer("hash", "--check", "SUMS", in: folder).status == 0)
    }

    @Test func brokenAlgorithmsNeedTheirInsecureName() async throws {
        let refused = try await coffer("hash", "-a", "md5", input: [])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("MD5 is broken; to check a legacy checksum anyway, say '-a insecure-md5'"))
        let allowed = try await coffer("hash", "-a", "insecure-md5", input: Array("abc".utf8))
        #expect(allowed.status == 0)
        #expect(allowed.output == "900150983cd24fb0d6963f7d28e17f72  -\n")
        #expect(allowed.standardError.hasPrefix("coffer: warning: MD5 is broken"))
    }

    @Test func usageErrorsExitTwoWithAHint() async throws {
        for arguments in [["hash", "--nope"], ["hash", "--json", "--tag"], ["hash", "-a", "sha999"], ["nonsense"]] {
            let result = try await CommandRunner.run(CommandRunner.cofferExecutable(), arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.standardError.hasPrefix("coffer: error: "), "\(arguments)")
            #expect(result.standardError.contains("hint: run 'coffer"), "\(arguments)")
        }
    }
}

@Suite("coffer hash progress")
struct HashProgressTests {
    /// Just over the 64 MiB threshold.
    static func largeFile() throws -> (TemporaryDirectory, String) {
        let folder = try TemporaryDirectory()
        let path = try folder.write(Fixtures.randomBytes(count: (64 << 20) + 1), to: "large.bin")
        return (folder, path)
    }

    @Test func silentWhenStandardErrorIsNotATerminal() async throws {
        let (folder, _) = try Self.largeFile()
        let result = try await coffer("hash", "large.bin", in: folder)
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        #expect(result.lines.count == 1)
    }

    /// `script` runs the command on a pseudo-terminal, the way a person at a shell would.
    @Test(.enabled(if: CommandRunner.isAvailable("script")))
    func drawsABarOnATerminal() async throws {
        let (folder, _) = try Self.largeFile()
        let command = "'\(try CommandRunner.cofferExecutable())' hash large.bin"
        let result = try await tool("script", ["-qec", command, "/dev/null"], in: folder)
        #expect(result.status == 0)
        #expect(result.output.contains("100% 64.0 MiB/64.0 MiB"), "the bar reaches 100%")
        #expect(result.output.contains("\r\u{1B}[2K"), "the bar is erased before the result is printed")
        #expect(result.output.contains("  large.bin"))
    }
}
