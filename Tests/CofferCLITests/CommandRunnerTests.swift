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
}
