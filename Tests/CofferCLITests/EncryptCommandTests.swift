import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("coffer encrypt, decrypt, inspect")
struct EncryptCommandTests {
    static func folderWithData(size: Int = 200_000) throws -> (TemporaryDirectory, [UInt8]) {
        let folder = try TemporaryDirectory()
        let data = Fixtures.randomBytes(count: size)
        try folder.write(data, to: "data.bin")
        try folder.writeSecret("hunter2\nsecond line is ignored\n", to: "pass")
        return (folder, data)
    }

    static func contents(_ folder: TemporaryDirectory, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: folder.path(name))))
    }

    @Test func passwordRoundTripAndOneMessageForWrongPasswords() async throws {
        let (folder, data) = try Self.folderWithData()
        // Standard output is a pipe here, so without -o the ciphertext would go there (as age does).
        let encrypted = try await coffer("encrypt", "--password-file", "pass", "--scrypt-log-n", "12", "data.bin", "-o", "data.bin.coffer", in: folder)
        #expect(encrypted.status == 0, "\(encrypted.standardError)")
        #expect(try Self.contents(folder, "data.bin.coffer").starts(with: Array("COFFER".utf8)))
        let inspected = try await coffer("inspect", "data.bin.coffer", in: folder)
        #expect(inspected.lines.contains("opens with:   password, scrypt N=2^12 r=8 p=1 (4096 KiB of memory)"))
        #expect(try await coffer("decrypt", "--password-file", "pass", "data.bin.coffer", "-o", "out.bin", in: folder).status == 0)
        #expect(try Self.contents(folder, "out.bin") == data)

        try folder.writeSecret("wrong\n", to: "wrong")
        let wrong = try await coffer("decrypt", "--password-file", "wrong", "data.bin.coffer", "-o", "bad.bin", in: folder)
        #expect(wrong.status == 1)
        #expect(wrong.standardError == "coffer: error: wrong password or key, or the data is corrupted or truncated\n")
        #expect(!FileManager.default.fileExists(atPath: folder.path("bad.bin")))

        var tampered = try Self.contents(folder, "data.bin.coffer")
        tampered[tampered.count / 2] ^= 1
        try folder.write(tampered, to: "tampered.coffer")
        let corrupted = try await coffer("decrypt", "--password-file", "pass", "tampered.coffer", "-o", "-", in: folder)
        #expect(corrupted.status == 1)
        #expect(corrupted.standardOutput.isEmpty, "nothing is released to standard output before the whole file authenticated")
        #expect(corrupted.standardError == wrong.standardError)
    }

    @Test func keyAndRecipientModes() async throws {
        let (folder, data) = try Self.folderWithData(size: 300_000)
        #expect(try await coffer("random", "--raw", "--output", "k.key", in: folder).status == 0)
        #expect(try await coffer("encrypt", "-k", "k.key", "data.bin", "-o", "k.coffer", in: folder).status == 0)
        #expect(try await coffer("decrypt", "-k", "k.key", "k.coffer", "-o", "k.out", in: folder).status == 0)
        #expect(try Self.contents(folder, "k.out") == data)

        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "alice.key", "--public", "alice.pub", in: folder).status == 0)
        #expect(try await coffer("key", "generate", "-t", "p256", "-o", "bob.key", "--public", "bob.pub", in: folder).status == 0)
        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "eve.key", in: folder).status == 0)
        #expect(try await coffer("encrypt", "-r", "alice.pub", "-r", "bob.pub", "data.bin", "-o", "r.coffer", in: folder).status == 0)
        for identity in ["alice.key", "bob.key"] {
            let out = "r-\(identity).out"
            #expect(try await coffer("decrypt", "-i", identity, "r.coffer", "-o", out, in: folder).status == 0)
            #expect(try Self.contents(folder, out) == data)
        }
        let eve = try await coffer("decrypt", "-i", "eve.key", "r.coffer", "-o", "eve.out", in: folder)
        #expect(eve.status == 1)
        #expect(eve.standardError.contains("the file is not encrypted to this key"))
        let inspected = try await coffer("inspect", "r.coffer", in: folder)
        #expect(inspected.lines.filter { $0.hasPrefix("opens with:") }.count == 2)

        let ed = try await coffer("key", "generate", "-o", "ed.key", "--public", "ed.pub", in: folder)
        #expect(ed.status == 0)
        let wrongKind = try await coffer("encrypt", "-r", "ed.pub", "data.bin", "-o", "x.coffer", in: folder)
        #expect(wrongKind.status == 2)
        #expect(wrongKind.standardError.contains("cannot be an encryption recipient"))
    }

    @Test func pipesAndTerminals() async throws {
        let (folder, data) = try Self.folderWithData()
        #expect(try await coffer("random", "--raw", "--output", "k.key", in: folder).status == 0)
        let sealed = try await coffer("encrypt", "-k", "k.key", input: data, in: folder)
        #expect(sealed.status == 0)
        let opened = try await coffer("decrypt", "-k", "k.key", input: sealed.standardOutput, in: folder)
        #expect(opened.status == 0)
        #expect(opened.standardOutput == data)
    }

    @Test(.enabled(if: haveOpenSSL))
    func legacyFormatsInteroperate() async throws {
        let (folder, data) = try Self.folderWithData()
        let ours = try await coffer("encrypt", "--format", "openssl", "--password-file", "pass", "data.bin", "-o", "ours.enc", in: folder)
        #expect(ours.status == 0)
        #expect(ours.standardError.contains("not authenticated"))
        let theirDecrypt = try await tool("openssl", ["enc", "-d", "-aes-256-cbc", "-pbkdf2", "-iter", "10000", "-in", "ours.enc", "-pass", "file:pass"], in: folder)
        #expect(theirDecrypt.standardOutput == data)
        _ = try await tool("openssl", ["enc", "-aes-256-cbc", "-pbkdf2", "-iter", "20000", "-in", "data.bin", "-out", "theirs.enc", "-pass", "file:pass"], in: folder)
        let decrypted = try await coffer("decrypt", "--password-file", "pass", "--iter", "20000", "theirs.enc", "-o", "theirs.out", in: folder)
        #expect(decrypted.status == 0, "\(decrypted.standardError)")
        #expect(try Self.contents(folder, "theirs.out") == data)

        // Read with other settings than it was written with (here without --iter), or written without
        // -pbkdf2: the file cannot tell, so the message names the settings and the hint what to give
        // (issue 43: it said "wrong password or iteration count" alone).
        // CBC without a MAC: a wrong key still yields valid padding about once in 256 files, which then
        // decrypts to garbage. Fixed plaintext and salt make the outcome the same in every run (a random
        // salt failed this test about once in 128 runs); OpenSSL writes no header with -S, so it is added.
        let salt = "0102030405060708"
        try folder.write((0..<4).flatMap { _ in Array(UInt8.min...UInt8.max) }, to: "fixed.bin")
        for (file, settings) in [("theirs-fixed.enc", ["-pbkdf2", "-iter", "20000"]), ("legacy.enc", [])] {
            let raw = try await tool("openssl", ["enc", "-aes-256-cbc", "-S", salt] + settings + ["-in", "fixed.bin", "-pass", "file:pass"], in: folder)
            try folder.write(Array("Salted__".utf8) + (try Hex.decode(salt)) + raw.standardOutput, to: file)
        }
        for file in ["theirs-fixed.enc", "legacy.enc"] {
            let refused = try await coffer("decrypt", "--password-file", "pass", file, "-o", "refused.out", in: folder)
            #expect(refused.status == 1 && refused.standardError.contains("settings") && refused.standardError.contains("-pbkdf2"), "\(refused.standardError)")
            #expect(refused.standardError.contains("hint:") && refused.standardError.contains("--iter N") && refused.standardError.contains("deprecated key derivation"), "\(refused.standardError)")
            #expect(!FileManager.default.fileExists(atPath: folder.path("refused.out")))
        }

        #expect(try await coffer("encrypt", "--format", "rncryptor", "--password-file", "pass", "data.bin", "-o", "r.rncryptor", in: folder).status == 0)
        #expect(try await coffer("inspect", "r.rncryptor", in: folder).lines.first == "format:       RNCryptor v3")
        #expect(try await coffer("decrypt", "--password-file", "pass", "r.rncryptor", "-o", "r.out", in: folder).status == 0)
        #expect(try Self.contents(folder, "r.out") == data)
    }

    @Test func usageErrors() async throws {
        let (folder, _) = try Self.folderWithData()
        let none = try await coffer("encrypt", "data.bin", in: folder)
        #expect(none.status == 2)
        #expect(none.standardError.contains("say who can open the file"))
        let two = try await coffer("encrypt", "--password-file", "pass", "-k", "pass", "data.bin", in: folder)
        #expect(two.status == 2)
        let notEncrypted = try await coffer("decrypt", "--password-file", "pass", "data.bin", "-o", "x", in: folder)
        #expect(notEncrypted.status == 2)
        #expect(notEncrypted.standardError.contains("not in a format Coffer decrypts"))
        let badKey = try await coffer("encrypt", "-k", "pass", "data.bin", in: folder)
        #expect(badKey.status == 2)
        #expect(badKey.standardError.contains("does not hold a 32-byte key"))
    }

    @Test func costLimitsNameTheFlag() async throws {
        let (folder, _) = try Self.folderWithData(size: 10)
        #expect(try await coffer("encrypt", "--password-file", "pass", "--scrypt-log-n", "14", "data.bin", "-o", "data.bin.coffer", in: folder).status == 0)
        let limited = try await coffer("decrypt", "--password-file", "pass", "--max-scrypt-log-n", "13", "data.bin.coffer", "-o", "x", in: folder)
        #expect(limited.status == 2)
        #expect(limited.standardError.contains("--max-scrypt-log-n"))
        #expect(try await coffer("decrypt", "--password-file", "pass", "data.bin.coffer", "-o", "x", in: folder).status == 0)
    }

    /// `decrypt -o -` streams a Coffer file as it authenticates; a truncated one exits 1 and says how
    /// much the reader received and must discard. The sync flags change durability, never the bytes.
    @Test func standardOutputStreamsAuthenticatedSegmentsAndSaysWhenToDiscard() async throws {
        let (folder, data) = try Self.folderWithData(size: 3_000_000)
        #expect(try await coffer("random", "--raw", "--output", "k.key", in: folder).status == 0)
        #expect(try await coffer("encrypt", "-k", "k.key", "--no-sync", "data.bin", "-o", "fast.coffer", in: folder).status == 0)
        #expect(try await coffer("encrypt", "-k", "k.key", "data.bin", "-o", "durable.coffer", in: folder).status == 0)
        #expect(try await coffer("decrypt", "-k", "k.key", "--sync", "fast.coffer", "-o", "synced.bin", in: folder).status == 0)
        #expect(try Self.contents(folder, "synced.bin") == data)
        let streamed = try await coffer("decrypt", "-k", "k.key", "durable.coffer", "-o", "-", in: folder)
        #expect(streamed.status == 0)
        #expect(streamed.standardOutput == data)

        let sealed = try Self.contents(folder, "durable.coffer")
        try folder.write(Array(sealed.prefix(sealed.count - 1000)), to: "cut.coffer")
        let cut = try await coffer("decrypt", "-k", "k.key", "cut.coffer", "-o", "-", in: folder)
        #expect(cut.status == 1)
        #expect(cut.standardOutput.count == 2 << 20, "the two whole megabyte chunks that authenticated")
        #expect(cut.standardError == """
            coffer: error: wrong password or key, or the data is corrupted or truncated
            hint: standard output already received 2097152 authenticated bytes of an incomplete plaintext; discard them

            """)
    }

    /// Without -o, output goes to standard output whenever it is not a terminal, `/dev/null` included;
    /// `-o /dev/null` and `-o /dev/stdout` are streams (issue 43: `> /dev/null` wrote the plaintext to a
    /// file beside the input, and both -o forms were refused).
    @Test func standardOutputAndDevicesAreStreams() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write("secret plan\n", to: "plan.txt")
        #expect(try await coffer("random", "--raw", "--output", "k.bin", in: folder).status == 0)
        let binary = try CommandRunner.cofferExecutable()
        let encrypted = try await tool("sh", ["-c", "'\(binary)' encrypt -k k.bin plan.txt > /dev/null"], in: folder)
        #expect(encrypted.status == 0, "\(encrypted.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("plan.txt.coffer")), "> /dev/null writes no file")
        #expect(try await coffer("encrypt", "-k", "k.bin", "-o", "plan.txt.coffer", "plan.txt", in: folder).status == 0)
        try FileManager.default.removeItem(atPath: folder.path("plan.txt"))

        let discarded = try await tool("sh", ["-c", "'\(binary)' decrypt -k k.bin plan.txt.coffer > /dev/null"], in: folder)
        #expect(discarded.status == 0, "\(discarded.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("plan.txt")), "no plaintext on disk")
        for device in ["/dev/null", "/dev/stdout"] {
            let streamed = try await coffer("decrypt", "-k", "k.bin", "-o", device, "plan.txt.coffer", in: folder)
            #expect(streamed.status == 0, "\(device): \(streamed.standardError)")
            #expect(streamed.output == (device == "/dev/stdout" ? "secret plan\n" : ""), "\(device)")
            let sealed = try await coffer("encrypt", "-k", "k.bin", "-o", device, "plan.txt.coffer", in: folder)
            #expect(sealed.status == 0, "\(device): \(sealed.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("plan.txt")))
    }

    /// A device that refuses the bytes (`/dev/full`: every write is ENOSPC) fails the command with the
    /// device named, exit 2, and nothing is written anywhere else; so does a closed standard output.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aDeviceThatRefusesTheBytesFailsTheCommand() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write(String(repeating: "secret plan\n", count: 10_000), to: "plan.txt")
        #expect(try await coffer("random", "--raw", "--output", "k.bin", in: folder).status == 0)
        #expect(try await coffer("encrypt", "-k", "k.bin", "-o", "plan.txt.coffer", "plan.txt", in: folder).status == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        for arguments in [["decrypt", "-k", "k.bin", "-o", "/dev/full", "plan.txt.coffer"], ["encrypt", "-k", "k.bin", "-o", "/dev/full", "plan.txt"]] {
            let full = try await coffer(arguments, in: folder)
            #expect(full.status == 2 && full.standardError.contains("/dev/full"), "\(arguments[0]): \(full.standardError)")
        }
        let binary = try CommandRunner.cofferExecutable()
        let closed = try await tool("sh", ["-c", "'\(binary)' decrypt -k k.bin plan.txt.coffer >&-"], in: folder)
        #expect(closed.status == 2 && closed.standardError.contains("standard output"), "\(closed.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == before, "nothing left behind")
    }

    /// A private key given to -r is refused with the way to its public half, and the same key given
    /// twice is one recipient (issue 43, item 7: the private key was used as its public half, and a
    /// repeated key made two stanzas).
    @Test func recipientsArePublicKeysAndCountedOnce() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write("plan\n", to: "plan.txt")
        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "me.key", "--public", "me.pub", in: folder).status == 0)
        let refused = try await coffer("encrypt", "-r", "me.key", "-o", "p.coffer", "plan.txt", in: folder)
        #expect(refused.status == 2 && refused.standardError.contains("holds a private key") && refused.standardError.contains("--public-only"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("p.coffer")))
        // The same in an -R list (the outside attack found -R taking private keys that -r refused).
        let listed = try await coffer("encrypt", "-R", "me.key", "-o", "p.coffer", "plan.txt", in: folder)
        #expect(listed.status == 2 && listed.standardError.contains("holds a private key"), "\(listed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("p.coffer")))

        _ = try folder.write(try String(contentsOfFile: folder.path("me.pub"), encoding: .utf8) + (try String(contentsOfFile: folder.path("me.pub"), encoding: .utf8)), to: "twice.txt")
        #expect(try await coffer("encrypt", "-r", "me.pub", "-R", "twice.txt", "-o", "p.coffer", "plan.txt", in: folder).status == 0)
        let once = try await coffer("encrypt", "-r", "me.pub", "-o", "once.coffer", "plan.txt", in: folder)
        #expect(once.status == 0)
        let sizes = try [folder.path("p.coffer"), folder.path("once.coffer")].map { try #require(FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) }
        #expect(sizes[0] == sizes[1], "one stanza for one key: \(sizes)")
        let opened = try await coffer("decrypt", "-i", "me.key", "-o", "-", "p.coffer", in: folder)
        #expect(opened.output == "plan\n")
    }

    /// To standard output `encrypt` says nothing on standard error unless asked (-v), as age (issue 43,
    /// item 7: every run printed "encrypted … -> standard output").
    @Test func toStandardOutputNothingIsSaidUnlessAsked() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write("plan\n", to: "plan.txt")
        #expect(try await coffer("random", "--raw", "--output", "k.bin", in: folder).status == 0)
        let quiet = try await coffer("encrypt", "-k", "k.bin", "plan.txt", in: folder)
        #expect(quiet.status == 0 && !quiet.standardOutput.isEmpty && quiet.standardError.isEmpty, "\(quiet.standardError)")
        let told = try await coffer("encrypt", "-v", "-k", "k.bin", "plan.txt", in: folder)
        #expect(told.status == 0 && told.standardError.contains("-> standard output"), "\(told.standardError)")
    }
}
