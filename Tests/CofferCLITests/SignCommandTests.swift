import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("coffer key, sign, verify")
struct SignCommandTests {
    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test(arguments: ["ed25519", "p256", "rsa2048", "mldsa65"])
    func generateSignVerify(type: String) async throws {
        let folder = try TemporaryDirectory()
        let generated = try await coffer("key", "generate", "-t", type, "-o", "my.key", "--public", "my.pub", in: folder)
        #expect(generated.status == 0, "\(generated.standardError)")
        #expect(try Self.mode(folder.path("my.key")) == 0o600)
        #expect(try Self.mode(folder.path("my.pub")) == 0o644)
        let keyID = try #require(generated.lines.first?.split(separator: " ").last.map(String.init))
        #expect(keyID.count == 16)

        let shown = try await coffer("key", "show", "my.pub", in: folder)
        #expect(shown.lines.contains("key id:       \(keyID)"))
        #expect(shown.lines.contains("format:       PEM SubjectPublicKeyInfo"))

        try folder.write(Fixtures.randomBytes(count: 200_000), to: "release.bin")
        let signed = try await coffer("sign", "-k", "my.key", "release.bin", "--comment", "v1.0 ✓", in: folder)
        #expect(signed.status == 0, "\(signed.standardError)")
        #expect(try String(contentsOfFile: folder.path("release.bin.sig"), encoding: .utf8).hasPrefix("-----BEGIN COFFER SIGNATURE-----\n"))

        let verified = try await coffer("verify", "-p", "my.pub", "release.bin.sig", in: folder)
        #expect(verified.status == 0)
        #expect(verified.lines.last == "comment: v1.0 ✓")

        try folder.write(Fixtures.randomBytes(count: 200_000), to: "release.bin")
        let tampered = try await coffer("verify", "-p", "my.pub", "release.bin.sig", "release.bin", in: folder)
        #expect(tampered.status == 1)
        #expect(!tampered.output.contains("v1.0"), "the comment is shown only for a valid signature")
        #expect(tampered.standardError.contains("the signature does not match 'release.bin'"))
    }

    @Test func anotherKeyNamesBothKeyIDs() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-o", "a.key", "--public", "a.pub", in: folder).status == 0)
        #expect(try await coffer("key", "generate", "-o", "b.key", "--public", "b.pub", in: folder).status == 0)
        try folder.write("data", to: "file")
        #expect(try await coffer("sign", "-k", "a.key", "file", in: folder).status == 0)
        let result = try await coffer("verify", "-p", "b.pub", "file.sig", "file", in: folder)
        #expect(result.status == 1)
        let a = try await coffer("key", "show", "--json", "a.pub", in: folder).output
        let b = try await coffer("key", "show", "--json", "b.pub", in: folder).output
        let idA = try #require(try JSONSerialization.jsonObject(with: Data(a.utf8)) as? [String: Any])["keyID"] as? String
        let idB = try #require(try JSONSerialization.jsonObject(with: Data(b.utf8)) as? [String: Any])["keyID"] as? String
        #expect(result.standardError.contains("the signature was made by key \(idA ?? "?"), not by key \(idB ?? "?")"))
    }

    @Test func encryptedKeysTakePasswordsFromFilesAndVariables() async throws {
        let folder = try TemporaryDirectory()
        try folder.write("s3cret\nignored second line\n", to: "pass.txt")
        let generated = try await coffer("key", "generate", "-t", "p256", "-o", "enc.key", "--encrypt", "--password-file", "pass.txt", in: folder)
        #expect(generated.status == 0, "\(generated.standardError)")
        #expect(try String(contentsOfFile: folder.path("enc.key"), encoding: .utf8).hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        try folder.write("x", to: "file")
        var environment = ProcessInfo.processInfo.environment
        environment["KEY_PASSWORD"] = "s3cret"
        let signed = try await coffer("sign", "-k", "enc.key", "--password-env", "KEY_PASSWORD", "file", environment: environment, in: folder)
        #expect(signed.status == 0, "\(signed.standardError)")
        environment["KEY_PASSWORD"] = "wrong"
        let wrong = try await coffer("sign", "-k", "enc.key", "--password-env", "KEY_PASSWORD", "file", "-o", "other.sig", environment: environment, in: folder)
        #expect(wrong.status == 1, "a wrong key password is a failed check, as a wrong decryption password is (issue 23)")
        #expect(wrong.standardError.hasPrefix("coffer: error: enc.key: the password is wrong, or the encrypted key is damaged"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("other.sig")))
    }

    @Test func inputErrorsExitTwoWithClearMessages() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-o", "k.key", "--public", "k.pub", in: folder).status == 0)
        try folder.write("data", to: "file")
        try folder.write("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2Vw\n", to: "truncated.pem")

        let publicForSigning = try await coffer("sign", "-k", "k.pub", "file", in: folder)
        #expect(publicForSigning.status == 2)
        #expect(publicForSigning.standardError.contains("'k.pub' holds a public key (PEM SubjectPublicKeyInfo); signing needs the private key"))

        let truncated = try await coffer("key", "show", "truncated.pem", in: folder)
        #expect(truncated.status == 2)
        #expect(truncated.standardError.contains("is not closed (truncated?)"))

        try folder.write("garbage", to: "file.sig")
        let garbageSignature = try await coffer("verify", "-p", "k.pub", "file.sig", "file", in: folder)
        #expect(garbageSignature.status == 2)
        #expect(garbageSignature.standardError.contains("hint: for a bare OpenSSL signature, add --raw"))

        let missing = try await coffer("verify", "-p", "nope.pub", "file.sig", "file", in: folder)
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("cannot open 'nope.pub': no such file or directory"))

        let existing = try await coffer("key", "generate", "-o", "k.key", in: folder)
        #expect(existing.status == 2)
        #expect(existing.standardError.contains("'k.key' already exists"))

        let privateToStdout = try await coffer("key", "convert", "k.key", "--to", "jwk", in: folder)
        #expect(privateToStdout.status == 2)
        #expect(privateToStdout.output.isEmpty)
    }

    @Test(.enabled(if: haveOpenSSL))
    func rawSignaturesInteroperateWithOpenSSL() async throws {
        let folder = try TemporaryDirectory()
        try folder.write(Fixtures.randomBytes(count: 3 << 20), to: "data.bin")
        for (name, genpkey) in [("rsa", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]), ("ec", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])] {
            _ = try await tool("openssl", ["genpkey"] + genpkey + ["-out", "\(name).pem"], in: folder)
            _ = try await tool("openssl", ["pkey", "-in", "\(name).pem", "-pubout", "-out", "\(name).pub"], in: folder)
            let ours = try await coffer("sign", "-k", "\(name).pem", "--raw", "data.bin", "-o", "\(name)-ours.sig", in: folder)
            #expect(ours.status == 0, "\(ours.standardError)")
            let check = try await tool("openssl", ["dgst", "-sha512", "-verify", "\(name).pub", "-signature", "\(name)-ours.sig", "data.bin"], in: folder)
            #expect(check.output == "Verified OK\n", "\(name): \(check.standardError)")
            _ = try await tool("openssl", ["dgst", "-sha512", "-sign", "\(name).pem", "-out", "\(name)-theirs.sig", "data.bin"], in: folder)
            #expect(try await coffer("verify", "-p", "\(name).pub", "--raw", "\(name)-theirs.sig", "data.bin", in: folder).status == 0)
            if name == "rsa" {
                let a = try Data(contentsOf: URL(fileURLWithPath: folder.path("rsa-ours.sig")))
                let b = try Data(contentsOf: URL(fileURLWithPath: folder.path("rsa-theirs.sig")))
                #expect(a == b, "coffer sign --raw writes exactly what openssl dgst -sha512 -sign writes")
            }
        }
        _ = try await tool("openssl", ["genpkey", "-algorithm", "ED25519", "-out", "ed.pem"], in: folder)
        #expect(try await coffer("sign", "-k", "ed.pem", "--raw", "data.bin", "-o", "ed-ours.sig", in: folder).status == 0)
        _ = try await tool("openssl", ["pkeyutl", "-sign", "-rawin", "-inkey", "ed.pem", "-in", "data.bin", "-out", "ed-theirs.sig"], in: folder)
        let a = try Data(contentsOf: URL(fileURLWithPath: folder.path("ed-ours.sig")))
        let b = try Data(contentsOf: URL(fileURLWithPath: folder.path("ed-theirs.sig")))
        #expect(a == b)
        let tamper = try await coffer("verify", "-p", "ed.pem", "--raw", "ed-theirs.sig", "ed.pem", in: folder)
        #expect(tamper.status == 1)
    }

    /// One signature, one meaning: a raw signature of a file that begins with a keychain export's label
    /// was a valid export signature (an export forged with it imported with `-p`). Raw signing of such a
    /// file is refused, by every kind of key, before anything is signed or written; a file that only
    /// looks alike is signed as before.
    @Test func rawSigningRefusesWhatBeginsWithCoffersLabels() async throws {
        let folder = try TemporaryDirectory()
        try folder.write(Array("coffer-keychain-export v2".utf8) + [0] + Array("COFFERKC\u{2}".utf8) + Fixtures.randomBytes(count: 300), to: "export-body.bin")
        try folder.write(Array("coffer-signature-v1".utf8) + [0] + Fixtures.randomBytes(count: 40), to: "sig-body.bin")
        try folder.write(Array("coffer-keychain-export v2 is only text".utf8), to: "alike.txt")
        for type in ["ed25519", "p256"] {
            #expect(try await coffer("key", "generate", "-t", type, "-o", "\(type).key", in: folder).status == 0)
            for (file, label) in [("export-body.bin", "coffer-keychain-export v2"), ("sig-body.bin", "coffer-signature-v1")] {
                let refused = try await coffer("sign", "-k", "\(type).key", "--raw", "--hash", "sha256", file, "-o", "\(type).sig", in: folder)
                #expect(refused.status != 0 && refused.standardError.contains("begins with '\(label)'"), "\(type) \(file): \(refused.standardError)")
                #expect(!FileManager.default.fileExists(atPath: folder.path("\(type).sig")), "nothing written")
            }
            #expect(try await coffer("sign", "-k", "\(type).key", "--raw", "alike.txt", "-o", "\(type)-alike.sig", in: folder).status == 0)
            // A Coffer signature file of the same bytes is what to make instead.
            #expect(try await coffer("sign", "-k", "\(type).key", "export-body.bin", "-o", "\(type)-file.sig", in: folder).status == 0)
        }
    }

    @Test func convertWritesEveryFormat() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-t", "p256", "-o", "k.key", in: folder).status == 0)
        let original = try await coffer("key", "show", "--json", "k.key", in: folder).output
        let fingerprint = try #require(try JSONSerialization.jsonObject(with: Data(original.utf8)) as? [String: Any])["fingerprint"] as? String
        for target in ["pem", "der", "sec1", "jwk", "apple"] {
            let converted = try await coffer("key", "convert", "k.key", "--to", target, "-o", "out.\(target)", in: folder)
            #expect(converted.status == 0, "\(target): \(converted.standardError)")
            #expect(try Self.mode(folder.path("out.\(target)")) == 0o600, "\(target): private keys are written 0600")
            let shown = try await coffer("key", "show", "--json", "--apple-key-class", "private", "out.\(target)", in: folder)
            #expect(shown.output.contains(fingerprint ?? "?"), "\(target)")
        }
        let ssh = try await coffer("key", "convert", "k.key", "--to", "ssh", "--public-only", in: folder)
        #expect(ssh.output.hasPrefix("ecdsa-sha2-nistp256 AAAA"))
        let pkcs1 = try await coffer("key", "convert", "k.key", "--to", "pkcs1", "-o", "x.pem", in: folder)
        #expect(pkcs1.status == 2)
        #expect(pkcs1.standardError.contains("PKCS#1 holds RSA keys"))
    }
}
