import Dispatch

/// Runs async work from a synchronous command and waits for it: the CLI's root command is synchronous
/// (its exit-status mapping lives in `main()`), and the network commands need async APIs.
///
/// The work (and everything it captured: keys, requests) is released before the waiting thread
/// resumes, so nothing it held outlives the call — in particular not until the process exits while the
/// task is still winding down, which LeakSanitizer reported as a leak.
func runBlocking<Result: Sendable>(_ operation: @escaping @Sendable () async throws -> Result) throws -> Result {
    let box = OperationBox(operation)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await box.run()
        done.signal()
    }
    done.wait()
    guard let result = box.result else { preconditionFailure("the task ended without a result") }
    return try result.get()
}

/// Holds the operation until it runs, then only its result (written once before `signal`, read after
/// `wait`).
private final class OperationBox<Value>: @unchecked Sendable {
    private var operation: (@Sendable () async throws -> Value)?
    var result: Swift.Result<Value, any Error>?

    init(_ operation: @escaping @Sendable () async throws -> Value) {
        self.operation = operation
    }

    func run() async {
        guard let operation else { return }
        self.operation = nil
        do {
            result = .success(try await operation())
        } catch {
            result = .failure(error)
        }
    }
}
