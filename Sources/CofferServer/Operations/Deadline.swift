import Foundation

/// Runs work with a deadline that holds even when the work does not stop when cancelled (a database
/// driver waiting on a socket that never answers): at the deadline the caller gets its answer and the
/// work is cancelled, left to end on its own. A task group cannot give that: it waits for its
/// children, however late they end.
package enum Deadline {
    /// `body`'s value, or nil once `timeout` has passed (`body` is then cancelled). Cancelling the
    /// caller ends the wait at once with `CancellationError`.
    package static func run<T: Sendable>(within timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        let race = Race<T?>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
                race.begin(continuation)
                let work = Task {
                    do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
                }
                let timer = Task {
                    try await Task.sleep(for: timeout)
                    race.finish(.success(nil))
                }
                race.hold(work: work, timer: timer)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The first outcome of a race between work, its timer and cancellation, given to the waiting
    /// caller once; the losers are cancelled.
    private final class Race<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<T, any Error>?
        private var outcome: Result<T, any Error>?
        private var tasks: [Task<Void, any Error>] = []
        private var workTask: Task<Void, Never>?

        func begin(_ continuation: CheckedContinuation<T, any Error>) {
            let early: Result<T, any Error>? = lock.withLock {
                if let outcome { return outcome }
                self.continuation = continuation
                return nil
            }
            // Cancelled before the work began.
            if let early { continuation.resume(with: early) }
        }

        func hold(work: Task<Void, Never>, timer: Task<Void, any Error>) {
            let finished = lock.withLock {
                workTask = work
                tasks = [timer]
                return outcome != nil
            }
            if finished {
                work.cancel()
                timer.cancel()
            }
        }

        func finish(_ result: Result<T, any Error>) {
            let (waiting, work, timers): (CheckedContinuation<T, any Error>?, Task<Void, Never>?, [Task<Void, any Error>]) = lock.withLock {
                guard outcome == nil else { return (nil, nil, []) }
                outcome = result
                defer { continuation = nil }
                return (continuation, workTask, tasks)
            }
            work?.cancel()
            for timer in timers { timer.cancel() }
            waiting?.resume(with: result)
        }
    }
}
