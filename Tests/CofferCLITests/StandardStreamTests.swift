import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Standard output, input and error as descriptor numbers: coffer never frees the number of one while
/// it runs, and a file it opens never takes the number of one it was started without. Watched with
/// strace, which sees every descriptor a process opens and closes.
@Suite("Standard streams keep their descriptor numbers")
struct StandardStreamTests {
    /// `coffer` under `strace -f`, its system calls of `calls` written to `trace` in `folder`.
    static func traced(_ calls: String, _ command: String, in folder: TemporaryDirectory) async throws -> (CommandResult, [Substring]) {
        try #require(CommandRunner.isAvailable("strace"), "strace is needed (apt install strace; .ci/run installs it)")
        let result = try await CommandRunner.run(
            "strace", ["-f", "-qq", "-e", "trace=\(calls)", "-o", folder.path("trace"), "sh", "-c", "exec \"$0\" \(command)", try CommandRunner.cofferExecutable()],
            currentDirectory: folder.path
        )
        let trace = String(decoding: try folder.read("trace"), as: UTF8.self)
        return (result, trace.split(separator: "\n"))
    }

    /// Closing standard output at the end of a command freed its number while other threads ran; one
    /// of libdispatch's took it for its epoll instance, a second close of standard output closed that,
    /// and the process crashed (SIGILL) after doing its work (seen in CI, `coffer keychain create`).
    @Test func standardOutputIsNeverClosedWhileCofferRuns() async throws {
        let folder = try TemporaryDirectory()
        let (result, trace) = try await Self.traced("close,close_range,dup2,dup3", "random --bytes 16 --raw", in: folder)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.count == 16)
        let closes = trace.filter { $0.contains("close(1)") || $0.contains("close_range(1,") || $0.contains("close_range(0,") }
        #expect(closes.isEmpty, "standard output was closed: \(closes)")
    }

    /// Started without standard output and error, coffer puts /dev/null on their numbers before it
    /// opens anything: its output file must not become descriptor 1 or 2, where a message meant for
    /// standard error would be written into the ciphertext.
    @Test func filesNeverTakeTheNumbersOfClosedStandardStreams() async throws {
        let folder = try TemporaryDirectory()
        try folder.write(Fixtures.randomBytes(count: 32), to: "k.key")
        let data = Fixtures.randomBytes(count: 100_000)
        try folder.write(data, to: "data.bin")
        let (result, trace) = try await Self.traced("openat", "encrypt -k k.key -o out.coffer - <data.bin >&- 2>&-", in: folder)
        #expect(result.status == 0)
        // Files coffer opens by relative path (its key, its output's folder for the unnamed file);
        // the loader's and /dev/null's paths are absolute.
        let opened = trace.filter { $0.contains("openat(AT_FDCWD, \"") && !$0.contains("openat(AT_FDCWD, \"/") && !$0.contains("= -1") }
        try #require(!opened.isEmpty, "strace saw coffer open no file:\n\(trace.joined(separator: "\n"))")
        for line in opened {
            let number = Int(line.split(separator: "=").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
            #expect(number > 2, "a file took a standard stream's number: \(line)")
        }
        let back = try await coffer("decrypt", "-k", "k.key", "-o", "-", "out.coffer", in: folder)
        #expect(back.status == 0 && back.standardOutput == data, "the output is whole")
    }

    /// /dev/null stands in for a closed standard output read-only: a result written there is a write
    /// error (exit 2), not discarded as if it had been delivered.
    @Test func aResultForAClosedStandardOutputIsAnError() async throws {
        let coffer = try CommandRunner.cofferExecutable()
        let result = try await CommandRunner.run("sh", ["-c", "exec \"$0\" random --bytes 16 --raw >&-", coffer])
        #expect(result.status == 2)
        #expect(result.standardError.contains("standard output"), "\(result.standardError)")
    }
}
