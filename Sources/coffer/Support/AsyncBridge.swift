import Dispatch

/// Runs async work from a synchronous command and waits for it: the CLI's root command is synchronous
/// (its exit-status mapping lives in `main()`), and the network commands need async APIs.
func runBlocking<Result: Sendable>(_ operation: @escaping @Sendable () async throws -> Result) throws -> Result {
    let box = ResultBox<Result>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            box.result = .success(try await operation())
        } catch {
            box.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    guard let result = box.result else { preconditionFailure("the task ended without a result") }
    return try result.get()
}

/// Carries the result across the semaphore (written once before `signal`, read after `wait`).
private final class ResultBox<Value>: @unchecked Sendable {
    var result: Swift.Result<Value, any Error>?
}
