import Foundation

/// A task executor on a thread of its own (a serial dispatch queue): tasks that prefer it
/// (`withTaskExecutorPreference`) run there, one at a time, not on the global concurrency pool. A test
/// whose verdict depends on when its tasks run (a thread held, writes that overlap) uses one, so that
/// the hundreds of tests running beside it in the same process, which keep the global pool's few
/// threads busy for seconds at a time, cannot change its outcome.
///
/// Serial, not concurrent: a concurrent dispatch queue takes its threads from the same width-limited
/// pool as Swift's tasks (measured: with that pool's threads blocked, a job on a new concurrent queue
/// ran after 3 s, when they were released, and one on a new serial queue at once), so it is no escape
/// from a busy pool; a serial queue is given a thread even then.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class DedicatedExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "coffer.test.dedicated-executor")

    /// An executor on a thread of its own.
    public init() {}

    /// Runs `job` on the executor's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Runs `body`, and the tasks it starts, on a new ``DedicatedExecutor``: on a thread of their own,
/// interleaved where they await; where the system has no task executors (Apple systems before 2024),
/// on the global pool.
public func onADedicatedThread<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        return try await withTaskExecutorPreference(DedicatedExecutor(), operation: body)
    }
    return try await body()
}
