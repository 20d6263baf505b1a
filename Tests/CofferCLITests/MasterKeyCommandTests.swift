import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer serve`'s master keys and `coffer server master-key`, process to process (issue 42, item 4):
/// a key file others can read is refused; an instance whose keys lack the database's wrapping key does
/// not start, naming both sides' ids; rotation from the command line, with `rewrap` interrupted and run
/// again. On SQLite and, when `COFFER_TEST_POSTGRES_URL` is set, on a scratch PostgreSQL database.
@Suite("coffer serve master keys")
struct MasterKeyCommandTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    /// Runs `body` with a `--database` value for a database of its own and a folder; nothing for
    /// PostgreSQL when it is not configured.
    static func withDatabase(_ backend: Backend, _ body: @escaping @Sendable (String, TemporaryDirectory) async throws -> Void) async throws {
        let folder = try TemporaryDirectory()
        switch backend {
        case .sqlite: try await body("sqlite:" + folder.path("server.sqlite"), folder)
        case .postgres: _ = try await ScratchPostgres.withDatabase { url in try await body(url, folder) }
        }
    }

    /// A running `coffer serve` and its base URL.
    struct Instance {
        let process: RunningCommand
        let base: String
    }

    /// Starts `coffer serve` with `arguments`; nil (and the program's end) when it did not start.
    static func serve(_ arguments: [String], in folder: TemporaryDirectory, environment: [String: String]? = nil) async throws -> (Instance?, CommandResult?) {
        let process = try CommandRunner.start(
            try CommandRunner.cofferExecutable(), ["serve", "--port", "0", "--registration", "open"] + arguments,
            pipeInput: false, environment: environment, currentDirectory: folder.path
        )
        guard let log = try await process.waitForError(containing: "listening on") else { return (nil, try await process.wait()) }
        let port = try #require(log.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: ":").last.map(String.init))
        return (Instance(process: process, base: "http://127.0.0.1:\(port)"), nil)
    }

    /// Stops an instance and waits for its end.
    static func stop(_ instance: Instance) async throws {
        instance.process.stop()
        _ = try await instance.process.wait()
    }

    /// A master key's id as the server computes it (docs/SERVER.md): SHA-256 over a label and the key.
    static func keyID(_ file: String, in folder: TemporaryDirectory) throws -> String {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: folder.path(file))))
        return Hex.encode(DigestAlgorithm.sha256.hash(Array("coffer-master-key-id".utf8) + bytes).bytes.prefix(8))
    }

    static func setMode(_ mode: Int, of file: String, in folder: TemporaryDirectory) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: folder.path(file))
    }

    /// Makes the files the tests use: master keys a.key and b.key, a device's signing and X25519 keys.
    static func makeKeys(in folder: TemporaryDirectory) async throws {
        for arguments in [
            ["random", "--raw", "--output", "a.key"], ["random", "--raw", "--output", "b.key"],
            ["key", "generate", "-t", "ed25519", "-o", "device.key", "--public", "device.pub"],
            ["key", "generate", "-t", "x25519", "-o", "device-x25519.key", "--public", "device-x25519.pub"],
        ] {
            let result = try await coffer(arguments, in: folder)
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
        }
    }

    /// Registers the device (with its encryption key) and returns its key id.
    static func registerDevice(at base: String, in folder: TemporaryDirectory) async throws -> String {
        let registered = try await coffer(
            ["server", "register", "--server", base, "-k", "device.key", "--encryption-key", "device-x25519.pub", "--json"], in: folder
        )
        #expect(registered.status == 0, "\(registered.standardError)")
        return try #require((try JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)
    }

    /// Fetches the device's data key into `file`; the command's result.
    static func fetchDataKey(at base: String, keyID: String, to file: String, in folder: TemporaryDirectory) async throws -> CommandResult {
        try await coffer(["server", "data-key", "fetch", "--server", base, "-k", "device.key", "--keyid", keyID, "-i", "device-x25519.key", "-o", file], in: folder)
    }

    /// A master key file others can read is refused with the `chmod` to run (it started silently);
    /// 0400 and the environment variable are accepted.
    @Test func aMasterKeyFileOthersCanReadIsRefused() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["random", "--raw", "--output", "master.key"], in: folder).status == 0)
        try Self.setMode(0o644, of: "master.key", in: folder)
        let database = ["--database", "sqlite:" + folder.path("server.sqlite")]
        let (exposed, refusal) = try await Self.serve(database + ["--master-key-file", "master.key"], in: folder)
        if let exposed { try await Self.stop(exposed) }
        #expect(exposed == nil, "started with a master key file at 0644")
        #expect(refusal?.status == 2, "\(refusal?.standardError ?? "")")
        #expect(refusal?.standardError.contains("hint: chmod 600 'master.key'") == true, "\(refusal?.standardError ?? "")")

        try Self.setMode(0o400, of: "master.key", in: folder)
        let (readOnly, _) = try await Self.serve(database + ["--master-key-file", "master.key"], in: folder)
        #expect(readOnly != nil, "0400 is its owner's alone")
        if let readOnly { try await Self.stop(readOnly) }

        var environment = ProcessInfo.processInfo.environment
        environment["COFFER_MASTER_KEY"] = Base64.encode(try Array(Data(contentsOf: URL(fileURLWithPath: folder.path("master.key")))))
        let (fromEnvironment, failed) = try await Self.serve(database, in: folder, environment: environment)
        #expect(fromEnvironment != nil, "\(failed?.standardError ?? "")")
        if let fromEnvironment { try await Self.stop(fromEnvironment) }
    }

    /// Issue 42's data loss, from the command line: an instance started with another master key on
    /// the same database started without a word. Now it does not start, names the ids it holds and
    /// the ids the database records, and the right instance still answers the same version 1.
    @Test(arguments: Backend.allCases)
    func anInstanceWithAnotherMasterKeyRefusesToStart(backend: Backend) async throws {
        try await Self.withDatabase(backend) { database, folder in
            try await Self.makeKeys(in: folder)
            let (first, _) = try await Self.serve(["--database", database, "--master-key-file", "a.key"], in: folder)
            let right = try #require(first)
            let keyID = try await Self.registerDevice(at: right.base, in: folder)
            let fetched = try await Self.fetchDataKey(at: right.base, keyID: keyID, to: "v1.key", in: folder)
            #expect(fetched.status == 0, "\(fetched.standardError)")
            try await Self.stop(right)

            let (wrong, refusal) = try await Self.serve(["--database", database, "--master-key-file", "b.key"], in: folder)
            if let wrong { try await Self.stop(wrong) }
            #expect(wrong == nil, "an instance with another master key started")
            let message = refusal?.standardError ?? ""
            #expect(refusal?.status == 2, "\(message)")
            let (held, recorded) = (try Self.keyID("b.key", in: folder), try Self.keyID("a.key", in: folder))
            #expect(message.contains(held) && message.contains(recorded), "both ids: \(message)")

            let (again, _) = try await Self.serve(["--database", database, "--master-key-file", "a.key"], in: folder)
            let restarted = try #require(again)
            let refetched = try await Self.fetchDataKey(at: restarted.base, keyID: keyID, to: "again.key", in: folder)
            #expect(refetched.standardError.contains("version 1 (newest 1"), "\(refetched.standardError)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("again.key"))) == Data(contentsOf: URL(fileURLWithPath: folder.path("v1.key"))))
            try await Self.stop(restarted)

            // Only when told, and at the cost its help states: a new keyring, and version 1 lost.
            let (abandoning, _) = try await Self.serve(["--database", database, "--master-key-file", "b.key", "--abandon-master-keyring"], in: folder)
            let fresh = try #require(abandoning)
            // The device's record is tagged under the abandoned key: refused until the operator takes it
            // as it is, and then its data key is the one that is lost.
            let refused = try await Self.fetchDataKey(at: fresh.base, keyID: keyID, to: "lost.key", in: folder)
            #expect(refused.status != 0, "\(refused.standardError)")
            let tagged = try await coffer(["server", "master-key", "rewrap", "--tag-untagged", "--database", database, "--master-key-file", "b.key"], in: folder)
            #expect(tagged.status == 0 && tagged.standardError.contains("tagged without a check (as it was): \(keyID)"), "\(tagged.standardError)")
            let lost = try await Self.fetchDataKey(at: fresh.base, keyID: keyID, to: "lost.key", in: folder)
            #expect(lost.status != 0 && lost.standardError.contains("cannot open this data key"), "\(lost.standardError)")
            try await Self.stop(fresh)
            let (old, _) = try await Self.serve(["--database", database, "--master-key-file", "a.key"], in: folder)
            if let old { try await Self.stop(old) }
            #expect(old == nil, "the abandoned key no longer starts an instance")
        }
    }
}

extension MasterKeyCommandTests {
    /// Rotation from the command line (docs/SERVER.md, "Rotating the master key"): status shows the new
    /// key held and not recorded; promote; rewrap (a dry run first, then the run, then a run that finds
    /// nothing); retire; an instance with only the retired key no longer starts, one with only the new
    /// key gives the device the same data key and verifies the HMAC key.
    @Test(arguments: Backend.allCases)
    func rotationFromTheCommandLine(backend: Backend) async throws {
        try await Self.withDatabase(backend) { database, folder in
            try await Self.makeKeys(in: folder)
            for file in ["a.key", "b.key"] { try Self.setMode(0o400, of: file, in: folder) }
            let (idA, idB) = (try Self.keyID("a.key", in: folder), try Self.keyID("b.key", in: folder))
            let db = ["--database", database]
            let both = db + ["--master-key-file", "a.key", "--master-key-file", "b.key"]

            let (started, _) = try await Self.serve(db + ["--master-key-file", "a.key"], in: folder)
            let first = try #require(started)
            let keyID = try await Self.registerDevice(at: first.base, in: folder)
            #expect(try await Self.fetchDataKey(at: first.base, keyID: keyID, to: "v1.key", in: folder).status == 0)
            let hmac = try await coffer(["request", "-X", "POST", first.base + "/register", "-d", #"{"algorithm": "hmac-sha256"}"#], in: folder)
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(hmac.standardOutput)) as? [String: Any])
            let hmacID = try #require(answer["keyId"] as? String)
            _ = try folder.write(try #require(answer["secret"] as? String) + "\n", to: "hmac.b64")
            try Self.setMode(0o600, of: "hmac.b64", in: folder)
            try await Self.stop(first)

            let status = try await coffer(["server", "master-key", "status", "--json"] + db + ["--master-key-file", "b.key"], in: folder)
            #expect(status.status == 0, "\(status.standardError)")
            let keys = try #require((try JSONSerialization.jsonObject(with: Data(status.standardOutput)) as? [String: Any])?["keys"] as? [[String: Any]])
            #expect(keys.contains { $0["keyId"] as? String == idA && $0["state"] as? String == "wrapping" && $0["dataKeys"] as? Int == 1 && $0["secrets"] as? Int == 1 }, "\(keys)")
            #expect(keys.contains { $0["keyId"] as? String == idB && $0["state"] as? String == "not recorded" && $0["held"] as? Bool == true }, "\(keys)")

            let promoted = try await coffer(["server", "master-key", "promote", idB] + both, in: folder)
            #expect(promoted.status == 0 && promoted.output == "\(idB) wraps new rows\n", "\(promoted.standardError)")
            let retiredTooSoon = try await coffer(["server", "master-key", "retire", idA] + db, in: folder)
            #expect(retiredTooSoon.status == 1 && retiredTooSoon.standardError.contains("1 data key and 1 HMAC secret are still wrapped, and 2 key records tagged, under \(idA)"), "\(retiredTooSoon.standardError)")

            let dry = try await coffer(["server", "master-key", "rewrap", "--dry-run", "--json"] + both, in: folder)
            let dryRun = try #require(try JSONSerialization.jsonObject(with: Data(dry.standardOutput)) as? [String: Any], "\(dry.standardError)")
            #expect(dryRun["dryRun"] as? Bool == true && dryRun["dataKeys"] as? Int == 1 && dryRun["secrets"] as? Int == 1, "\(dryRun)")
            let rewrap = try await coffer(["server", "master-key", "rewrap", "--batch-size", "1"] + both, in: folder)
            #expect(rewrap.status == 0, "\(rewrap.standardError)")
            #expect(rewrap.standardError.contains("pass 1: data keys: 1 rewrapped") && rewrap.standardError.contains("pass 1: key records: 2 rewrapped"), "\(rewrap.standardError)")
            #expect(rewrap.output.hasPrefix("1 data key and 1 HMAC secret (0 from clear) re-wrapped under \(idB)\n"), "\(rewrap.output)")
            let again = try await coffer(["server", "master-key", "rewrap", "--json"] + both, in: folder)
            let nothing = try #require(try JSONSerialization.jsonObject(with: Data(again.standardOutput)) as? [String: Any], "\(again.standardError)")
            #expect(nothing["dataKeys"] as? Int == 0 && nothing["secrets"] as? Int == 0, "\(nothing)")

            let retired = try await coffer(["server", "master-key", "retire", idA] + db, in: folder)
            #expect(retired.status == 0 && retired.output == "\(idA) retired\n", "\(retired.standardError)")
            let (oldOnly, refusal) = try await Self.serve(db + ["--master-key-file", "a.key"], in: folder)
            if let oldOnly { try await Self.stop(oldOnly) }
            #expect(oldOnly == nil && refusal?.standardError.contains(idB) == true, "\(refusal?.standardError ?? "")")

            let (newOnly, _) = try await Self.serve(db + ["--master-key-file", "b.key"], in: folder)
            let instance = try #require(newOnly)
            #expect(try await Self.fetchDataKey(at: instance.base, keyID: keyID, to: "after.key", in: folder).status == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("after.key"))) == Data(contentsOf: URL(fileURLWithPath: folder.path("v1.key"))))
            let signed = try await coffer(
                ["request", "-k", "hmac.b64", "--alg", "hmac-sha256", "--keyid", hmacID, "-X", "POST", instance.base + "/register_user", "-d", #"{"email": "ada@example.com", "name": "Ada"}"#],
                in: folder
            )
            #expect(signed.status == 0, "\(signed.output) \(signed.standardError)")
            try await Self.stop(instance)
        }
    }
}
