import CofferTesting
import Foundation

/// What a finished process left behind.
public struct CommandResult: Sendable {
    /// The exit status (or 128 + signal number when a signal ended it).
    public let status: Int32
    /// Everything written to standard output.
    public let standardOutput: [UInt8]
    /// Everything written to standard error, as text.
    public let standardError: String

    /// Standard output as UTF-8 text.
    public var output: String { String(decoding: standardOutput, as: UTF8.self) }
    /// Standard output split into lines (without the final empty one).
    public var lines: [String] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

/// Runs real programs (the built `coffer`, `sha256sum`, `openssl`) for end-to-end and interoperability tests.
public enum CommandRunner {
    /// Runs `executable` with `arguments`, feeding `input` on standard input, and waits for it to exit.
    ///
    /// Standard output and error go through temporary files, not pipes, so a chatty program can never
    /// block on a full pipe while the test waits for it. The wait happens on a thread of its own: the
    /// calling task is suspended, not its thread, so the tests running beside it keep the concurrency
    /// pool (two threads on a two-core machine; two tests waiting for programs on those threads stopped
    /// every other test, and a PostgreSQL test's 30 s guard ran out in CI).
    public static func run(
        _ executable: String,
        _ arguments: [String],
        input: [UInt8] = [],
        environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) async throws -> CommandResult {
        try await offThePool {
            try runBlocking(executable, arguments, input: input, environment: environment, currentDirectory: currentDirectory)
        }
    }

    /// ``run(_:_:input:environment:currentDirectory:)`` for a context that cannot wait asynchronously
    /// (a `static let` probe): it blocks the calling thread until the program ends.
    public static func runBlocking(
        _ executable: String,
        _ arguments: [String],
        input: [UInt8] = [],
        environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) throws -> CommandResult {
        let scratch = try TemporaryDirectory(prefix: "coffer-run")
        let inputPath = try scratch.write(input, to: "stdin")
        _ = FileManager.default.createFile(atPath: scratch.path("stdout"), contents: nil)
        _ = FileManager.default.createFile(atPath: scratch.path("stderr"), contents: nil)
        let stdin = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
        let stdout = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.path("stdout")))
        let stderr = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.path("stderr")))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try resolve(executable))
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        if var environment {
            // A test's own environment still carries the sanitizers' options (.ci/sanitizers), so a
            // sanitized child reads the same suppressions as the test process.
            for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"] where environment[name] == nil {
                environment[name] = ProcessInfo.processInfo.environment[name]
            }
            process.environment = environment
        }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        try process.run()
        process.waitUntilExit()
        try stdin.close()
        try stdout.close()
        try stderr.close()

        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        let output = try Fixtures.contents(ofFile: scratch.path("stdout"))
        let error = try Fixtures.contents(ofFile: scratch.path("stderr"))
        return CommandResult(status: status, standardOutput: output, standardError: String(decoding: error, as: UTF8.self))
    }

    /// Runs `body`, which blocks (waits for a process, reads a pipe), on a thread of its own and
    /// suspends the calling task until it returns: a Swift concurrency thread must never block.
    public static func offThePool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result { try body() })
            }.start()
        }
    }

    /// Whether a program is on `PATH`.
    public static func isAvailable(_ name: String) -> Bool {
        (try? resolve(name)) != nil
    }

    /// An absolute path for `name`, searching `PATH` when it has no slash.
    public static func resolve(_ name: String) throws -> String {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
    }

    /// The `coffer` binary built beside the running test bundle, or `$COFFER_BINARY` when set.
    public static func cofferExecutable() throws -> String {
        if let override = ProcessInfo.processInfo.environment["COFFER_BINARY"] { return override }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        #if os(Linux)
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        }
        #endif
        // On Apple platforms the bundle's executable sits three levels inside the .xctest folder.
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("coffer").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder.deleteLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "coffer (build it with 'swift build')"])
    }
}
