import CofferTestSupport
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The harness the end-to-end tests start programs with. Tests run in parallel in one process, so a
/// descriptor one test has open must not leak into a program another test starts: a leaked write end
/// of a binary being copied made that binary unrunnable (`ETXTBSY`, "Text file busy") for as long as
/// the unrelated program lived, and a leaked pipe end keeps another test's pipe from ever ending.
@Suite("Command runner")
struct CommandRunnerTests {
    @Test func aStartedProgramGetsOnlyItsStandardDescriptors() throws {
        let folder = try TemporaryDirectory()
        // A descriptor opened the way FileManager.copyItem opens its destination: without O_CLOEXEC.
        let leaky = open(folder.path("open-for-writing"), O_WRONLY | O_CREAT, 0o600)
        try #require(leaky >= 0)
        defer { close(leaky) }
        let run = try CommandRunner.start("/bin/sh", ["-c", "ls /proc/$$/fd"], pipeInput: false)
        let result = try run.wait()
        #expect(result.status == 0, "\(result.standardError)")
        let descriptors = String(decoding: result.standardOutput, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        #expect(descriptors == ["0", "1", "2"], "inherited: \(descriptors)")
        // A program run to its end (through Foundation's Process, which keeps a descriptor of its own
        // open in the child) does not get the test's file either.
        let listed = try CommandRunner.run("/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(!listed.output.split(whereSeparator: \.isWhitespace).contains(Substring(String(leaky))), "inherited: \(listed.output)")
    }

    /// A program with both standard output and standard error on pipes that fills its output before
    /// it writes its errors: waiting for its end reads both at once (one read to its end before the
    /// other would wait for ever, the program blocked on the full output pipe).
    @Test func waitingDrainsBothPipesAtOnce() throws {
        let size = 300_000
        let run = try CommandRunner.start(
            "/bin/sh", ["-c", "head -c \(size) /dev/zero; head -c \(size) /dev/zero >&2"], pipeInput: false, standardOutput: .pipe
        )
        // A guard against a hang, not a timing: the program takes milliseconds.
        let ended = DispatchSemaphore(value: 0)
        let outcome = ResultBox()
        Thread {
            outcome.result = try? run.wait()
            ended.signal()
        }.start()
        guard ended.wait(timeout: .now() + 60) == .success else {
            run.signal(SIGKILL)
            Issue.record("still waiting after a minute: the output pipe was not read while standard error was")
            return
        }
        let result = try #require(outcome.result)
        #expect(result.status == 0)
        #expect(result.standardOutput.count == size && result.standardError.utf8.count == size)
    }

    private final class ResultBox: @unchecked Sendable {
        var result: CommandResult?
    }
}
