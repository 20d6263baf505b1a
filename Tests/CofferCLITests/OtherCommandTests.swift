import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("coffer hmac")
struct HMACCommandTests {
    static func keyFolder() throws -> (TemporaryDirectory, [UInt8]) {
        let folder = try TemporaryDirectory()
        var key = Fixtures.randomBytes(count: 32)
        // A raw key ending in a line feed draws a warning (it may be text with a newline): one key in 256
        // would, and the tests that expect a silent standard error would fail by chance.
        if key[31] == UInt8(ascii: "\n") { key[31] = 0 }
        let path = try folder.write(key, to: "mac.key")
        chmod(path, 0o600)
        try folder.write("the message\n", to: "message.txt")
        return (folder, key)
    }

    @Test(.enabled(if: haveOpenSSL), arguments: [("sha256", "sha256"), ("sha384", "sha384"), ("sha512", "sha512")])
    func matchesOpenSSL(algorithm: String, openSSLDigest: String) async throws {
        let (folder, key) = try Self.keyFolder()
        let ours = try await coffer("hmac", "-a", algorithm, "-k", "mac.key", "message.txt", in: folder)
        #expect(ours.status == 0, "\(ours.standardError)")
        #expect(ours.standardError.isEmpty)
        let theirs = try await tool("openssl", ["dgst", "-\(openSSLDigest)", "-mac", "HMAC", "-macopt", "hexkey:\(Hex.encode(key))", "-r", "message.txt"], in: folder)
        let expected = String(theirs.output.prefix { $0 != " " })
        #expect(ours.output == "\(expected)  message.txt\n")
    }

    @Test func verifyExitsZeroOnMatchAndOneOnMismatch() async throws {
        let (folder, _) = try Self.keyFolder()
        let tag = String(try await coffer("hmac", "-k", "mac.key", "message.txt", in: folder).output.prefix(64))
        let ok = try await coffer("hmac", "-k", "mac.key", "--verify", tag, "message.txt", in: folder)
        #expect(ok.status == 0)
        #expect(ok.output == "message.txt: OK\n")

        let flipped = (tag.first == "0" ? "1" : "0") + tag.dropFirst()
        let bad = try await coffer("hmac", "-k", "mac.key", "--verify", flipped, "message.txt", in: folder)
        #expect(bad.status == 1)
        #expect(bad.output == "message.txt: FAILED\n")
        #expect(bad.standardError == "coffer: error: the HMAC-SHA-256 tag of 'message.txt' does not match\n")

        try folder.write("the message!\n", to: "message.txt")
        #expect(try await coffer("hmac", "-k", "mac.key", "--verify", tag, "message.txt", in: folder).status == 1)
    }

    @Test func verifyAcceptsBase64Tags() async throws {
        let (folder, _) = try Self.keyFolder()
        let tag = try await coffer("hmac", "-k", "mac.key", "--base64", "message.txt", in: folder).output.split(separator: " ")[0]
        #expect(tag.count == 44)
        #expect(try await coffer("hmac", "-k", "mac.key", "--verify", String(tag), "message.txt", in: folder).status == 0)
    }

    @Test func truncatedTagsNeedAnExplicitLength() async throws {
        let (folder, _) = try Self.keyFolder()
        let full = try await coffer("hmac", "-k", "mac.key", "message.txt", in: folder).output
        let short = String(full.prefix(32))
        let refused = try await coffer("hmac", "-k", "mac.key", "--verify", short, "message.txt", in: folder)
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("hint: if your protocol truncates tags, say --truncate 16"))
        let accepted = try await coffer("hmac", "-k", "mac.key", "--truncate", "16", "--verify", short, "message.txt", in: folder)
        #expect(accepted.status == 0)
        let printed = try await coffer("hmac", "-k", "mac.key", "--truncate", "16", "message.txt", in: folder)
        #expect(printed.output == "\(short)  message.txt\n")
        let tooShort = try await coffer("hmac", "-k", "mac.key", "--truncate", "9", "message.txt", in: folder)
        #expect(tooShort.status == 2)
        #expect(tooShort.standardError.contains("--truncate must be from 10 to 32 bytes"))
    }

    @Test func keyFromEnvironmentInEveryEncoding() async throws {
        let (folder, key) = try Self.keyFolder()
        let expected = try await coffer("hmac", "-k", "mac.key", "message.txt", in: folder).output
        var environment = ProcessInfo.processInfo.environment
        environment["MAC_KEY"] = Hex.encode(key)
        let hex = try await coffer("hmac", "--key-env", "MAC_KEY", "--key-encoding", "hex", "message.txt", environment: environment, in: folder)
        #expect(hex.output == expected)
        environment["MAC_KEY"] = Base64.encode(key)
        let base64 = try await coffer("hmac", "--key-env", "MAC_KEY", "--key-encoding", "base64", "message.txt", environment: environment, in: folder)
        #expect(base64.output == expected)
        try folder.write(Hex.encode(key) + "\n", to: "hex.key")
        chmod(folder.path("hex.key"), 0o600)
        let hexFile = try await coffer("hmac", "-k", "hex.key", "--key-encoding", "hex", "message.txt", in: folder)
        #expect(hexFile.output == expected)
    }

    @Test func keyProblemsAreExplained() async throws {
        let (folder, _) = try Self.keyFolder()
        let none = try await coffer("hmac", "message.txt", in: folder)
        #expect(none.status == 2)
        #expect(none.standardError.contains("a key is required: pass -k/--key FILE or --key-env VAR"))

        // A key in another encoding than named: said, without quoting any of it (the decoder's reason
        // quoted the first character it refused and its offset, parts of the secret).
        _ = try folder.write("00SUPERSECRETKEYzz\n", to: "secret.key")
        let misnamed = try await coffer("hmac", "-k", "secret.key", "--key-encoding", "hex", "message.txt", in: folder)
        #expect(misnamed.status == 2 && misnamed.standardError.contains("is not valid hex"), "\(misnamed.standardError)")
        #expect(!misnamed.standardError.contains("'S'") && !misnamed.standardError.contains("offset"), "\(misnamed.standardError)")

        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "COFFER_UNSET_KEY")
        let unset = try await coffer("hmac", "--key-env", "COFFER_UNSET_KEY", "message.txt", environment: environment, in: folder)
        #expect(unset.status == 2)
        #expect(unset.standardError.hasPrefix("coffer: error: environment variable COFFER_UNSET_KEY is not set"))

        try folder.write("not hex!", to: "bad.key")
        chmod(folder.path("bad.key"), 0o600)
        let badHex = try await coffer("hmac", "-k", "bad.key", "--key-encoding", "hex", "message.txt", in: folder)
        #expect(badHex.status == 2)
        #expect(badHex.standardError.contains("is not valid hex"))
        #expect(!badHex.standardError.contains("not hex!"), "the key's contents are never echoed")

        try folder.write([UInt8](), to: "empty.key")
        let empty = try await coffer("hmac", "-k", "empty.key", "message.txt", in: folder)
        #expect(empty.status == 2)
        #expect(empty.standardError.contains("is empty"))
    }

    @Test func worldReadableKeyFileIsWarnedAbout() async throws {
        let (folder, _) = try Self.keyFolder()
        chmod(folder.path("mac.key"), 0o644)
        let result = try await coffer("hmac", "-k", "mac.key", "message.txt", in: folder)
        #expect(result.status == 0)
        #expect(result.standardError.contains("coffer: warning: key file 'mac.key' is accessible by other users (mode 644)"))
    }
}

@Suite("coffer random, gravatar, speed")
struct SmallCommandTests {
    @Test func randomEncodingsAndLengths() async throws {
        let hex = try await coffer("random")
        #expect(hex.status == 0)
        #expect(hex.output.count == 65)
        #expect(try Hex.decode(hex.output.dropLast()).count == 32)
        #expect(try await coffer("random").output != hex.output)
        let base64 = try await coffer("random", "--bytes", "16", "--base64")
        #expect(try Base64.decode(base64.output.dropLast()).count == 16)
        let url = try await coffer("random", "--bytes", "100000", "--base64url")
        #expect(try Base64.decodeURLSafe(url.output.dropLast()).count == 100_000)
        let raw = try await coffer("random", "--bytes", "70000", "--raw")
        #expect(raw.standardOutput.count == 70_000)
        // A bare count is the number of bytes, as `openssl rand -hex 16` (issue 43: it was refused).
        let counted = try await coffer("random", "16")
        #expect(counted.status == 0 && counted.output.count == 33, "\(counted.standardError)")
        #expect(try await coffer("random", "16", "--bytes", "16").status == 0)
        let disagreeing = try await coffer("random", "16", "--bytes", "32")
        #expect(disagreeing.status == 2 && disagreeing.standardError.contains("disagree"), "\(disagreeing.standardError)")
    }

    @Test func randomOutputFileIsPrivateAndNotOverwritten() async throws {
        let folder = try TemporaryDirectory()
        let first = try await coffer("random", "--raw", "--output", "mac.key", in: folder)
        #expect(first.status == 0 && first.output.isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.path("mac.key"))
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(attributes[.size] as? Int == 32)
        let again = try await coffer("random", "--raw", "--output", "mac.key", in: folder)
        #expect(again.status == 2)
        #expect(again.standardError.contains("already exists"))
        #expect(try await coffer("random", "--raw", "--output", "mac.key", "--force", in: folder).status == 0)
        #expect(try folder.contents() == ["mac.key"])
    }

    @Test func randomRejectsBadCounts() async throws {
        for count in ["0", "-5", "2000000000"] {
            let result = try await coffer("random", "--bytes", count)
            #expect(result.status == 2, "\(count)")
        }
    }

    @Test func gravatar() async throws {
        let result = try await coffer("gravatar", "MyEmailAddress@example.com ", "--size", "200", "--default", "identicon")
        #expect(result.status == 0)
        #expect(result.output == "https://gravatar.com/avatar/84059b07d4be67b806386c0aad8070a23f18836bbaae342275dc0a83414c32ee?s=200&d=identicon\n")
        let md5 = try await coffer("gravatar", "MyEmailAddress@example.com", "--insecure-md5", "--hash-only")
        #expect(md5.output == "0bc83cb571cd1c50ba6f3e8a78ef1346\n")
        let badSize = try await coffer("gravatar", "a@example.com", "--size", "5000")
        #expect(badSize.status == 2)
        #expect(badSize.standardError == "coffer: error: expected an avatar size from 1 to 2048 pixels, found 5000\n")
        let badEmail = try await coffer("gravatar", "nobody")
        #expect(badEmail.status == 2)
    }

    @Test func speedReportsThroughput() async throws {
        let result = try await coffer("speed", "--seconds", "0.05", "--json", "sha256", "hmac-sha256")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.lines.count == 2)
        for (line, name) in zip(result.lines, ["sha256", "hmac-sha256"]) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["algorithm"] as? String == name)
            #expect(object["blockBytes"] as? Int == 16384)
            #expect((object["bytesPerSecond"] as? Double ?? 0) > 0)
        }
        let unknown = try await coffer("speed", "rot13")
        #expect(unknown.status == 2)
    }

    @Test func versionAndHelpGoToStandardOutput() async throws {
        let version = try await coffer("--version")
        // The release and the commit it was built from (12 hex digits, "-modified" for a changed work
        // tree, or "unknown" outside git).
        #expect(version.status == 0)
        let pattern = #/^\d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(-modified)?|unknown)\)\n$/#
        #expect(version.output.wholeMatch(of: pattern) != nil, "\(version.output)")
        let help = try await coffer("--help")
        #expect(help.status == 0)
        #expect(help.standardError.isEmpty)
    }
}
