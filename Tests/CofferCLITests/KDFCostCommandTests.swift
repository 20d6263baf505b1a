import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Issue 42 from the command line: a hostile header is refused before any work, and what `coffer`
/// writes it can read back with its default limits.
@Suite("coffer: KDF costs")
struct KDFCostCommandTests {
    /// A folder with a private password file.
    static func folder() throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory()
        try folder.writeSecret("correct horse\n", to: "pw")
        return folder
    }

    /// `coffer` under a 768 MiB address-space limit: a scrypt derivation of 1 GiB cannot even start, so
    /// a regression that derives before checking fails at once instead of running for minutes.
    static func cofferWithoutAGibibyte(_ arguments: [String], input: String = "", in folder: TemporaryDirectory) async throws -> CommandResult {
        let binary = try CommandRunner.cofferExecutable()
        return try await tool("/bin/bash", ["-c", "ulimit -v 786432 && exec \"$0\" \"$@\"", binary] + arguments, input: Array(input.utf8), in: folder)
    }

    /// The reproduction: a 162-byte file whose scrypt stanza asks for N = 2^20, r = 8, p = 255.
    @Test func decryptRefusesTheHostileFileBeforeDeriving() async throws {
        let folder = try Self.folder()
        try folder.write(Array("sixteen bytes!!!".utf8), to: "plain")
        let written = try await coffer("encrypt", "--password-file", "pw", "--scrypt-log-n", "10", "plain", "-o", "hostile.coffer", in: folder)
        #expect(written.status == 0, "\(written.standardError)")
        var file = try folder.read("hostile.coffer")
        #expect(file.count == 162 && Array(file[31..<34]) == [10, 8, 1])
        file.replaceSubrange(31..<34, with: [20, 8, 255])
        try folder.write(file, to: "hostile.coffer")

        let result = try await Self.cofferWithoutAGibibyte(["decrypt", "--password-file", "pw", "hostile.coffer", "-o", "out"], in: folder)
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardError.contains("N=2^20, r=8, p=255") && result.standardError.contains("N·r·p"), "\(result.standardError)")
        #expect(result.standardError.contains("--max-scrypt-log-n"), "the hint says how to open a file you trust: \(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("out")))
    }

    /// What `coffer encrypt` and `coffer password hash` make, `coffer decrypt` and `coffer password
    /// verify` open with their defaults; so they refuse to make more.
    @Test func writersRefuseCostsTheirReadersWouldRefuse() async throws {
        let folder = try Self.folder()
        try folder.write(Array("x".utf8), to: "plain")
        let encrypt = try await Self.cofferWithoutAGibibyte(["encrypt", "--password-file", "pw", "--scrypt-log-n", "20", "plain", "-o", "x.coffer"], in: folder)
        #expect(encrypt.status == 2 && encrypt.standardError.contains("N=2^20") && encrypt.standardError.contains("above the limit"), "\(encrypt.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.coffer")))
        let iterations = try await coffer("encrypt", "--password-file", "pw", "--kdf", "pbkdf2", "--iterations", "2000001", "plain", "-o", "y.coffer", in: folder)
        #expect(iterations.status == 2 && iterations.standardError.contains("2000001 PBKDF2 iterations, above the limit"), "\(iterations.standardError)")
        let hash = try await Self.cofferWithoutAGibibyte(["password", "hash", "--stdin", "--scrypt-log-n", "20"], input: "pw\n", in: folder)
        #expect(hash.status == 2 && hash.output.isEmpty && hash.standardError.contains("above the limit"), "\(hash.standardError)")
    }
}
