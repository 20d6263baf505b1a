import CofferTestSupport
import CofferTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built binary, broken on purpose (issue 20): standard output that cannot be written, a full disk,
/// a reader that goes away, and SIGINT, SIGTERM and SIGKILL in the middle of the work. Every case checks
/// the exit status, that nothing is left in the folder, and that the destination is untouched or complete.
@Suite("Faults: full disks, closed pipes and signals")
struct FaultTests {
    /// A folder with a 32-byte key, 3 MB of data, its encryption, and a password file.
    static func workspace() async throws -> (TemporaryDirectory, [UInt8]) {
        let folder = try TemporaryDirectory()
        let data = Fixtures.randomBytes(count: 3_000_000)
        try folder.write(data, to: "data.bin")
        try folder.write(Fixtures.randomBytes(count: 32), to: "k.key")
        try folder.writeSecret("correct horse\n", to: "pass")
        let sealed = try await coffer("encrypt", "-k", "k.key", "data.bin", "-o", "data.coffer", in: folder)
        try #require(sealed.status == 0, "\(sealed.standardError)")
        return (folder, data)
    }

    static let inputs = ["data.bin", "data.coffer", "k.key", "pass"]

    static func start(_ arguments: [String], in folder: TemporaryDirectory, output: CommandRunner.StandardOutput = .captured, environment: [String: String]? = nil) throws -> RunningCommand {
        try CommandRunner.start(CommandRunner.cofferExecutable(), arguments, standardOutput: output, environment: environment, currentDirectory: folder.path)
    }

    // MARK: Standard output

    /// Before issue 20 each of these exited 0 with its output lost.
    @Test(arguments: [
        ["encrypt", "-k", "k.key", "-o", "-", "data.bin"],
        ["encrypt", "--password-file", "pass", "--format", "rncryptor", "-o", "-", "data.bin"],
        ["decrypt", "-k", "k.key", "-o", "-", "data.coffer"],
        ["hash", "data.bin"],
        ["random", "--raw", "--bytes", "100000"],
    ])
    func aStandardOutputThatCannotBeWrittenIsAnError(arguments: [String]) async throws {
        let (folder, _) = try await Self.workspace()
        let run = try Self.start(arguments, in: folder, output: .path("/dev/full"))
        try run.closeInput()
        let result = try await run.wait()
        #expect(result.status == 2, "\(arguments): \(result.standardError)")
        #expect(result.standardError.hasPrefix("coffer: error: cannot write to standard output: no space left on device\n"), "\(result.standardError)")
        #expect(try folder.contents() == Self.inputs)
    }

    @Test(arguments: [
        ["encrypt", "-k", "k.key", "-o", "-", "data.bin"],
        ["decrypt", "-k", "k.key", "-o", "-", "data.coffer"],
        ["random", "--raw", "--bytes", "10000000"],
    ])
    func aReaderThatGoesAwayEndsTheCommandQuietly(arguments: [String]) async throws {
        let (folder, _) = try await Self.workspace()
        let run = try Self.start(arguments, in: folder, output: .closedPipe)
        try run.closeInput()
        let result = try await run.wait()
        #expect(result.status == 128 + SIGPIPE, "ended by SIGPIPE, as cat and age are")
        #expect(result.standardError.isEmpty, "quietly: \(result.standardError)")
    }

    // MARK: Signals

    enum Output: String, CaseIterable, CustomTestStringConvertible {
        /// A new file.
        case newFile
        /// Replacing an existing file with --force.
        case replacing
        var testDescription: String { rawValue }
    }

    /// `encrypt` or `decrypt` from standard input to `out`, signalled while blocked reading more input
    /// (so certainly in the middle of its work) after a random share of it: nothing is left, and an
    /// existing destination keeps its contents. Before issue 20, `.out.coffer-XXXXXX` stayed behind
    /// holding what was written so far.
    @Test(arguments: ["encrypt", "decrypt"], [SIGINT, SIGTERM, SIGKILL])
    func aSignalMidwayLeavesNothingBehind(command: String, signal: Int32) async throws {
        let (folder, _) = try await Self.workspace()
        let input = try folder.read(command == "encrypt" ? "data.bin" : "data.coffer")
        for output in Output.allCases {
            if output == .replacing { try folder.write("the previous contents", to: "out") }
            let share = Int.random(in: 0...input.count)
            var arguments = [command, "-k", "k.key", "-o", "out", "-"]
            if output == .replacing { arguments.append("--force") }
            let run = try Self.start(arguments, in: folder)
            try await run.send(Array(input.prefix(share)))
            run.signal(signal)
            let result = try await run.wait()
            #expect(result.status == 128 + signal, "\(output), \(share) of \(input.count) bytes sent: \(result.standardError)")
            switch output {
            case .newFile:
                #expect(try folder.contents() == Self.inputs, "\(output), \(share) bytes sent")
            case .replacing:
                #expect(try folder.contents() == (Self.inputs + ["out"]).sorted(), "\(output), \(share) bytes sent")
                #expect(try folder.read("out") == Array("the previous contents".utf8), "the destination is untouched")
            }
        }
    }

    /// Without `--force`, a file that appears at the destination while the command works is never
    /// replaced (before issue 20, the final rename replaced it).
    @Test(arguments: ["encrypt", "decrypt"])
    func aFileThatAppearsMeanwhileIsNotReplaced(command: String) async throws {
        let (folder, _) = try await Self.workspace()
        let input = try folder.read(command == "encrypt" ? "data.bin" : "data.coffer")
        let run = try Self.start([command, "-k", "k.key", "-o", "out", "-"], in: folder)
        try await run.send(Array(input.prefix(input.count / 2)))
        try folder.write("someone else's file", to: "out")
        try await run.send(Array(input.dropFirst(input.count / 2)))
        let result = try await run.wait()
        #expect(result.status == 2)
        #expect(result.standardError.contains("'out' appeared while it was being written; it was left as it is"), "\(result.standardError)")
        #expect(try folder.read("out") == Array("someone else's file".utf8))
        #expect(try folder.contents() == (Self.inputs + ["out"]).sorted())
    }

    /// Commands that finish in milliseconds, signalled after a random delay (the assertions hold
    /// wherever the signal lands): every file is either absent or complete, nothing else appears.
    @Test(arguments: [SIGINT, SIGTERM, SIGKILL])
    func quickCommandsLeaveWholeFilesOrNone(signal: Int32) async throws {
        let (folder, _) = try await Self.workspace()
        let created = try await coffer("keychain", "create", "--keychain", "kc.db", "--password-file", "pass", "--scrypt-log-n", "10", in: folder)
        try #require(created.status == 0, "\(created.standardError)")
        let added = try await coffer("keychain", "add", "--keychain", "kc.db", "--password-file", "pass", "--service", "s", "--account", "first", "--stdin", input: Array("one".utf8), in: folder)
        try #require(added.status == 0, "\(added.standardError)")
        let baseline = Set(try folder.contents())
        for round in 0..<3 {
            let delay = UInt32.random(in: 0...40_000)
            // key generate: two files, each whole or absent.
            let generate = try Self.start(["key", "generate", "-t", "p256", "-o", "g\(round).key", "--public", "g\(round).pub"], in: folder)
            usleep(delay)
            generate.signal(signal)
            _ = try await generate.wait()
            for name in ["g\(round).key", "g\(round).pub"] where FileManager.default.fileExists(atPath: folder.path(name)) {
                let shown = try await coffer("key", "show", name, in: folder)
                #expect(shown.status == 0, "\(name) is complete (signal \(signal) after \(delay) µs): \(shown.standardError)")
            }
            // keychain add: the item is there with its whole secret, or not at all; the database is intact.
            let secret = "secret number \(round)"
            let add = try Self.start(["keychain", "add", "--keychain", "kc.db", "--password-file", "pass", "--service", "s", "--account", "a\(round)", "--stdin"], in: folder)
            try await add.send(Array(secret.utf8))
            try add.closeInput()
            usleep(delay)
            add.signal(signal)
            _ = try await add.wait()
            let read = try await coffer("keychain", "get", "--keychain", "kc.db", "--password-file", "pass", "--service", "s", "--account", "a\(round)", in: folder)
            #expect(read.status == 0 ? read.output == secret : read.status == 1, "whole or absent (signal \(signal) after \(delay) µs): \(read.status) \(read.standardError)")
            let first = try await coffer("keychain", "get", "--keychain", "kc.db", "--password-file", "pass", "--service", "s", "--account", "first", in: folder)
            #expect(first.status == 0 && first.output == "one", "the earlier item survives: \(first.standardError)")
            // keychain export: whole (it imports) or absent.
            let export = try Self.start(["keychain", "export", "--keychain", "kc.db", "--password-file", "pass", "-k", "k.key", "-o", "e\(round).coffer"], in: folder)
            usleep(delay)
            export.signal(signal)
            _ = try await export.wait()
            if FileManager.default.fileExists(atPath: folder.path("e\(round).coffer")) {
                let opened = try await coffer("decrypt", "-k", "k.key", "e\(round).coffer", "-o", "-", in: folder)
                #expect(opened.status == 0, "e\(round).coffer is complete (signal \(signal) after \(delay) µs): \(opened.standardError)")
            }
        }
        let allowed = { (name: String) in
            baseline.contains(name) || name.hasPrefix("kc.db") || ["g", "e"].contains(where: { name.hasPrefix($0) && !name.hasPrefix(".") })
        }
        let strays = try folder.contents().filter { !allowed($0) }
        #expect(strays.isEmpty, "nothing else is left in the folder: \(strays)")
    }

    // MARK: Where unnamed files are unavailable

    /// A file system without unnamed files (simulated: an LD_PRELOAD shim makes `open(O_TMPFILE)` fail
    /// with EOPNOTSUPP) takes the fallback, a hidden name beside the destination; SIGINT, SIGTERM and
    /// SIGHUP remove it before the process ends. (SIGKILL cannot be caught: docs/SECURITY.md.)
    @Test(.enabled(if: CommandRunner.isAvailable("cc"), "needs a C compiler (cc) to build the LD_PRELOAD shim"), arguments: ["encrypt", "decrypt"], [SIGINT, SIGTERM, SIGHUP])
    func theFallbackIsRemovedBySignalsToo(command: String, signal: Int32) async throws {
        let (folder, _) = try await Self.workspace()
        let input = try folder.read(command == "encrypt" ? "data.bin" : "data.coffer")
        let shim = try TemporaryDirectory(prefix: "coffer-shim")
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = try await NoUnnamedFilesShim.build(in: shim)
        // Under AddressSanitizer (.ci/sanitizers) the shim loads before the sanitizer's runtime, which
        // it then must not refuse.
        if let options = environment["ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options + ":verify_asan_link_order=0" }
        let run = try Self.start([command, "-k", "k.key", "-o", "out", "-"], in: folder, environment: environment)
        try await run.send(Array(input.prefix(input.count / 2)))
        let hidden = try folder.contents().filter { $0.hasPrefix(".out.coffer-") }
        #expect(hidden.count <= 1, "the fallback writes under one hidden name: \(hidden)")
        run.signal(signal)
        let result = try await run.wait()
        #expect(result.status == 128 + signal, "\(result.standardError)")
        #expect(try folder.contents() == Self.inputs)
        // And without a signal the fallback still produces the whole output.
        let whole = try Self.start([command, "-k", "k.key", "-o", "out", "-"], in: folder, environment: environment)
        try await whole.send(input)
        let finished = try await whole.wait()
        #expect(finished.status == 0, "\(finished.standardError)")
        #expect(try folder.contents() == (Self.inputs + ["out"]).sorted())
    }

    // MARK: Full disks

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root"))
    func aFullDiskFailsTheCommandAndLeavesNothing() async throws {
        let (folder, data) = try await Self.workspace()
        let disk = try SmallDisk()
        // From a file (its size known: refused before the work) and from a pipe (found while writing).
        for (arguments, input) in [
            (["encrypt", "-k", "k.key", "-o", disk.path + "/out.coffer", "data.bin"], [UInt8]()),
            (["encrypt", "-k", "k.key", "-o", disk.path + "/out.coffer", "-"], data),
            (["decrypt", "-k", "k.key", "-o", disk.path + "/out.bin", "data.coffer"], []),
            (["decrypt", "-k", "k.key", "-o", disk.path + "/out.bin", "-"], try folder.read("data.coffer")),
        ] {
            let result = try await coffer(arguments, input: input, in: folder)
            #expect(result.status == 2, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains("no space left on device"), "\(result.standardError)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).isEmpty, "\(arguments)")
        }
        // `tar c … | coffer encrypt … > backup.coffer` onto a full disk: before issue 20, exit 0.
        let backup = disk.path + "/backup.coffer"
        #expect(FileManager.default.createFile(atPath: backup, contents: nil))
        let run = try Self.start(["encrypt", "-k", "k.key", "-"], in: folder, output: .path(backup))
        try? await run.send(data)  // it stops reading once its output fails
        let result = try await run.wait()
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardError.contains("cannot write to standard output: no space left on device"), "\(result.standardError)")
    }

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root"))
    func keysAndExportsOntoAFullDiskLeaveNothing() async throws {
        let (folder, _) = try await Self.workspace()
        let disk = try SmallDisk(size: "64k")
        disk.fill()
        for arguments in [
            ["key", "generate", "-t", "rsa2048", "-o", disk.path + "/k.pem", "--public", disk.path + "/k.pub"],
            ["random", "--raw", "--bytes", "65536", "--output", disk.path + "/r.key"],
            ["encrypt", "-k", "k.key", "-o", disk.path + "/small.coffer", "pass"],
        ] {
            let result = try await coffer(arguments, in: folder)
            #expect(result.status == 2, "\(arguments): \(result.standardError)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["filler"], "\(arguments)")
        }
    }

    // MARK: Durability

    /// Whether strace can trace a program here (it needs ptrace).
    static let canTrace: Bool = CommandRunner.isAvailable("strace") && ((try? CommandRunner.runBlocking("strace", ["-o", "/dev/null", "true"]).status) == 0)

    /// The system calls of one run that make an output durable: for each `fsync(fd)`, what the
    /// descriptor was opened as (`unnamed` for an O_TMPFILE in the folder, `folder` for the folder itself).
    static func syncs(_ arguments: [String], in folder: TemporaryDirectory) async throws -> (status: Int32, synced: [String], created: [String]) {
        let trace = folder.path("trace.txt")
        // LeakSanitizer cannot work under ptrace: a sanitizer build is traced without it.
        var environment = ProcessInfo.processInfo.environment
        if let options = environment["ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options + ":detect_leaks=0" }
        let result = try await CommandRunner.run(
            "strace", ["-f", "-e", "trace=openat,fsync,fdatasync", "-o", trace, try CommandRunner.cofferExecutable()] + arguments,
            environment: environment, currentDirectory: folder.path
        )
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        try FileManager.default.removeItem(atPath: trace)
        var opened: [String: String] = [:]
        var synced: [String] = []
        var created: [String] = []
        for line in lines {
            if line.contains("openat(") && (line.contains("O_CREAT") || line.contains("O_TMPFILE")) && !line.contains("= -1") {
                created.append(String(line.split(separator: "\"").dropFirst().first ?? ""))
            }
            if line.contains("openat("), let equals = line.range(of: "= ", options: .backwards) {
                let descriptor = String(line[equals.upperBound...].prefix { $0.isNumber })
                if line.contains("O_TMPFILE") { opened[descriptor] = "unnamed" } else if line.contains("O_DIRECTORY") { opened[descriptor] = "folder" } else { opened[descriptor] = "file" }
            } else if let call = line.range(of: "sync("), line.hasSuffix("= 0") {
                let descriptor = String(line[call.upperBound...].prefix { $0.isNumber })
                synced.append(opened[descriptor] ?? "?")
            }
        }
        return (result.status, synced, created)
    }

    /// Success means durable where the output may be the only copy (before issue 20 an encrypted output
    /// was never flushed, and no folder ever was): `encrypt` flushes the file and then its folder,
    /// `--no-sync` neither; `decrypt` flushes only with `--sync`; keys always.
    @Test(.enabled(if: canTrace, "needs strace (and ptrace) to watch the flushes"))
    func successMeansDurableWhereTheOutputMayBeTheOnlyCopy() async throws {
        let (folder, _) = try await Self.workspace()
        let encrypt = try await Self.syncs(["encrypt", "-k", "k.key", "-o", "e1", "data.bin"], in: folder)
        #expect(encrypt.status == 0)
        #expect(encrypt.synced.suffix(2) == ["unnamed", "folder"], "the file, then its folder: \(encrypt.synced)")
        let fast = try await Self.syncs(["encrypt", "-k", "k.key", "--no-sync", "-o", "e2", "data.bin"], in: folder)
        #expect(fast.status == 0 && fast.synced.isEmpty, "\(fast.synced)")
        let decrypt = try await Self.syncs(["decrypt", "-k", "k.key", "-o", "d1", "data.coffer"], in: folder)
        #expect(decrypt.status == 0 && decrypt.synced.isEmpty, "the ciphertext remains: \(decrypt.synced)")
        let synced = try await Self.syncs(["decrypt", "-k", "k.key", "--sync", "-o", "d2", "data.coffer"], in: folder)
        #expect(synced.synced.suffix(2) == ["unnamed", "folder"], "\(synced.synced)")
        // To standard output, nothing is created on disk at all (before issue 20 the whole plaintext was
        // spooled to an unlinked file in $TMPDIR).
        let streamed = try await Self.syncs(["decrypt", "-k", "k.key", "-o", "-", "data.coffer"], in: folder)
        #expect(streamed.status == 0 && streamed.created.isEmpty, "\(streamed.created)")
        let key = try await Self.syncs(["key", "generate", "-o", "new.key", "--public", "new.pub"], in: folder)
        #expect(key.status == 0 && key.synced == ["unnamed", "folder", "unnamed", "folder"], "\(key.synced)")
    }

    // MARK: Process hygiene

    /// A running `coffer` has no core-size allowance and is not dumpable: another process of the same
    /// user cannot read its memory or environment (where `--password-env` passwords live). Checked on a
    /// command blocked reading standard input, run as `nobody` so that the check is not root's.
    @Test(.enabled(if: getuid() == 0 && CommandRunner.isAvailable("setpriv"), "needs root and setpriv to run as another user"))
    func aRunningCommandCannotBeDumpedOrRead() async throws {
        let folder = try TemporaryDirectory()
        chmod(folder.path, 0o755)
        // A copy nobody can reach (the build folder may sit under a home folder closed to others).
        // Copied by cp, whose descriptor on the copy dies with it: FileManager.copyItem's is not
        // close-on-exec, and a program another test started meanwhile kept it open for writing, which
        // made the copy unrunnable (ETXTBSY) in CI.
        let binary = folder.path("coffer")
        let copy = try await CommandRunner.run("cp", [try CommandRunner.cofferExecutable(), binary])
        try #require(copy.status == 0, "\(copy.standardError)")
        chmod(binary, 0o755)
        let nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        let run = try CommandRunner.start(
            "setpriv", Array(nobody.dropFirst()) + [binary, "hash", "missing-file", "-"],
            environment: ["COFFER_DEMO_SECRET": "hunter2", "PATH": "/usr/bin:/bin"], currentDirectory: folder.path
        )
        // The error about the missing file comes after startup, while the command waits for standard input.
        guard try await run.waitForError(containing: "missing-file") != nil else {
            let ended = try await run.wait()
            Issue.record("the command ended (status \(ended.status)) before it waited for input: \(ended.standardError)")
            return
        }
        let limits = try String(contentsOfFile: "/proc/\(run.processIdentifier)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        #expect(core?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first == "0", "\(core ?? "no line")")
        // A sanitizer build stays dumpable for LeakSanitizer (CCofferSupport.c): only the core limit holds there.
        if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil {
            let peek = try await CommandRunner.run("setpriv", Array(nobody.dropFirst()) + ["cat", "/proc/\(run.processIdentifier)/environ"])
            #expect(peek.status != 0, "another process of the same user must not read the environment")
            #expect(!peek.output.contains("hunter2"))
        }
        try run.closeInput()
        _ = try await run.wait()
    }
}

/// An LD_PRELOAD library that makes `open(…, O_TMPFILE)` fail with EOPNOTSUPP, as on a file system
/// without unnamed files; built once with the system's C compiler.
enum NoUnnamedFilesShim {
    static let source = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <fcntl.h>
        #include <stdarg.h>
        #define SHIM(name) \\
            int name(const char *path, int flags, ...) { \\
                mode_t mode = 0; \\
                if (flags & (O_CREAT | __O_TMPFILE)) { va_list a; va_start(a, flags); mode = va_arg(a, int); va_end(a); } \\
                if ((flags & O_TMPFILE) == O_TMPFILE) { errno = EOPNOTSUPP; return -1; } \\
                static int (*real)(const char *, int, ...); \\
                if (!real) real = dlsym(RTLD_NEXT, #name); \\
                return real(path, flags, mode); \\
            }
        SHIM(open)
        SHIM(open64)
        """

    /// Builds the shim in `folder` and returns its path.
    static func build(in folder: TemporaryDirectory) async throws -> String {
        try folder.write(source, to: "shim.c")
        let built = try await CommandRunner.run("cc", ["-shared", "-fPIC", "-o", folder.path("shim.so"), folder.path("shim.c"), "-ldl"])
        try #require(built.status == 0, "the shim does not build: \(built.standardError)")
        return folder.path("shim.so")
    }
}
