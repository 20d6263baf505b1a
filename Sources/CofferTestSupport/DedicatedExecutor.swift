import Foundation

/// A task executor on threads of its own (a dispatch queue, serial or concurrent): tasks that prefer
/// it (`withTaskExecutorPreference`) run there, not on the global concurrency pool. A test whose
/// verdict depends on when its tasks run (a thread held, writes that overlap) uses one, so that the
/// hundreds of tests running beside it in the same process, which keep the global pool's few threads
/// busy for seconds at a time, cannot change its outcome.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class DedicatedExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// An executor on one thread at a time (`concurrent: false`) or as many as its jobs need.
    public init(concurrent: Bool) {
        queue = DispatchQueue(label: "coffer.test.dedicated-executor", attributes: concurrent ? [.concurrent] : [])
    }

    /// Runs `job` on the executor's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Runs `body`, and the tasks it starts, on a new ``DedicatedExecutor`` (serial or `concurrent`);
/// where the system has no task executors (Apple systems before 2024), on the global pool.
public func onDedicatedThreads<Value: Sendable>(concurrent: Bool, _ body: () async throws -> Value) async throws -> Value {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        return try await withTaskExecutorPreference(DedicatedExecutor(concurrent: concurrent), operation: body)
    }
    return try await body()
}
