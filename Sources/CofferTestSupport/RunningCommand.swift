import CCofferSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program started by ``CommandRunner/start(_:_:pipeInput:standardOutput:environment:currentDirectory:)``
/// that the test talks to while it runs: feeds its standard input a piece at a time, waits for a line on
/// its standard error (or output), signals it, then waits for its end. For fault tests: a process blocked reading
/// more input is, deterministically, in the middle of its work.
///
/// The program starts as a shell starts a foreground command: no signal blocked, SIGINT, SIGTERM,
/// SIGHUP, SIGQUIT and SIGPIPE at their default actions — whatever the test thread that started it
/// blocks (Dispatch's worker threads block signals, and Foundation's `Process` passes its caller's
/// signal mask on, which would make a test's SIGINT wait unseen).
public final class RunningCommand: @unchecked Sendable {
    /// The process id.
    public let processIdentifier: Int32
    private let input: FileHandle?
    /// The read ends of the program's standard output and error, when they are pipes the test reads.
    private let output: FileHandle?
    private let errors: FileHandle?
    private let scratch: TemporaryDirectory
    private let capturesOutput: Bool
    /// Standard output and standard error read so far.
    private var outputBytes: [UInt8] = []
    private var errorBytes: [UInt8] = []
    private var status: Int32?
    /// The program's end, read and reaped once, by whichever of ``wait()`` and ``stop(_:)`` came first.
    private var ending: Ending?
    private let statusLock = NSLock()

    init(processIdentifier: Int32, input: FileHandle?, output: FileHandle?, errors: FileHandle?, scratch: TemporaryDirectory, capturesOutput: Bool) {
        self.processIdentifier = processIdentifier
        self.input = input
        self.output = output
        self.errors = errors
        self.scratch = scratch
        self.capturesOutput = capturesOutput
    }

    /// Writes bytes to the program's standard input (waiting, off the concurrency pool, while the pipe
    /// is full).
    /// - Throws: when the program closed its input or ended (EPIPE).
    public func send(_ bytes: [UInt8]) async throws {
        guard let input else { return }
        try await CommandRunner.offThePool { try input.write(contentsOf: Data(bytes)) }
    }

    /// Closes the program's standard input: it reads end of file.
    public func closeInput() throws {
        try input?.close()
    }

    /// Sends `signal` (SIGINT, SIGTERM, SIGKILL…) to the program; nothing once ``wait()`` has reaped
    /// it (its process id may by then name another process).
    public func signal(_ number: Int32) {
        statusLock.withLock {
            guard status == nil else { return }
            kill(processIdentifier, number)
        }
    }

    /// Sends `signal` and, unless the test has already begun waiting, reaps the program on a thread of
    /// its own once it ends, without waiting: for a test's `defer`, which cannot wait asynchronously.
    /// A ``wait()`` after it returns what that reaping read.
    public func stop(_ number: Int32 = 15 /* SIGTERM */) {
        signal(number)
        let (ending, claimed) = claimEnding()
        guard claimed else { return }
        Thread { [self] in ending.finish(Result { try readAndReap() }) }.start()
    }

    /// Reads the program's standard error until it has written a whole line containing `text` (a
    /// point its work has reached), and returns everything read so far; nil when the program ended or
    /// closed standard error first. The reading waits on a thread of its own, not the caller's.
    public func waitForError(containing text: String) async throws -> String? {
        guard let errors else { return nil }
        return try await CommandRunner.offThePool { Self.read(errors, into: &self.errorBytes, until: text) }
    }

    /// Reads the program's standard output (started with ``CommandRunner/StandardOutput/pipe``) until
    /// it has written a whole line containing `text`, and returns everything read so far; nil when the
    /// program ended or closed standard output first. The reading waits on a thread of its own.
    public func waitForOutput(containing text: String) async throws -> String? {
        guard let output else { return nil }
        return try await CommandRunner.offThePool { Self.read(output, into: &self.outputBytes, until: text) }
    }

    private static func read(_ handle: FileHandle, into bytes: inout [UInt8], until text: String) -> String? {
        while true {
            let written = String(decoding: bytes, as: UTF8.self)
            if let range = written.range(of: text), written[range.upperBound...].contains("\n") { return written }
            let more = handle.availableData
            guard !more.isEmpty else { return nil }
            bytes += more
        }
    }

    /// Waits for the program to end and returns what it left; the status is 128 + N for a program
    /// ended by signal N, as a shell reports it. The waiting happens on a thread of its own: the
    /// calling task is suspended, its thread free for other tests.
    public func wait() async throws -> CommandResult {
        try await CommandRunner.offThePool {
            let (ending, claimed) = self.claimEnding()
            if claimed { ending.finish(Result { try self.readAndReap() }) }
            return try ending.result()
        }
    }

    /// The one ending of this program, and whether the caller is the one to read and reap it (a
    /// second reader would race the first for the pipes and the status).
    private func claimEnding() -> (Ending, claimed: Bool) {
        statusLock.withLock {
            if let ending { return (ending, false) }
            let made = Ending()
            ending = made
            return (made, true)
        }
    }

    private func readAndReap() throws -> CommandResult {
        try? input?.close()
        // Both pipes are drained at once: a program that fills one while the test reads the other to
        // its end would wait for ever.
        let drain = output.map(PipeDrain.init)
        if let errors { errorBytes += errors.readDataToEndOfFile() }
        if let drain { outputBytes += drain.wait() }
        // Waits for the end without reaping, then reaps under the lock that signal() takes: no signal
        // reaches a process id reused after the reaping, and signal() never waits for the program.
        var ended = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        let ending = statusLock.withLock {
            if status == nil {
                var raw: Int32 = 0
                while waitpid(processIdentifier, &raw, 0) < 0 && errno == EINTR {}
                let signalled = raw & 0x7f
                status = signalled != 0 ? 128 + signalled : (raw >> 8) & 0xff
            }
            return status
        }
        let written = capturesOutput ? try Fixtures.contents(ofFile: scratch.path("stdout")) : outputBytes
        return CommandResult(status: ending ?? -1, standardOutput: written, standardError: String(decoding: errorBytes, as: UTF8.self))
    }
}

/// What reading and reaping a program gave, for every caller that waits for it.
private final class Ending: @unchecked Sendable {
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    private var outcome: Result<CommandResult, any Error>?

    func finish(_ outcome: Result<CommandResult, any Error>) {
        lock.withLock { self.outcome = outcome }
        finished.signal()
    }

    /// Waits for ``finish(_:)`` and returns its outcome.
    func result() throws -> CommandResult {
        finished.wait()
        finished.signal()  // for the next caller
        guard let outcome = lock.withLock({ outcome }) else {
            throw CommandRunner.SpawnError(description: "a program's end was signalled without an outcome")
        }
        return try outcome.get()
    }
}

/// Reads a pipe to its end on a thread of its own, for ``RunningCommand/wait()`` to drain standard
/// output while it reads standard error.
private final class PipeDrain: @unchecked Sendable {
    private var data = Data()
    private let finished = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            finished.signal()
        }.start()
    }

    /// Everything read, once the pipe has reached its end.
    func wait() -> [UInt8] {
        finished.wait()
        return Array(data)
    }
}

extension CommandRunner {
    /// Where a started program's standard output goes.
    public enum StandardOutput: Sendable {
        /// A file the result returns.
        case captured
        /// This path, opened for writing (`/dev/full`, a file on a full disk).
        case path(String)
        /// The write end of a pipe whose read end is already closed: every write fails with EPIPE.
        case closedPipe
        /// A pipe the test reads with ``RunningCommand/waitForOutput(containing:)``; the result returns
        /// what was written. A program that writes more than the pipe holds (64 KiB on Linux) before
        /// the test reads it or waits for its end blocks until then.
        case pipe
    }

    /// Where a started program's standard error goes.
    public enum StandardError: Sendable {
        /// A pipe the test reads with ``RunningCommand/waitForError(containing:)``; the result returns
        /// what was written.
        case pipe
        /// The write end of a pipe whose read end is already closed, as when a log reader has gone
        /// away: every write fails with EPIPE.
        case closedPipe
        /// This file, created (or emptied) for writing: for a long-running program whose log the test
        /// reads afterwards, which a pipe nobody reads meanwhile would block once it holds 64 KiB.
        case file(String)
    }

    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `executable` with its standard input on a pipe the test writes through
    /// ``RunningCommand/send(_:)`` (or `/dev/null` when `pipeInput` is false) and its standard error on
    /// a pipe (unless `standardError` says otherwise), and returns at once.
    public static func start(
        _ executable: String,
        _ arguments: [String],
        pipeInput: Bool = true,
        standardOutput: StandardOutput = .captured,
        standardError: StandardError = .pipe,
        environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) throws -> RunningCommand {
        // A test writing to the input of a program that already ended gets EPIPE, not a fatal SIGPIPE.
        _ = signal(SIGPIPE, SIG_IGN)
        let scratch = try TemporaryDirectory(prefix: "coffer-run")
        let path = try resolve(executable)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var closeInParent: [Int32] = []
        defer { for descriptor in closeInParent { close(descriptor) } }

        // Read ends this process keeps; closed here unless the program starts.
        var outputReadEnd: Int32?
        var errorReadEnd: Int32?
        var started = false
        defer { if !started { for end in [outputReadEnd, errorReadEnd].compactMap({ $0 }) { close(end) } } }
        var inputPipe: [Int32] = [-1, -1]
        if pipeInput {
            guard makePipe(&inputPipe) else { throw SpawnError(description: "pipe: \(errno)") }
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
            closeInParent.append(inputPipe[0])
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        switch standardOutput {
        case .captured:
            posix_spawn_file_actions_addopen(&actions, 1, scratch.path("stdout"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        case .path(let target):
            posix_spawn_file_actions_addopen(&actions, 1, target, O_WRONLY, 0)
        case .closedPipe:
            try addPipe(as: 1, to: &actions, closeInParent: &closeInParent, keepReadEnd: false)
        case .pipe:
            outputReadEnd = try addPipe(as: 1, to: &actions, closeInParent: &closeInParent, keepReadEnd: true)
        }
        switch standardError {
        case .pipe:
            errorReadEnd = try addPipe(as: 2, to: &actions, closeInParent: &closeInParent, keepReadEnd: true)
        case .closedPipe:
            try addPipe(as: 2, to: &actions, closeInParent: &closeInParent, keepReadEnd: false)
        case .file(let target):
            posix_spawn_file_actions_addopen(&actions, 2, target, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        // Tests run in parallel in this process: the program gets its three standard descriptors and
        // nothing another test has open (a leaked write end of a binary being copied makes that binary
        // unrunnable, ETXTBSY, for as long as this program lives). The pipes above are close-on-exec
        // for the same reason; dup2 clears the flag on the copies the program keeps.
        let closing = coffer_spawn_close_from(&actions, 3)
        guard closing == 0 || closing == ENOSYS else { throw SpawnError(description: "posix_spawn_file_actions_addclosefrom_np: \(closing)") }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // The working folder: through a shell that changes to it and replaces itself with the program
        // (posix_spawn has no portable chdir action).
        var argv = [path] + arguments
        if let currentDirectory {
            argv = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", currentDirectory] + argv
        }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let result = withCStrings(argv) { cArguments in
            withCStrings(variables) { cEnvironment in
                posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
            }
        }
        guard result == 0 else {
            if pipeInput { close(inputPipe[1]) }
            throw SpawnError(description: "cannot start \(argv[0]): \(String(cString: strerror(result)))")
        }
        started = true
        let input = pipeInput ? FileHandle(fileDescriptor: inputPipe[1], closeOnDealloc: true) : nil
        let output = outputReadEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        let errors = errorReadEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        let captures = if case .captured = standardOutput { true } else { false }
        return RunningCommand(processIdentifier: pid, input: input, output: output, errors: errors, scratch: scratch, capturesOutput: captures)
    }

    /// Makes a pipe whose write end becomes the program's descriptor `target`; returns the read end
    /// when `keepReadEnd`, else closes it at once (every write the program makes fails with EPIPE).
    @discardableResult
    private static func addPipe(
        as target: Int32, to actions: inout posix_spawn_file_actions_t, closeInParent: inout [Int32], keepReadEnd: Bool
    ) throws -> Int32? {
        var ends: [Int32] = [-1, -1]
        guard makePipe(&ends) else { throw SpawnError(description: "pipe: \(errno)") }
        posix_spawn_file_actions_adddup2(&actions, ends[1], target)
        closeInParent.append(ends[1])
        guard keepReadEnd else {
            close(ends[0])
            return nil
        }
        return ends[0]
    }

    /// A pipe whose two ends are close-on-exec (atomically where the system can: another test's
    /// program started in between must not inherit them).
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        coffer_pipe_cloexec(&ends) == 0
    }

    /// Calls `body` with a NULL-terminated array of C strings.
    private static func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }
}
