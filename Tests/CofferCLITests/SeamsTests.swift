import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Issue 23: the command line meets people where they are. Each test takes files as the tools people
/// already use make them (OpenSSL, ssh-keygen, sha512sum, a Windows editor) and the built binary.
@Suite("coffer at the seams with other tools")
struct SeamsTests {
    static let haveSSHKeygen = CommandRunner.isAvailable("ssh-keygen")
    static let haveTar = CommandRunner.isAvailable("tar")

    /// Text as a Windows editor saves it: a UTF-8 byte order mark and CR LF line endings.
    static func windows(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0xEF, 0xBB, 0xBF]
        for byte in bytes {
            if byte == UInt8(ascii: "\n") { out.append(UInt8(ascii: "\r")) }
            out.append(byte)
        }
        return out
    }

    static func run(_ shell: String, in folder: TemporaryDirectory) async throws -> CommandResult {
        let coffer = try CommandRunner.cofferExecutable()
        return try await tool("sh", ["-c", "coffer() { '\(coffer)' \"$@\"; }; " + shell], in: folder)
    }

    // MARK: - Files as people have them

    @Test(.enabled(if: haveOpenSSL), arguments: ["ed25519", "p256", "rsa"])
    func windowsLineEndingsAndAByteOrderMarkReadEverywhere(type: String) async throws {
        let folder = try TemporaryDirectory()
        let generate = switch type {
        case "ed25519": ["genpkey", "-algorithm", "ed25519", "-out", "key.pem"]
        case "p256": ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem"]
        default: ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "key.pem"]
        }
        #expect(try await tool("openssl", generate, in: folder).status == 0)
        #expect(try await tool("openssl", ["pkey", "-in", "key.pem", "-pubout", "-out", "key.pub"], in: folder).status == 0)
        _ = try folder.write(Self.windows(try folder.read("key.pem")), to: "crlf.pem")
        _ = try folder.write(Self.windows(try folder.read("key.pub")), to: "crlf.pub")

        let shownPrivate = try await coffer("key", "show", "crlf.pem", in: folder)
        let shownPublic = try await coffer("key", "show", "crlf.pub", in: folder)
        #expect(shownPrivate.status == 0 && shownPublic.status == 0, "\(shownPrivate.standardError)\(shownPublic.standardError)")
        let original = try await coffer("key", "show", "key.pub", in: folder)
        #expect(shownPublic.lines.first { $0.hasPrefix("key id:") } == original.lines.first { $0.hasPrefix("key id:") })

        _ = try folder.write("release notes\n", to: "notes.txt")
        #expect(try await coffer("sign", "-k", "crlf.pem", "notes.txt", in: folder).status == 0)
        _ = try folder.write(Self.windows(try folder.read("notes.txt.sig")), to: "notes.txt.sig")
        let verified = try await coffer("verify", "-p", "crlf.pub", "notes.txt.sig", in: folder)
        #expect(verified.status == 0 && !verified.standardError.contains("warning"), "\(verified.standardError)")
        // The same bytes under another name verify, with a warning naming both files.
        try FileManager.default.copyItem(atPath: folder.path("notes.txt"), toPath: folder.path("notes-v2.txt"))
        let renamed = try await coffer("verify", "-p", "crlf.pub", "notes.txt.sig", "notes-v2.txt", in: folder)
        #expect(renamed.status == 0 && renamed.standardError.contains("made for a file named 'notes.txt', and you verified 'notes-v2.txt'"), "\(renamed.standardError)")
    }

    /// X25519 keys (made for `encrypt -r`) convert, pin and show like any other key; OpenSSL reads what
    /// `key convert` writes, and the pin is OpenSSL's SPKI digest.
    @Test(.enabled(if: haveOpenSSL))
    func x25519KeysConvertPinAndShow() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "bob.key", "--public", "bob.pub", in: folder).status == 0)
        for (file, target) in [("bob.pub", "pem"), ("bob.pub", "der"), ("bob.pub", "jwk"), ("bob.pub", "raw"), ("bob.key", "pem"), ("bob.key", "der"), ("bob.key", "jwk"), ("bob.key", "raw")] {
            let name = "\(file).\(target)"
            let converted = try await coffer("key", "convert", file, "--to", target, "-o", name, in: folder)
            #expect(converted.status == 0, "\(name): \(converted.standardError)")
        }
        #expect(try folder.read("bob.pub.raw").count == 32 && folder.read("bob.key.raw").count == 32)
        let opensslPublic = try await tool("openssl", ["pkey", "-pubin", "-in", "bob.pub.der", "-inform", "DER", "-noout", "-text"], in: folder)
        #expect(opensslPublic.output.contains("X25519 Public-Key"), "\(opensslPublic.standardError)")
        let opensslPrivate = try await tool("openssl", ["pkey", "-in", "bob.key.pem", "-noout", "-text"], in: folder)
        #expect(opensslPrivate.output.contains("X25519 Private-Key"), "\(opensslPrivate.standardError)")
        let jwk = try String(contentsOfFile: folder.path("bob.pub.jwk"), encoding: .utf8)
        #expect(jwk.contains(#""kty":"OKP""#) && jwk.contains(#""crv":"X25519""#))

        // The pin is the same from every form, and equals OpenSSL's SHA-256 of the SubjectPublicKeyInfo.
        let digest = try await Self.run("openssl pkey -pubin -in bob.pub -outform DER | openssl dgst -sha256 -binary | openssl base64", in: folder)
        for file in ["bob.pub", "bob.key", "bob.pub.jwk", "bob.key.jwk"] {
            let pin = try await coffer("pin", "of", file, in: folder)
            #expect(pin.status == 0 && pin.output == digest.output, "\(file): \(pin.output)\(pin.standardError)")
        }
        let shown = try await coffer("key", "show", "--json", "bob.pub.jwk", in: folder)
        #expect(shown.status == 0 && shown.output.contains(#""type":"X25519""#), "\(shown.standardError)")

        // A JWK recipient and a JWK identity work where PEM ones do; no form that does not exist is made up.
        _ = try folder.write("for bob\n", to: "note.txt")
        #expect(try await coffer("encrypt", "-r", "bob.pub.jwk", "note.txt", "-o", "note.coffer", in: folder).status == 0)
        #expect(try await coffer("decrypt", "-i", "bob.key.jwk", "note.coffer", "-o", "-", in: folder).output == "for bob\n")
        let ssh = try await coffer("key", "convert", "bob.pub", "--to", "ssh", in: folder)
        #expect(ssh.status != 0 && ssh.standardError.contains("X25519 keys have no ssh form"))
    }

    // MARK: - Pipes as age does

    @Test(.enabled(if: haveTar))
    func decryptIntoTarThroughAPipe() async throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.path("docs"), withIntermediateDirectories: true)
        _ = try folder.write("the plan\n", to: "docs/plan.txt")
        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "me.key", "--public", "me.pub", in: folder).status == 0)
        // No -o and standard output a pipe: the ciphertext goes down the pipe, not into docs.tar.coffer.
        let encrypted = try await Self.run("tar c docs | coffer encrypt -r me.pub | cat > docs.tar.coffer", in: folder)
        #expect(encrypted.status == 0, "\(encrypted.standardError)")
        try FileManager.default.removeItem(atPath: folder.path("docs"))

        let extracted = try await Self.run("coffer decrypt -i me.key docs.tar.coffer | tar x", in: folder)
        #expect(extracted.status == 0, "\(extracted.standardError)")
        #expect(try String(contentsOfFile: folder.path("docs/plan.txt"), encoding: .utf8) == "the plan\n")
        #expect(!FileManager.default.fileExists(atPath: folder.path("docs.tar")), "nothing written beside the ciphertext")

        // A file named on the command line and output discarded (/dev/null): discarded, as asked (issue
        // 43: a file was written beside the input instead, plaintext included).
        let discarded = try await Self.run("coffer decrypt -i me.key docs.tar.coffer > /dev/null", in: folder)
        #expect(discarded.status == 0 && !FileManager.default.fileExists(atPath: folder.path("docs.tar")), "\(discarded.standardError)")
        let named = try await Self.run("coffer encrypt -r me.pub docs/plan.txt > /dev/null", in: folder)
        #expect(named.status == 0 && !FileManager.default.fileExists(atPath: folder.path("docs/plan.txt.coffer")), "\(named.standardError)")
    }

    /// `-a/--armor` writes text that travels where bytes cannot (a mail body, a terminal, a Windows
    /// editor's CR LF), and `decrypt` and `inspect` detect it.
    @Test func armouredFilesTravelAsText() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "me.key", "--public", "me.pub", in: folder).status == 0)
        _ = try folder.write("the plan\n", to: "plan.txt")
        let encrypted = try await Self.run("coffer encrypt -a -r me.pub plan.txt | cat > plan.asc", in: folder)
        #expect(encrypted.status == 0, "\(encrypted.standardError)")
        let text = try String(contentsOfFile: folder.path("plan.asc"), encoding: .utf8)
        #expect(text.hasPrefix("-----BEGIN COFFER ENCRYPTED FILE-----\n") && text.hasSuffix("-----END COFFER ENCRYPTED FILE-----\n"))
        _ = try folder.write(Self.windows(Array(text.utf8)), to: "plan-windows.asc")
        for name in ["plan.asc", "plan-windows.asc"] {
            let opened = try await coffer("decrypt", "-i", "me.key", name, "-o", "-", in: folder)
            #expect(opened.output == "the plan\n", "\(name): \(opened.standardError)")
        }
        let described = try await coffer("inspect", "--json", "plan.asc", in: folder)
        #expect(described.output.contains(#""armored":true"#) && described.output.contains("X25519"), "\(described.output)")
        // Damage is refused, naming the line.
        _ = try folder.write(text.replacingOccurrences(of: "-----END COFFER ENCRYPTED FILE-----\n", with: ""), to: "cut.asc")
        let cut = try await coffer("decrypt", "-i", "me.key", "cut.asc", "-o", "-", in: folder)
        #expect(cut.status == 2 && cut.standardError.contains("truncated") && cut.output.isEmpty, "\(cut.standardError)")
        let legacy = try await coffer("encrypt", "-a", "--format", "rncryptor", "--password-env", "P", "plan.txt", environment: ["P": "pw"], in: folder)
        #expect(legacy.status == 2 && legacy.standardError.contains("--armor writes the coffer format only"))
        // A terminal takes armour, never binary (script(1) gives the command a terminal).
        if CommandRunner.isAvailable("script") {
            let armoured = try await Self.run("script -qec '\(try CommandRunner.cofferExecutable()) encrypt -a -r me.pub -o - plan.txt' /dev/null", in: folder)
            #expect(armoured.output.contains("-----BEGIN COFFER ENCRYPTED FILE-----"), "\(armoured.output)\(armoured.standardError)")
            let binary = try await Self.run("script -qec '\(try CommandRunner.cofferExecutable()) encrypt -r me.pub -o - plan.txt' /dev/null", in: folder)
            #expect(binary.output.contains("refusing to write ciphertext to a terminal"), "\(binary.output)")
        }
    }

    @Test func recipientsFileListsKeysInEveryForm() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "bob.key", "--public", "bob.pub", in: folder).status == 0)
        #expect(try await coffer("key", "generate", "-t", "p256", "-o", "carol.key", "--public", "carol.pub", in: folder).status == 0)
        let jwk = try await coffer("key", "convert", "carol.pub", "--to", "jwk", in: folder).output
        let bob = try String(contentsOfFile: folder.path("bob.pub"), encoding: .utf8)
        _ = try folder.write(Self.windows(Array("# the team\n\(bob)\n\(jwk)\n".utf8)), to: "team.txt")
        _ = try folder.write("secret\n", to: "secret.txt")
        let encrypted = try await coffer("encrypt", "-R", "team.txt", "secret.txt", "-o", "secret.coffer", in: folder)
        #expect(encrypted.status == 0, "\(encrypted.standardError)")
        for identity in ["bob.key", "carol.key"] {
            let opened = try await coffer("decrypt", "-i", identity, "secret.coffer", "-o", "-", in: folder)
            #expect(opened.output == "secret\n", "\(opened.standardError)")
        }
        _ = try folder.write("# nobody\nnot a key\n", to: "bad.txt")
        let refused = try await coffer("encrypt", "-R", "bad.txt", "secret.txt", "-o", "never.coffer", in: folder)
        #expect(refused.status == 2 && refused.standardError.contains("bad.txt:2"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("never.coffer")))
    }

    // MARK: - hash -c as sha256sum -c

    @Test(.enabled(if: haveCoreutils))
    func hashCheckReadsAnyListAsSha256sumDoes() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write("a\n", to: "a")
        _ = try folder.write("b\n", to: "b")
        // A SHA512SUMS list needs no -a: the digests' length says SHA-512.
        _ = try folder.write(try await tool("sha512sum", ["a", "b"], in: folder).standardOutput, to: "SHA512SUMS")
        let checked = try await coffer("hash", "-c", "SHA512SUMS", in: folder)
        #expect(checked.status == 0 && checked.lines == ["a: OK", "b: OK"], "\(checked.standardError)")
        // Saved by a Windows editor.
        _ = try folder.write(Self.windows(try folder.read("SHA512SUMS")), to: "windows.sums")
        #expect(try await coffer("hash", "-c", "windows.sums", in: folder).status == 0)

        // --status: nothing printed, the status says it.
        let quiet = try await coffer("hash", "-c", "--status", "SHA512SUMS", in: folder)
        #expect(quiet.status == 0 && quiet.output.isEmpty && quiet.standardError.isEmpty)
        let sums = try await tool("sha256sum", ["a"], in: folder).output + String(repeating: "0", count: 64) + "  missing\n"
        _ = try folder.write(sums, to: "SHA256SUMS")
        let failed = try await coffer("hash", "-c", "--status", "SHA256SUMS", in: folder)
        #expect(failed.status == 1 && failed.output.isEmpty && failed.standardError.isEmpty)

        // --ignore-missing: the missing file is skipped; all missing is still a failure.
        let skipping = try await coffer("hash", "-c", "--ignore-missing", "SHA256SUMS", in: folder)
        #expect(skipping.status == 0 && skipping.lines == ["a: OK"], "\(skipping.standardError)")
        _ = try folder.write(String(repeating: "0", count: 64) + "  missing\n", to: "gone.sums")
        let allMissing = try await coffer("hash", "-c", "--ignore-missing", "gone.sums", in: folder)
        #expect(allMissing.status == 1 && allMissing.standardError.contains("no file was verified"))

        // --strict is what Coffer always does: a malformed line fails the check.
        _ = try folder.write(try await tool("sha256sum", ["a"], in: folder).output + "not a line\n", to: "mixed.sums")
        #expect(try await coffer("hash", "-c", "--strict", "mixed.sums", in: folder).status == 2)
        #expect(try await coffer("hash", "--status", "a", in: folder).status == 2, "--status without -c is a usage error")
    }

    // MARK: - Keys as ssh-keygen and OpenSSL make them

    @Test(.enabled(if: haveSSHKeygen), arguments: [["-t", "ed25519"], ["-t", "ecdsa", "-b", "256"], ["-t", "ecdsa", "-b", "384"], ["-t", "rsa", "-b", "2048"]])
    func opensshKeysSignAndShowTheFingerprintSshKeygenShows(type: [String]) async throws {
        let folder = try TemporaryDirectory()
        #expect(try await tool("ssh-keygen", ["-q", "-N", "", "-C", "ada@example.org", "-f", "id"] + type, in: folder).status == 0)
        let expected = try await tool("ssh-keygen", ["-lf", "id.pub"], in: folder).output
        for file in ["id.pub", "id"] {
            let line = try await coffer("key", "show", "--format", "ssh", file, in: folder)
            #expect(line.status == 0 && line.output == expected, "\(file): \(line.output) \(line.standardError)")
        }
        let shown = try await coffer("key", "show", "id", in: folder)
        #expect(shown.lines.contains("format:       OpenSSH private key"))
        #expect(shown.lines.contains("comment:      ada@example.org"))
        #expect(shown.lines.contains("ssh-keygen:   " + expected.dropLast()))
        #expect(shown.lines.contains { $0.hasPrefix("fingerprint:") && $0.contains("SubjectPublicKeyInfo") && !$0.contains("SHA256:") })
        let json = try await coffer("key", "show", "--json", "id.pub", in: folder)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput)) as? [String: Any])
        #expect(object["comment"] as? String == "ada@example.org" && expected.contains(object["sshFingerprint"] as? String ?? "?"))

        // The private key in OpenSSH's own format signs; its public line verifies.
        _ = try folder.write("payload\n", to: "payload")
        #expect(try await coffer("sign", "-k", "id", "payload", in: folder).status == 0)
        let verified = try await coffer("verify", "-p", "id.pub", "payload.sig", in: folder)
        #expect(verified.status == 0, "\(verified.standardError)")
    }

    /// An `ssh-keygen -Y sign` signature given to `coffer verify` is named for what it is, with what
    /// checks it (issue 43, item 7: the hint said "for a bare OpenSSL signature, add --raw").
    @Test(.enabled(if: haveSSHKeygen))
    func anSSHSignatureIsNamedWithWhatChecksIt() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await tool("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", "id"], in: folder).status == 0)
        _ = try folder.write("release\n", to: "release.tar")
        #expect(try await tool("ssh-keygen", ["-Y", "sign", "-f", "id", "-n", "file", "release.tar"], in: folder).status == 0)
        let result = try await coffer("verify", "-p", "id.pub", "release.tar.sig", in: folder)
        #expect(result.status == 2 && result.standardError.contains("found a 'SSH SIGNATURE' block"), "\(result.standardError)")
        #expect(result.standardError.contains("hint: this is an SSH signature (ssh-keygen -Y sign)") && result.standardError.contains("ssh-keygen -Y verify"), "\(result.standardError)")
        #expect(!result.standardError.contains("--raw"))
    }

    @Test(.enabled(if: haveSSHKeygen))
    func anEncryptedOpenSSHKeySaysHowToDecryptItAndThatWorks() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await tool("ssh-keygen", ["-q", "-t", "ed25519", "-N", "hunter22", "-f", "locked"], in: folder).status == 0)
        let refused = try await coffer("key", "show", "locked", in: folder)
        #expect(refused.status == 2 && refused.standardError.contains("ssh-keygen -p -N \"\" -f KEY.plain"), "\(refused.standardError)")
        // The advice, followed (the old passphrase given with -P instead of at the prompt).
        try FileManager.default.copyItem(atPath: folder.path("locked"), toPath: folder.path("locked.plain"))
        #expect(try await tool("ssh-keygen", ["-p", "-P", "hunter22", "-N", "", "-f", "locked.plain"], in: folder).status == 0)
        let shown = try await coffer("key", "show", "locked.plain", in: folder)
        #expect(shown.status == 0 && shown.lines.contains("format:       OpenSSH private key"), "\(shown.standardError)")
    }

    @Test(.enabled(if: haveSSHKeygen && haveOpenSSL))
    func anOpenSSLKeyShowsTheFingerprintSshKeygenGivesIt() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await tool("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem"], in: folder).status == 0)
        #expect(try await tool("openssl", ["pkey", "-in", "key.pem", "-pubout", "-out", "key.pub"], in: folder).status == 0)
        let line = try await tool("ssh-keygen", ["-i", "-m", "PKCS8", "-f", "key.pub"], in: folder)
        _ = try folder.write(line.standardOutput, to: "key.ssh")
        let fingerprint = try #require(try await tool("ssh-keygen", ["-lf", "key.ssh"], in: folder).output.split(separator: " ").dropFirst().first)
        let shown = try await coffer("key", "show", "--format", "ssh", "key.pub", in: folder)
        #expect(shown.output == "256 \(fingerprint) no comment (ECDSA)\n")
    }

    @Test(.enabled(if: haveOpenSSL))
    func opensslDefaultSignaturesVerifyOrSayWhatWouldVerify() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write("data\n", to: "data")
        #expect(try await tool("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "rsa.pem"], in: folder).status == 0)
        #expect(try await tool("openssl", ["pkey", "-in", "rsa.pem", "-pubout", "-out", "rsa.pub"], in: folder).status == 0)
        // `openssl dgst -sign` with its default hash (SHA-256) and with SHA-384: the DigestInfo says which.
        for (flag, name) in [("-sha256", "SHA-256"), ("-sha384", "SHA-384"), ("-sha512", "SHA-512")] {
            #expect(try await tool("openssl", ["dgst", flag, "-sign", "rsa.pem", "-out", "data.sig", "data"], in: folder).status == 0)
            let verified = try await coffer("verify", "-p", "rsa.pub", "--raw", "data.sig", "data", in: folder)
            #expect(verified.status == 0 && verified.output.contains("PKCS#1 v1.5, \(name)"), "\(verified.standardError)")
        }
        #expect(try await tool("openssl", ["dgst", "-sign", "rsa.pem", "-out", "data.sig", "data"], in: folder).status == 0)
        let strict = try await coffer("verify", "-p", "rsa.pub", "--raw", "--hash", "sha512", "data.sig", "data", in: folder)
        #expect(strict.status == 1 && strict.standardError.contains("--hash sha256"), "a named hash is held to, with a hint")

        // ECDSA does not name its hash: without --hash, what OpenSSL pairs with the curve is tried (issue
        // 43: `openssl dgst -sha256 -sign` with a P-256 key failed, the hint saying --hash sha256), then
        // SHA-512 (what `coffer sign --raw` hashes with); a named hash is held to, with a hint.
        #expect(try await tool("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem"], in: folder).status == 0)
        #expect(try await tool("openssl", ["pkey", "-in", "ec.pem", "-pubout", "-out", "ec.pub"], in: folder).status == 0)
        for (flag, name) in [("-sha256", "SHA-256"), ("-sha512", "SHA-512")] {
            #expect(try await tool("openssl", ["dgst", flag, "-sign", "ec.pem", "-out", "ec.sig", "data"], in: folder).status == 0)
            let ecdsa = try await coffer("verify", "-p", "ec.pub", "--raw", "ec.sig", "data", in: folder)
            #expect(ecdsa.status == 0 && ecdsa.output.contains(name), "\(flag): \(ecdsa.output)\(ecdsa.standardError)")
        }
        #expect(try await tool("openssl", ["dgst", "-sha384", "-sign", "ec.pem", "-out", "ec.sig", "data"], in: folder).status == 0)
        let ecdsa = try await coffer("verify", "-p", "ec.pub", "--raw", "ec.sig", "data", in: folder)
        #expect(ecdsa.status == 1 && ecdsa.standardError.contains("it verifies with --hash sha384"), "\(ecdsa.standardError)")
        #expect(try await coffer("verify", "-p", "ec.pub", "--raw", "--hash", "sha384", "ec.sig", "data", in: folder).status == 0)
        let held = try await coffer("verify", "-p", "ec.pub", "--raw", "--hash", "sha256", "ec.sig", "data", in: folder)
        #expect(held.status == 1, "a named hash is held to")

        // PSS with OpenSSL's default (longest) salt cannot be checked through swift-crypto: the failure says why.
        #expect(try await tool("openssl", ["dgst", "-sha512", "-sign", "rsa.pem", "-sigopt", "rsa_padding_mode:pss", "-out", "pss.sig", "data"], in: folder).status == 0)
        let pss = try await coffer("verify", "-p", "rsa.pub", "--raw", "--pss", "pss.sig", "data", in: folder)
        #expect(pss.status == 1 && pss.standardError.contains("rsa_pss_saltlen:digest"), "\(pss.standardError)")
    }
}
