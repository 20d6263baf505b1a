import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer serve --admin-key` and `coffer server keys|tokens` against it, process to process: a token
/// registers exactly as often as it says, and a revoked key's next signed request is refused (the
/// server re-reads key records on every request here, `--key-cache-ms 0`; the half-second default is
/// held to its word with an injected clock in `AllowListTests`).
@Suite("coffer server (admin)")
struct ServerAdminCommandTests {
    @Test func tokensAndRevocationFromTheCommandLine() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["key", "generate", "-t", "ed25519", "-o", "admin.key", "--public", "admin.pub"], in: folder).status == 0)
        #expect(try await coffer(["key", "generate", "-t", "ed25519", "-o", "app.key", "--public", "app.pub"], in: folder).status == 0)
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(),
            ["serve", "--port", "0", "--database", "sqlite:" + folder.path("server.sqlite"), "--admin-key", "admin.pub", "--key-cache-ms", "0"],
            pipeInput: false, currentDirectory: folder.path
        )
        defer { server.stop() }
        let log = try #require(await server.waitForError(containing: "listening on"))
        #expect(!log.contains("registration is open"), "an admin key makes registration need tokens")
        let port = try #require(log.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: ":").last.map(String.init))
        let base = "http://127.0.0.1:\(port)"
        let admin = ["--server", base, "-k", "admin.key"]

        let pem = try String(contentsOfFile: folder.path("app.pub"), encoding: .utf8).replacingOccurrences(of: "\n", with: "\\n")
        let refused = try await coffer(["request", "-X", "POST", base + "/register", "-d", #"{"publicKey": "\#(pem)"}"#], in: folder)
        #expect(refused.status == 1 && refused.output.contains("token-required"), "\(refused.output)")

        let created = try await coffer(["server", "tokens", "create", "--uses", "1"] + admin, in: folder)
        #expect(created.status == 0, "\(created.standardError)")
        let token = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("rt_"))
        let registered = try await coffer(["request", "-X", "POST", base + "/register", "-d", #"{"publicKey": "\#(pem)", "token": "\#(token)"}"#], in: folder)
        #expect(registered.status == 0, "\(registered.output)")
        let keyID = try #require((try JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)

        let again = try await coffer(["request", "-X", "POST", base + "/register", "-d", #"{"algorithm": "hmac-sha256", "token": "\#(token)"}"#], in: folder)
        #expect(again.status == 1 && again.output.contains("invalid-token"), "one use: \(again.output)")

        let user = ["request", "-k", "app.key", "--keyid", keyID, "-X", "POST", base + "/register_user"]
        #expect(try await coffer(user + ["-d", #"{"email": "ada@example.com", "name": "Ada"}"#], in: folder).status == 0)

        let listed = try await coffer(["server", "keys", "list", "--json"] + admin, in: folder)
        #expect(listed.status == 0)
        let entry = try #require(listed.lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(entry["keyId"] as? String == keyID && entry["state"] as? String == "active")

        // Signing a user up linked the key to it (user 1); link moves a device to a user that exists.
        #expect(entry["userId"] as? Int == 1, "\(entry)")
        let linked = try await coffer(["server", "keys", "link", keyID, "--user", "1", "--json"] + admin, in: folder)
        let linkedEntry = linked.lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(linked.status == 0 && linkedEntry?["userId"] as? Int == 1, "\(linked.output)")
        let unknownUser = try await coffer(["server", "keys", "link", keyID, "--user", "99"] + admin, in: folder)
        #expect(unknownUser.status != 0 && unknownUser.standardError.contains("no user has the id 99"), "\(unknownUser.standardError)")
        let noUser = try await coffer(["server", "keys", "link", keyID] + admin, in: folder)
        #expect(noUser.status != 0 && noUser.standardError.contains("--user"), "\(noUser.standardError)")

        let revoked = try await coffer(["server", "keys", "revoke", keyID] + admin, in: folder)
        #expect(revoked.output == "\(keyID) revoked\n", "\(revoked.standardError)")
        let after = try await coffer(user + ["-d", #"{"email": "bob@example.com", "name": "Bob"}"#], in: folder)
        #expect(after.status == 1 && after.output.contains("key-revoked"), "\(after.output)")
        let enable = try await coffer(["server", "keys", "enable", keyID] + admin, in: folder)
        #expect(enable.status != 0 && enable.standardError.contains("revocation is final"), "\(enable.standardError)")

        // The app's own key is no admin key.
        let notAdmin = try await coffer(["server", "keys", "list", "--server", base, "-k", "app.key"], in: folder)
        #expect(notAdmin.status != 0 && notAdmin.standardError.contains("--admin-key"), "\(notAdmin.standardError)")
    }

    /// The data-key flow from the command line: register with an encryption key, fetch the key into
    /// the keychain, encrypt with it, "reinstall" (a new keychain), fetch again, decrypt.
    @Test func aDataKeyFetchedTwiceDecryptsWhatItEncrypted() async throws {
        let folder = try TemporaryDirectory()
        for arguments in [
            ["key", "generate", "-t", "ed25519", "-o", "device.key", "--public", "device.pub"],
            ["key", "generate", "-t", "x25519", "-o", "device-x25519.key", "--public", "device-x25519.pub"],
            ["random", "--raw", "--output", "master.key"],
        ] {
            let result = try await coffer(arguments, in: folder)
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
        }
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(),
            ["serve", "--port", "0", "--database", "sqlite:" + folder.path("server.sqlite"), "--master-key-file", "master.key"],
            pipeInput: false, currentDirectory: folder.path
        )
        defer { server.stop() }
        let log = try #require(await server.waitForError(containing: "listening on"))
        let port = try #require(log.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: ":").last.map(String.init))
        let base = "http://127.0.0.1:\(port)"

        let pem = { (name: String) in try String(contentsOfFile: folder.path(name), encoding: .utf8).replacingOccurrences(of: "\n", with: "\\n") }
        let registered = try await coffer(["request", "-X", "POST", base + "/register", "-d", #"{"publicKey": "\#(try pem("device.pub"))", "encryptionKey": "\#(try pem("device-x25519.pub"))"}"#], in: folder)
        #expect(registered.status == 0, "\(registered.output)")
        let keyID = try #require((try JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)
        _ = try folder.write("keychain password\n", to: "kc.pass")
        _ = try folder.write("secret notes\n", to: "notes.txt")
        let device = ["--server", base, "-k", "device.key", "--keyid", keyID, "-i", "device-x25519.key"]

        for keychain in ["first.db", "reinstalled.db"] {
            #expect(try await coffer(["keychain", "create", "--keychain", keychain, "--password-file", "kc.pass", "--scrypt-log-n", "10"], in: folder).status == 0)
            let fetched = try await coffer(["server", "data-key", "fetch"] + device + ["--keychain-tag", "notes", "--keychain", keychain, "--password-file", "kc.pass"], in: folder)
            #expect(fetched.status == 0 && fetched.output.isEmpty, "never printed: \(fetched.standardError)")
        }
        let keyed = ["--keychain-key", "notes", "--password-file", "kc.pass"]
        #expect(try await coffer(["encrypt"] + keyed + ["--keychain", "first.db", "-o", "notes.coffer", "notes.txt"], in: folder).status == 0)
        let decrypted = try await coffer(["decrypt"] + keyed + ["--keychain", "reinstalled.db", "-o", "-", "notes.coffer"], in: folder)
        #expect(decrypted.status == 0 && decrypted.output == "secret notes\n", "\(decrypted.standardError)")

        // -o writes a 0600 file; the same key again.
        #expect(try await coffer(["server", "data-key", "fetch"] + device + ["-o", "data.key"], in: folder).status == 0)
        var info = stat()
        #expect(stat(folder.path("data.key"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try await coffer(["decrypt", "-k", "data.key", "-o", "-", "notes.coffer"], in: folder).output == "secret notes\n")
    }
}
