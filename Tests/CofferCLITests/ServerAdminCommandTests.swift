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

        // A list is one JSON array, and an empty list is still JSON (issue 43: nothing was printed, and a
        // list was one object per line).
        // `server users` and `server tokens` alone list, as `server keys` does.
        for list in [["server", "keys", "list"], ["server", "users", "list"], ["server", "tokens", "list"], ["server", "users"], ["server", "tokens"]] {
            let empty = try await coffer(list + ["--json"] + admin, in: folder)
            #expect(empty.status == 0 && empty.output == "[]\n", "\(list): '\(empty.output)' \(empty.standardError)")
        }

        let device = ["server", "register", "--server", base, "-k", "app.key"]
        let refused = try await coffer(device, in: folder)
        #expect(refused.status != 0 && refused.standardError.contains("token") && refused.standardError.contains("hint:"), "\(refused.standardError)")

        let created = try await coffer(["server", "tokens", "create", "--uses", "1"] + admin, in: folder)
        #expect(created.status == 0, "\(created.standardError)")
        let token = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("rt_"))
        _ = try folder.write(token + "\n", to: "token.txt")
        let registered = try await coffer(device + ["--token-file", "token.txt", "--json"], in: folder)
        #expect(registered.status == 0, "\(registered.standardError)")
        let keyID = try #require((try JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)
        // Again, with the spent token: the key is registered, but a token that no longer holds is refused
        // for it as for a new key; without --json the key id alone is printed.
        let spent = try await coffer(device + ["--token-file", "token.txt"], in: folder)
        #expect(spent.status != 0 && spent.standardError.contains("invalid-token"), "\(spent.standardError)")

        let again = try await coffer(["request", "-X", "POST", base + "/register", "-d", #"{"algorithm": "hmac-sha256", "token": "\#(token)"}"#], in: folder)
        #expect(again.status == 1 && again.output.contains("invalid-token"), "one use: \(again.output)")

        let signUp = ["request", "-k", "app.key", "--keyid", keyID, "-X", "POST", base + "/register_user"]
        #expect(try await coffer(signUp + ["-d", #"{"email": "ada@example.com", "name": "Ada"}"#], in: folder).status == 0)

        let listed = try await coffer(["server", "keys", "list", "--json"] + admin, in: folder)
        // `server keys` alone lists (issue 43: it asked for an action).
        let bare = try await coffer(["server", "keys", "--json"] + admin, in: folder)
        #expect(bare.status == 0 && bare.output == listed.output, "\(bare.standardError)")
        #expect(listed.status == 0)
        let entry = try #require((try JSONSerialization.jsonObject(with: Data(listed.standardOutput)) as? [[String: Any]])?.first)
        #expect(entry["keyId"] as? String == keyID && entry["state"] as? String == "active")

        // Signing a user up made the key no member of it; the admin finds the user by its address and
        // links the device.
        #expect(entry["userId"] == nil || entry["userId"] is NSNull, "\(entry)")
        let found = try await coffer(["server", "users", "list", "--email", "ADA@Example.com", "--json"] + admin, in: folder)
        let user = (try? JSONSerialization.jsonObject(with: Data(found.standardOutput)) as? [[String: Any]])?.first
        #expect(found.status == 0 && user?["id"] as? Int == 1 && user?["keyId"] as? String == keyID, "\(found.output)\(found.standardError)")
        let linked = try await coffer(["server", "keys", "link", keyID, "--user", "1", "--email", "ada@example.com", "--json"] + admin, in: folder)
        let linkedEntry = linked.lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(linked.status == 0 && linkedEntry?["userId"] as? Int == 1, "\(linked.output)")
        let unknownUser = try await coffer(["server", "keys", "link", keyID, "--user", "99", "--email", "ada@example.com"] + admin, in: folder)
        #expect(unknownUser.status != 0 && unknownUser.standardError.contains("no user has the id 99"), "\(unknownUser.standardError)")
        let noUser = try await coffer(["server", "keys", "link", keyID] + admin, in: folder)
        #expect(noUser.status != 0 && noUser.standardError.contains("--user"), "\(noUser.standardError)")

        let history = try await coffer(["server", "keys", "events", keyID] + admin, in: folder)
        #expect(history.status == 0 && history.lines.count == 2, "\(history.output)\(history.standardError)")
        #expect(history.lines.first?.contains("user  by admin:") == true && history.lines.last?.contains("registered  by key:\(keyID)") == true, "\(history.output)")

        let revoked = try await coffer(["server", "keys", "revoke", keyID] + admin, in: folder)
        #expect(revoked.output == "\(keyID) revoked\n", "\(revoked.standardError)")
        let after = try await coffer(signUp + ["-d", #"{"email": "bob@example.com", "name": "Bob"}"#], in: folder)
        #expect(after.status == 1 && after.output.contains("key-revoked"), "\(after.output)")
        let enable = try await coffer(["server", "keys", "enable", keyID] + admin, in: folder)
        #expect(enable.status != 0 && enable.standardError.contains("revocation is final"), "\(enable.standardError)")

        // The app's own key is no admin key.
        let notAdmin = try await coffer(["server", "keys", "list", "--server", base, "-k", "app.key"], in: folder)
        #expect(notAdmin.status != 0 && notAdmin.standardError.contains("--admin-key"), "\(notAdmin.standardError)")
    }

    /// A server that is not there is said as a sentence naming the host and port (issue 43: "the server
    /// did not answer: connection reset (error set): Connection refused) (errno: 111)").
    @Test func aServerThatIsNotThereIsNamed() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-o", "dev.key", in: folder).status == 0)
        // A bare HOST:PORT too (https, as the client reads it), which once printed the connection's raw
        // error (for a TLS failure, with the build path of the TLS library).
        for (arguments, server) in [(["server", "register"], "http://127.0.0.1:1"), (["server", "keys", "list"], "http://127.0.0.1:1"), (["server", "keys", "list"], "127.0.0.1:1")] {
            let refused = try await coffer(arguments + ["--server", server, "-k", "dev.key"], in: folder)
            #expect(refused.status == 2, "\(refused.standardError)")
            #expect(refused.standardError.contains("127.0.0.1:1 refused the connection") && !refused.standardError.contains("errno"), "\(server): \(refused.standardError)")
        }
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

        // Registered without an encryption key first: no data key, and the hint says how to add one.
        let registered = try await coffer(["server", "register", "--server", base, "-k", "device.key"], in: folder)
        #expect(registered.status == 0 && registered.output.hasPrefix("k_"), "\(registered.standardError)")
        let device = ["--server", base, "-k", "device.key", "-i", "device-x25519.key"]
        let none = try await coffer(["server", "data-key", "fetch"] + device + ["-o", "none.key"], in: folder)
        #expect(none.status != 0 && none.standardError.contains("set-encryption-key"), "\(none.standardError)")
        // Registering again to add it is refused, with the way to do it.
        let readding = try await coffer(["server", "register", "--server", base, "-k", "device.key", "--encryption-key", "device-x25519.pub"], in: folder)
        #expect(readding.status != 0 && readding.standardError.contains("encryption-key-mismatch") && readding.standardError.contains("set-encryption-key"), "\(readding.standardError)")
        let set = try await coffer(["server", "set-encryption-key", "--server", base, "-k", "device.key", "--encryption-key", "device-x25519.pub", "--json"], in: folder)
        let change = set.lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(set.status == 0 && change?["changed"] as? Bool == true, "\(set.output)\(set.standardError)")
        let again = try await coffer(["server", "register", "--server", base, "-k", "device.key", "--encryption-key", "device-x25519.pub"], in: folder)
        #expect(again.status == 0 && again.standardError.contains("already registered"), "\(again.standardError)")
        _ = try folder.write("keychain password\n", to: "kc.pass")
        _ = try folder.write("secret notes\n", to: "notes.txt")

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
