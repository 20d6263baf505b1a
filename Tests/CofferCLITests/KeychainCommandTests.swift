import CofferTestSupport
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `coffer keychain` and `coffer password` end to end, through the built binary.
@Suite("coffer keychain")
struct KeychainCommandTests {
    /// A keychain with a cheap scrypt cost in a fresh folder; `XDG_DATA_HOME` points into it too.
    struct Setup {
        let folder: TemporaryDirectory
        var path: String { folder.path("keychain.db") }
        var common: [String] { ["--keychain", path, "--password-file", folder.path("pw")] }

        init() async throws {
            folder = try TemporaryDirectory()
            try folder.writeSecret("correct horse\n", to: "pw")
            let created = try await coffer(["keychain", "create", "--scrypt-log-n", "10"] + common)
            #expect(created.status == 0, "\(created.standardError)")
        }

        func run(_ arguments: [String], input: String = "") async throws -> CommandResult {
            try await coffer(["keychain"] + arguments + common, input: Array(input.utf8))
        }
    }

    @Test func addGetListUpdateDelete() async throws {
        let setup = try await Setup()
        var result = try await setup.run(["add", "--service", "com.example.api", "--account", "ci", "--stdin", "--label", "CI token"], input: "t0ken\n")
        #expect(result.status == 0, "\(result.standardError)")
        result = try await setup.run(["get", "--service", "com.example.api", "--account", "ci"])
        #expect(result.status == 0 && result.output == "t0ken", "to a pipe the secret is printed as stored")
        result = try await setup.run(["add", "--service", "com.example.api", "--account", "ci", "--stdin"], input: "again")
        #expect(result.status == 2 && result.standardError.contains("already exists"))
        result = try await setup.run(["list", "--json"])
        #expect(result.status == 0 && result.output.contains("\"label\":\"CI token\"") && !result.output.contains("t0ken"))
        result = try await setup.run(["update", "--service", "com.example.api", "--account", "ci", "--stdin", "--new-account", "deploy"], input: "n3w")
        #expect(result.status == 0, "\(result.standardError)")
        result = try await setup.run(["get", "--service", "com.example.api", "--account", "deploy"])
        #expect(result.output == "n3w")
        result = try await setup.run(["get", "--service", "com.example.api", "--account", "ci"])
        #expect(result.status == 1 && result.standardError.contains("no generic-password item matches"))
        result = try await setup.run(["delete", "--service", "com.example.api", "--account", "deploy"])
        #expect(result.status == 0)
        result = try await setup.run(["list"])
        #expect(result.output.isEmpty)
        let mode = try #require(FileManager.default.attributesOfItem(atPath: setup.path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }

    /// The keychain file's scrypt cost is held to the same limits as any password a file carries: a
    /// header asking for more is refused before deriving, with the flag that raises the limit; and
    /// `create` writes no cost its own commands would refuse.
    @Test func aKeychainAskingForMoreWorkThanTheLimitIsRefusedWithTheWayOut() async throws {
        let setup = try await Setup()
        // log2 N 20 in the header (byte 17): 1 GiB, above the default limit of 19.
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: setup.path)))
        let header = try #require(Self.headerOffset(in: bytes), "the header row")
        bytes[header + 17] = 20
        try Data(bytes).write(to: URL(fileURLWithPath: setup.path))
        let refused = try await setup.run(["get", "--service", "s", "--account", "a"])
        #expect(refused.status == 2, "\(refused.standardError)")
        #expect(refused.standardError.contains("N=2^20") && refused.standardError.contains("--max-scrypt-log-n"), "\(refused.standardError)")

        let tooCostly = try await coffer(["keychain", "create", "--scrypt-log-n", "20", "--keychain", setup.folder.path("other.db"), "--password-file", setup.folder.path("pw")])
        #expect(tooCostly.status == 2 && tooCostly.standardError.contains("--max-scrypt-log-n 20"), "\(tooCostly.standardError)")
        #expect(!FileManager.default.fileExists(atPath: setup.folder.path("other.db")))
    }

    /// Where the keychain header (version 1, then the 16-byte id) sits in the database file: found by
    /// its layout's last field, the 60-byte wrapped master key, being the end of a 96-byte value whose
    /// bytes 17...19 are the cost `create --scrypt-log-n 10` wrote (10, 8, 1).
    static func headerOffset(in file: [UInt8]) -> Int? {
        guard file.count > 96 else { return nil }
        let matches = (0...(file.count - 96)).filter { file[$0] == 1 && file[$0 + 17] == 10 && file[$0 + 18] == 8 && file[$0 + 19] == 1 }
        return matches.count == 1 ? matches[0] : nil
    }

    @Test func wrongPasswordIsExitOneAndSecretsNeverComeFromArgv() async throws {
        let setup = try await Setup()
        _ = try setup.folder.write("wrong\n", to: "bad")
        let result = try await coffer(["keychain", "get", "--keychain", setup.path, "--password-file", setup.folder.path("bad"), "--service", "s", "--account", "a"])
        #expect(result.status == 1 && result.standardError.contains("wrong keychain password"))
        let argv = try await coffer(["keychain", "add", "--keychain", setup.path, "--service", "s", "--account", "a", "--secret", "x"])
        #expect(argv.status == 2, "there is no option that takes a secret")
        let create = try await coffer(["keychain", "create"] + setup.common)
        #expect(create.status == 2 && create.standardError.contains("already exists"))
    }

    /// Unlocked until `lock`. Where this process has no login-session keyring (CI, containers), a plain
    /// `unlock` is refused rather than falling back to the user-wide keyring, and `--user-keyring`
    /// accepts it, saying so; where it has one, the message names it.
    @Test func unlockKeepsTheSessionUntilLock() async throws {
        let setup = try await Setup()
        await #expect(try setup.run(["add", "--service", "s", "--account", "a", "--stdin"], input: "v").status == 0)
        var unlock = try await coffer("keychain", "unlock", "--keychain", setup.path, "--password-file", setup.folder.path("pw"), "--timeout", "5m")
        if unlock.status == 0 {
            #expect(unlock.standardError == "keychain unlocked for 5m in this login session's keyring\n")
        } else {
            guard !unlock.standardError.contains("kernel keyring is unavailable") else { return }  // some containers forbid keyrings
            #expect(unlock.status == 2)
            #expect(unlock.standardError.contains("this process has no login-session keyring, so the unlocked key would go to the user-wide keyring _uid_ses."), "\(unlock.standardError)")
            #expect(unlock.standardError.contains("hint: start a session keyring first ('keyctl session'), or pass --user-keyring"))
            #expect(try await coffer("keychain", "status", "--keychain", setup.path).output.contains("locked"), "nothing was stored")
            unlock = try await coffer("keychain", "unlock", "--keychain", setup.path, "--password-file", setup.folder.path("pw"), "--timeout", "5m", "--user-keyring")
            #expect(unlock.status == 0, "\(unlock.standardError)")
            #expect(unlock.standardError.contains("keychain unlocked for 5m in the user-wide keyring _uid_ses."), "\(unlock.standardError)")
        }
        let status = try await coffer("keychain", "status", "--keychain", setup.path)
        #expect(status.output.contains("unlocked"))
        let get = try await coffer("keychain", "get", "--keychain", setup.path, "--service", "s", "--account", "a")
        #expect(get.status == 0 && get.output == "v", "no password needed while unlocked: \(get.standardError)")
        let lock = try await coffer("keychain", "lock", "--keychain", setup.path)
        #expect(lock.status == 0 && lock.standardError == "keychain locked\n")
        let locked = try await coffer("keychain", "get", "--keychain", setup.path, "--service", "s", "--account", "a")
        #expect(locked.status == 2 && locked.standardError.contains("password is needed"))
    }

    /// The keyring entry is named by the keychain's identity: unlocking through `./kc/k.db` and locking
    /// through `kc/k.db` (or a symbolic link) ends the same session. Before issue 20, `lock` said "not
    /// unlocked" and the master key stayed in the keyring. Run in a session keyring of its own
    /// (`keyctl session`), as a login would have.
    @Test(.enabled(if: CommandRunner.isAvailable("keyctl"), "needs keyctl (Debian's keyutils) to start a session keyring"))
    func anySpellingOfThePathLocksTheSameKeychain() async throws {
        let folder = try TemporaryDirectory()
        try folder.write("correct horse\n", to: "pw")
        try FileManager.default.createDirectory(atPath: folder.path("kc"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.path("link.db"), withDestinationPath: "kc/k.db")
        let binary = try CommandRunner.cofferExecutable()
        let script = """
            c=\(binary)
            $c keychain create --keychain kc/k.db --password-file pw --scrypt-log-n 10
            $c keychain unlock --keychain ./kc/k.db --password-file pw --timeout 5m
            $c keychain lock --keychain kc/k.db
            $c keychain status --keychain kc/k.db
            $c keychain unlock --keychain kc/k.db --password-file pw --timeout 5m
            $c keychain lock --keychain link.db
            $c keychain status --keychain "$PWD/kc/k.db"
            """
        let result = try await CommandRunner.run("keyctl", ["session", "-", "sh", "-c", script], currentDirectory: folder.path)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.components(separatedBy: "keychain unlocked for 5m in this login session's keyring\n").count == 3, "\(result.standardError)")
        #expect(result.standardError.components(separatedBy: "keychain locked\n").count == 3, "\(result.standardError)")
        #expect(!result.standardError.contains("was not unlocked"))
        #expect(result.output.components(separatedBy: "state:    locked").count == 3, "\(result.output)")
    }

    /// `passwd` and `rotate` re-encrypt every item; items stay readable with the (new) password.
    @Test func passwdAndRotateReencryptAndKeepEveryItem() async throws {
        let setup = try await Setup()
        await #expect(try setup.run(["add", "--service", "s", "--account", "a", "--stdin"], input: "v").status == 0)
        try setup.folder.writeSecret("battery staple\n", to: "pw2")
        let passwd = try await coffer(["keychain", "passwd", "--new-password-file", setup.folder.path("pw2")] + setup.common)
        #expect(passwd.status == 0 && passwd.standardError == "keychain password changed; every item re-encrypted under a new master key\n", "\(passwd.standardError)")
        let old = try await setup.run(["get", "--service", "s", "--account", "a"])
        #expect(old.status == 1, "the old password no longer opens it")
        let rotate = try await coffer("keychain", "rotate", "--keychain", setup.path, "--password-file", setup.folder.path("pw2"))
        #expect(rotate.status == 0 && rotate.standardError == "every item re-encrypted under a new master key\n", "\(rotate.standardError)")
        let read = try await coffer("keychain", "get", "--keychain", setup.path, "--password-file", setup.folder.path("pw2"), "--service", "s", "--account", "a")
        #expect(read.status == 0 && read.output == "v", "\(read.standardError)")
    }

    @Test func internetPasswordsAndKeysByTheirOwnFlags() async throws {
        let setup = try await Setup()
        var result = try await setup.run(
            ["add", "--server", "db.example.com", "--protocol", "postgres", "--port", "5432", "--account", "app", "--stdin"], input: "dbpw"
        )
        #expect(result.status == 0, "\(result.standardError)")
        result = try await setup.run(["get", "--server", "db.example.com", "--account", "app"])
        #expect(result.status == 1, "the protocol defaults to https, so this names another item")
        result = try await setup.run(["get", "--server", "db.example.com", "--protocol", "postgres", "--account", "app"])
        #expect(result.status == 0 && result.output == "dbpw", "\(result.standardError)")

        // A private key file stored under a tag reads back as PKCS#8 DER that OpenSSL accepts.
        let key = setup.folder.path("signing.key")
        #expect(try await coffer("key", "generate", "-t", "p256", "-o", key).status == 0)
        result = try await setup.run(["add", "--tag", "com.example.signing", "-k", key])
        #expect(result.status == 0 && result.standardError.contains("P-256"), "\(result.standardError)")
        result = try await setup.run(["get", "--tag", "com.example.signing"])
        #expect(result.status == 0)
        _ = try setup.folder.write(result.standardOutput, to: "stored.der")
        let openssl = try await CommandRunner.run("openssl", ["pkey", "-inform", "DER", "-in", setup.folder.path("stored.der"), "-pubout"])
        let expected = try await CommandRunner.run("openssl", ["pkey", "-in", key, "-pubout"])
        #expect(openssl.status == 0 && openssl.output == expected.output, "\(openssl.standardError)")
        result = try await setup.run(["list"])
        #expect(result.output.contains("internet-password  postgres://app@db.example.com:5432") && result.output.contains("key  tag com.example.signing  private ec-p256"))
        // The JSON says what the text says: the tag as text beside its base64 (issue 43: base64 alone,
        // where the text form printed com.example.signing).
        result = try await setup.run(["list", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput)) as? [[String: Any]])
        let stored = try #require(items.first { $0["class"] as? String == "key" })
        #expect(stored["applicationTagText"] as? String == "com.example.signing", "\(stored)")
        #expect(stored["applicationTag"] as? String == Data("com.example.signing".utf8).base64EncodedString(), "\(stored)")
        result = try await setup.run(["add", "--tag", "t", "--stdin"], input: "x")
        #expect(result.status == 2 && result.standardError.contains("--key-class and --key-type"))
        result = try await setup.run(["get", "--service", "s"])
        #expect(result.status == 2 && result.standardError.contains("--account"))
        result = try await setup.run(["delete", "--tag", "com.example.signing"])
        #expect(result.status == 0 && result.standardError.contains("deleted 1 item"))
    }

    @Test(.enabled(if: haveOpenSSL))
    func certificatesByFileOrSerial() async throws {
        let setup = try await Setup()
        _ = try await OpenSSLFixtures.selfSignedCertificate(serial: "0x8001", in: setup.folder)
        var result = try await setup.run(["add", "--certificate", setup.folder.path("cert.pem"), "--label", "test CA"])
        #expect(result.status == 0 && result.standardError.contains("serial 008001"), "\(result.standardError)")
        result = try await setup.run(["add", "--certificate", setup.folder.path("cert.pem")])
        #expect(result.status == 2 && result.standardError.contains("already in the keychain"))
        result = try await setup.run(["get", "--serial", "8001"])
        #expect(result.status == 0, "the serial as OpenSSL prints it: \(result.standardError)")
        _ = try setup.folder.write(result.standardOutput, to: "out.der")
        let subject = try await CommandRunner.run("openssl", ["x509", "-inform", "DER", "-in", setup.folder.path("out.der"), "-noout", "-subject"])
        #expect(subject.output.contains("Coffer test"))
        _ = try setup.folder.write("not a certificate", to: "bad.pem")
        result = try await setup.run(["add", "--certificate", setup.folder.path("bad.pem")])
        #expect(result.status != 0 && result.standardError.contains("CERTIFICATE"))
        result = try await setup.run(["delete", "--certificate", setup.folder.path("cert.pem")])
        #expect(result.status == 0 && result.standardError.contains("deleted 1 item"))
    }

    @Test func exportThenImportIntoAnotherKeychain() async throws {
        let setup = try await Setup()
        _ = try setup.folder.write("export pw\n", to: "epw")
        await #expect(try setup.run(["add", "--service", "s", "--account", "a", "--stdin"], input: "one").status == 0)
        await #expect(try setup.run(["add", "--service", "s", "--account", "b", "--stdin", "--accessibility", "when-unlocked-this-device-only"], input: "two").status == 0)
        // The item is named as people name it, not as Swift prints the type (issue 23).
        let duplicate = try await setup.run(["add", "--service", "s", "--account", "a", "--stdin"], input: "again")
        #expect(duplicate.status == 2 && duplicate.standardError.contains("an item for service 's' and account 'a' already exists"), "\(duplicate.standardError)")
        let export = setup.folder.path("backup.coffer")
        var result = try await setup.run(["export", "-o", export, "--export-password-file", setup.folder.path("epw")])
        #expect(result.status == 0 && result.standardError.contains("exported 1 item") && result.standardError.contains("1 this-device-only left out"), "\(result.standardError)")
        result = try await setup.run(["export", "-o", export, "--export-password-file", setup.folder.path("epw")])
        #expect(result.status == 2 && result.standardError.contains("already exists"))
        let inspect = try await coffer("inspect", export)
        #expect(inspect.output.contains("Coffer v1"))

        let other = setup.folder.path("other.db")
        let otherCommon = ["--keychain", other, "--password-file", setup.folder.path("pw")]
        #expect(try await coffer(["keychain", "create", "--scrypt-log-n", "10"] + otherCommon).status == 0)
        result = try await coffer(["keychain", "import", export, "--export-password-file", setup.folder.path("pw")] + otherCommon)
        #expect(result.status == 1 && result.standardError.contains("wrong"), "\(result.standardError)")
        result = try await coffer(["keychain", "import", export, "--export-password-file", setup.folder.path("epw")] + otherCommon)
        #expect(result.status == 0 && result.standardError.contains("imported 1 item"), "\(result.standardError)")
        result = try await coffer(["keychain", "import", export, "--export-password-file", setup.folder.path("epw")] + otherCommon)
        #expect(result.status == 2 && result.standardError.contains("--skip-existing"))
        result = try await coffer(["keychain", "get", "--service", "s", "--account", "a"] + otherCommon)
        #expect(result.output == "one")
    }

    @Test func passwdChangesThePassword() async throws {
        let setup = try await Setup()
        await #expect(try setup.run(["add", "--service", "s", "--account", "a", "--stdin"], input: "v").status == 0)
        _ = try setup.folder.write("battery staple\n", to: "new")
        let passwd = try await coffer(["keychain", "passwd", "--new-password-file", setup.folder.path("new")] + setup.common)
        #expect(passwd.status == 0, "\(passwd.standardError)")
        await #expect(try setup.run(["get", "--service", "s", "--account", "a"]).status == 1, "the old password no longer opens it")
        let get = try await coffer("keychain", "get", "--keychain", setup.path, "--password-file", setup.folder.path("new"), "--service", "s", "--account", "a")
        #expect(get.output == "v")
    }

    /// Two processes adding and reading at once: nothing lost, nothing mixed up.
    @Test func twoProcessesAtOnce() async throws {
        let setup = try await Setup()
        let coffer = try CommandRunner.cofferExecutable()
        func loop(_ name: String) async throws -> Process {
            let script = """
                for i in $(seq 1 12); do
                  printf '%s' "\(name)-$i" | "$0" keychain add --keychain "$1" --password-file "$2" --service multi --account "\(name)-$i" --stdin || exit 1
                  "$0" keychain get --keychain "$1" --password-file "$2" --service multi --account "\(name)-$i" > /dev/null || exit 1
                done
                """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script, coffer, setup.path, setup.folder.path("pw")]
            try process.run()
            return process
        }
        let first = try await loop("p1"), second = try await loop("p2")
        first.waitUntilExit()
        second.waitUntilExit()
        #expect(first.terminationStatus == 0 && second.terminationStatus == 0)
        let list = try await setup.run(["list", "--service", "multi"])
        #expect(list.lines.count == 24)
        for name in ["p1-1", "p2-7", "p1-12", "p2-12"] {
            await #expect(try setup.run(["get", "--service", "multi", "--account", name]).output == name)
        }
    }

    /// `kill -9` in the middle of a stream of adds: every add that reported success is there afterwards.
    @Test func killNineLosesNothingAcknowledged() async throws {
        let setup = try await Setup()
        let coffer = try CommandRunner.cofferExecutable()
        let script = """
            i=0
            while true; do
              i=$((i+1))
              printf '%s' "secret-$i" | "$0" keychain add --keychain "$1" --password-file "$2" --service kill --account "a$i" --stdin &
              echo "pid $!"
              wait $! && echo "ack $i"
            done
            """
        // Spawned with every signal unblocked: the test process blocks SIGCHLD in its threads, and a shell
        // that inherits that mask would wait for its background job for ever.
        let (pid, output) = try spawnWithDefaultSignals(["/bin/sh", "-c", script, coffer, setup.path, setup.folder.path("pw")])
        var acknowledged: [Int] = []
        var buffer = ""
        var killed = false
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !killed {
            let count = read(output, &chunk, chunk.count)
            if count <= 0 { break }
            buffer += String(decoding: chunk[0..<count], as: UTF8.self)
            while let newline = buffer.firstIndex(of: "\n") {
                let line = String(buffer[..<newline])
                buffer.removeSubrange(...newline)
                let parts = line.split(separator: " ")
                if parts.first == "ack", let number = Int(parts[1]) { acknowledged.append(number) }
                if parts.first == "pid", let child = Int32(parts[1]), acknowledged.count >= 15 {
                    // The next add has just started: kill it and the loop, wherever they are.
                    kill(child, SIGKILL)
                    kill(pid, SIGKILL)
                    killed = true
                    break
                }
            }
        }
        close(output)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(acknowledged.count >= 15)
        for number in acknowledged {
            let get = try await setup.run(["get", "--service", "kill", "--account", "a\(number)"])
            #expect(get.status == 0 && get.output == "secret-\(number)", "acknowledged add \(number) survived")
        }
        // The keychain still opens and lists; a half-done add is either complete or absent.
        let list = try await setup.run(["list", "--service", "kill"])
        #expect(list.status == 0 && list.lines.count >= acknowledged.count)
    }
}

/// Starts `argv` with no blocked and no ignored signals, its standard output on a pipe; returns the pid
/// and the pipe's reading end.
func spawnWithDefaultSignals(_ argv: [String]) throws -> (pid_t, Int32) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw CocoaError(.fileWriteUnknown) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    let arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { arguments.forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, argv[0], &actions, &attributes, arguments, environ)
    close(fds[1])
    guard result == 0 else {
        close(fds[0])
        throw CocoaError(.executableLoad)
    }
    return (pid, fds[0])
}

@Suite("coffer password")
struct PasswordCommandTests {
    @Test func hashThenVerify() async throws {
        let hash = try await coffer("password", "hash", "--stdin", input: Array("hunter2\n".utf8))
        #expect(hash.status == 0)
        let phc = hash.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(phc.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        let good = try await coffer("password", "verify", phc, "--stdin", input: Array("hunter2\n".utf8))
        #expect(good.status == 0 && good.output == "OK\n")
        let bad = try await coffer("password", "verify", phc, "--stdin", input: Array("hunter3\n".utf8))
        #expect(bad.status == 1 && bad.output == "FAILED\n")
        let weak = try await coffer("password", "hash", "--stdin", "--algorithm", "pbkdf2", "--iterations", "1000", input: Array("x\n".utf8))
        #expect(weak.status == 2 && weak.standardError.contains("600000"))
        let garbage = try await coffer("password", "verify", "$md5$abc", "--stdin", input: Array("x\n".utf8))
        #expect(garbage.status == 2)
    }

    /// `$pbkdf2-sha256$i=1$…` (PBKDF2 with one iteration, here of "hunter2") is refused with exit 2 and a
    /// reason, even for the right password; before issue 20 it printed OK and exited 0. `--legacy`
    /// verifies it once and prints the replacement to store.
    @Test func aHashBelowTheFloorIsRefusedUnlessVerifiedAsLegacy() async throws {
        let phc = "$pbkdf2-sha256$i=1$c2FsdHNhbHRzYWx0c2FsdA$TVs3oOIEyVcK8uzwTe6rG1/U0Ko9KiTqygi3sknsKZw"
        let refused = try await coffer("password", "verify", phc, "--stdin", input: Array("hunter2\n".utf8))
        #expect(refused.status == 2)
        #expect(refused.output.isEmpty)
        #expect(refused.standardError.hasPrefix("coffer: error: the stored hash uses 1 PBKDF2 iteration, below the 100000 this policy verifies"), "\(refused.standardError)")
        #expect(refused.standardError.contains("hint: if this record comes from an old system, pass --legacy"))
        let migrated = try await coffer("password", "verify", phc, "--stdin", "--legacy", input: Array("hunter2\n".utf8))
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(migrated.lines.first == "OK (needs rehash: PBKDF2-HMAC-SHA256 (1 iterations) is below the policy); store instead:")
        #expect(migrated.lines.last?.hasPrefix("$scrypt$ln=17,r=8,p=1$") == true)
        let wrong = try await coffer("password", "verify", phc, "--stdin", "--legacy", input: Array("hunter3\n".utf8))
        #expect(wrong.status == 1 && wrong.output == "FAILED\n")
    }
}
