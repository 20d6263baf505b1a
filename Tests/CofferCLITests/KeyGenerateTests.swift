import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Issue 43, item 7: `key generate` puts the public key beside the private one as ssh-keygen does, and
/// writes the private key to standard output with `-o -` as openssl genpkey does.
@Suite("coffer key generate and its files")
struct KeyGenerateTests {
    @Test func thePublicKeyIsWrittenBesideThePrivateOne() async throws {
        let folder = try TemporaryDirectory()
        let made = try await coffer("key", "generate", "-o", "release.key", in: folder)
        #expect(made.status == 0 && made.output.contains("public key:   release.key.pub"), "\(made.output)\(made.standardError)")
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.path("release.key.pub"))
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0o044, "a public key is readable by others")
        _ = try folder.write("release\n", to: "app.tar")
        #expect(try await coffer("sign", "-k", "release.key", "app.tar", in: folder).status == 0)
        let verified = try await coffer("verify", "-p", "release.key.pub", "app.tar.sig", in: folder)
        #expect(verified.status == 0, "\(verified.standardError)")

        let none = try await coffer("key", "generate", "-o", "bare.key", "--no-public", in: folder)
        #expect(none.status == 0 && !FileManager.default.fileExists(atPath: folder.path("bare.key.pub")))

        // A public file in the way stops the command before the private key is written.
        _ = try folder.write("mine\n", to: "taken.key.pub")
        let blocked = try await coffer("key", "generate", "-o", "taken.key", in: folder)
        #expect(blocked.status == 2 && blocked.standardError.contains("'taken.key.pub' already exists"), "\(blocked.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("taken.key")))
        #expect(try String(contentsOfFile: folder.path("taken.key.pub"), encoding: .utf8) == "mine\n")

        // With --force, a public half that cannot be written leaves the existing private key as it was
        // (the outside attack on this change found it replaced and the new one without its public half).
        try FileManager.default.removeItem(atPath: folder.path("release.key.pub"))
        try FileManager.default.createDirectory(atPath: folder.path("release.key.pub"), withIntermediateDirectories: false)
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path("release.key")))
        let forced = try await coffer("key", "generate", "-o", "release.key", "--force", in: folder)
        #expect(forced.status != 0 && forced.standardError.contains("release.key.pub"), "\(forced.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("release.key"))) == before)
    }

    @Test func dashWritesThePrivateKeyToStandardOutput() async throws {
        let folder = try TemporaryDirectory()
        let made = try await coffer("key", "generate", "-t", "x25519", "-o", "-", "--public", "backup.pub", in: folder)
        #expect(made.status == 0, "\(made.standardError)")
        #expect(made.output.hasPrefix("-----BEGIN PRIVATE KEY-----") && !made.output.contains("generated"), "\(made.output)")
        #expect(made.standardError.contains("generated X25519 key") && made.standardError.contains("private key:  standard output"), "\(made.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["backup.pub"])
        _ = try folder.write(made.output, to: "backup.key")

        // What it printed is the private half of the public file.
        _ = try folder.write("data\n", to: "data.txt")
        #expect(try await coffer("encrypt", "-r", "backup.pub", "data.txt", "-o", "data.coffer", in: folder).status == 0)
        let opened = try await coffer("decrypt", "-i", "backup.key", "data.coffer", "-o", "-", in: folder)
        #expect(opened.status == 0 && opened.output == "data\n", "\(opened.standardError)")

        let both = try await coffer("key", "generate", "-o", "-", "--public", "-", in: folder)
        #expect(both.status == 2 && both.output.isEmpty)

        // A key that cannot be written out leaves no public half behind.
        if FileManager.default.fileExists(atPath: "/dev/full") {
            let full = try await CommandRunner.run("sh", ["-c", "\"$0\" key generate -o - --public lost.pub > /dev/full", try CommandRunner.cofferExecutable()], currentDirectory: folder.path)
            #expect(full.status != 0 && !FileManager.default.fileExists(atPath: folder.path("lost.pub")), "\(full.standardError)")
        }
    }
}
