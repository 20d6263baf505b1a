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
    @Test func aStartedProgramGetsOnlyItsStandardDescriptors() async throws {
        let folder = try TemporaryDirectory()
        // A descriptor opened the way FileManager.copyItem opens its destination: without O_CLOEXEC.
        let leaky = open(folder.path("open-for-writing"), O_WRONLY | O_CREAT, 0o600)
        try #require(leaky >= 0)
        defer { close(leaky) }
        let run = try CommandRunner.start("/bin/sh", ["-c", "ls /proc/$$/fd"], pipeInput: false)
        let result = try await run.wait()
        #expect(result.status == 0, "\(result.standardError)")
        let descriptors = String(decoding: result.standardOutput, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        #expect(descriptors == ["0", "1", "2"], "inherited: \(descriptors)")
        // A program run to its end (through Foundation's Process, which keeps a descriptor of its own
        // open in the child) does not get the test's file either.
        let listed = try await CommandRunner.run("/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(!listed.output.split(whereSeparator: \.isWhitespace).contains(Substring(String(leaky))), "inherited: \(listed.output)")
    }

    /// A program with both standard output and standard error on pipes that fills its output before
    /// it writes its errors: waiting for its end reads both at once (one read to its end before the
    /// other would wait for ever, the program blocked on the full output pipe).
    @Test func waitingDrainsBothPipesAtOnce() async throws {
        let size = 300_000
        let run = try CommandRunner.start(
            "/bin/sh", ["-c", "head -c \(size) /dev/zero; head -c \(size) /dev/zero >&2"], pipeInput: false, standardOutput: .pipe
        )
        // A guard against a hang, not a timing: the program takes milliseconds. Once it has been reaped
        // the signal does nothing, so only a program still blocked after a minute is killed (137),
        // however long this task then waits for a thread to resume on.
        let watchdog = Watchdog(seconds: 60) { run.signal(SIGKILL) }
        let result = try await run.wait()
        _ = watchdog.disarm()
        #expect(result.status == 0, "killed after a minute: the output pipe was not read while standard error was")
        #expect(result.standardOutput.count == size && result.standardError.utf8.count == size)
    }

    /// A test that stops a program and then waits for it gets the program's whole end: the status its
    /// trap chose and what it wrote on the way out. `stop` reaps on a thread of its own; a `wait` that
    /// began reading and reaping again beside it raced it for the pipes and the status (one of the two
    /// read the last line, the other could reap nothing and report 0).
    @Test func waitingAfterStoppingGetsTheWholeEnd() async throws {
        for _ in 0..<20 {
            // The shell runs its trap once the `read` it is blocked in ends (the reaping closes its input).
            let run = try CommandRunner.start("/bin/sh", ["-c", "trap 'echo stopping >&2; exit 3' TERM; echo ready >&2; read line; echo read >&2"])
            #expect(try await run.waitForError(containing: "ready") != nil)
            run.stop(SIGTERM)
            let result = try await run.wait()
            #expect(result.status == 3)
            #expect(result.standardError == "ready\nstopping\n", "\(result.standardError)")
        }
    }

    /// Tests waiting for programs leave Swift's concurrency threads to the others (the global pool has
    /// one per core). Waiting blocked a thread each, so on a two-core CI machine two tests waiting for
    /// programs stopped every other test: a PostgreSQL test's 30 s guard ran out before its store had
    /// a thread to migrate on. Here several programs wait until this test, which needs the same thread
    /// to go on, has seen every one of them begin and lets them end. All of it runs on one thread of its
    /// own (a task executor), so the verdict does not depend on how busy the global pool is.
    @Test func waitingForProgramsLeavesTheThreadToOtherTasks() async throws {
        try await onADedicatedThread { try await programsWaitOnOneThread() }
    }

    private func programsWaitOnOneThread() async throws {
        let folder = try TemporaryDirectory()
        let count = 4
        // One FIFO per program, held open for reading and writing here, so the program's open does
        // not wait for a writer and its read waits for this test's line.
        var fifos: [Int32] = []
        defer { for fifo in fifos { close(fifo) } }
        for index in 0..<count {
            try #require(mkfifo(folder.path("fifo\(index)"), 0o600) == 0)
            let fifo = open(folder.path("fifo\(index)"), O_RDWR)
            try #require(fifo >= 0)
            fifos.append(fifo)
        }
        let ends = fifos
        let letThemEnd: @Sendable () -> Void = { for fifo in ends { _ = write(fifo, "go\n", 3) } }
        // A guard against a hang, not a timing: with its one thread held, this test never runs again.
        let watchdog = Watchdog(seconds: 60, letThemEnd)
        // Disarmed before the FIFOs close (defers run last first): a watchdog firing after an early
        // exit would write to descriptor numbers another test may have opened since.
        defer { _ = watchdog.disarm() }
        let (begun, begin) = AsyncStream.makeStream(of: Void.self)
        let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
            for index in 0..<count {
                group.addTask {
                    begin.yield()
                    return try await CommandRunner.run("/bin/sh", ["-c", "read line < \"$0\"", folder.path("fifo\(index)")]).status
                }
            }
            for await _ in begun.prefix(count) {}
            if watchdog.disarm() { letThemEnd() }
            return try await group.reduce(into: [Int32]()) { $0.append($1) }
        }
        #expect(!watchdog.fired, "\(count) programs waited for a minute: waiting for one held the thread the others needed")
        #expect(statuses == Array(repeating: 0, count: count))
    }
}

/// Calls `action` on a thread of its own after `seconds`, unless disarmed first: a guard against a
/// hang that works even when Swift's concurrency pool has no thread left to run a timer on.
private final class Watchdog: @unchecked Sendable {
    private let lock = NSLock()
    private let disarmed = DispatchSemaphore(value: 0)
    private var state: (armed: Bool, fired: Bool) = (true, false)

    init(seconds: Int, _ action: @escaping @Sendable () -> Void) {
        Thread { [self] in
            guard disarmed.wait(timeout: .now() + .seconds(seconds)) == .timedOut else { return }
            let fire = lock.withLock {
                guard state.armed else { return false }
                state = (false, true)
                return true
            }
            if fire { action() }
        }.start()
    }

    /// Whether the action had to run.
    var fired: Bool { lock.withLock { state.fired } }

    /// Stops the action from running; false when it has already run.
    func disarm() -> Bool {
        let stopped = lock.withLock {
            guard state.armed else { return false }
            state.armed = false
            return true
        }
        if stopped { disarmed.signal() }
        return stopped
    }
}
