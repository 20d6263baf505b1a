import NIOCore
import NIOPosix

/// Where a TLS handshake's first chain validation runs: on SwiftNIO's shared thread pool rather than
/// Swift's cooperative pool.
///
/// swift-certificates validates asynchronously, so a handshake waiting for a verdict needs a thread to
/// run that validation on. The cooperative pool has one thread per core, and an application (or a test
/// run) that holds them all, synchronously waiting for a subprocess or a lock, would stall every
/// pinned connection behind it: the handshake fails closed on its timeout, but the connection is lost.
/// `NIOThreadPool.singleton` is the pool SwiftNIO keeps for blocking work; the validation's jobs run
/// there, one task at a time per handshake, and never wait for the cooperative pool.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class ValidationExecutor: TaskExecutor {
    /// The executor every pinned connection of the process shares.
    static let shared = ValidationExecutor(pool: .singleton)

    private let pool: NIOThreadPool

    init(pool: NIOThreadPool) {
        self.pool = pool
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pool.submit { state in
            switch state {
            case .active:
                job.runSynchronously(on: self.asUnownedTaskExecutor())
            case .cancelled:
                // The pool is shutting down (never the singleton): the job still runs, on the global
                // executor, so no handshake is left waiting for a verdict.
                globalConcurrentExecutor.enqueue(ExecutorJob(job))
            }
        }
    }
}

extension EventLoopPromise where Value: Sendable {
    /// Completes this promise with `validation`'s outcome, run on ``ValidationExecutor`` where the
    /// platform has task executors (Linux always; Apple platforms from macOS 15 and iOS 18), else as
    /// SwiftNIO's `completeWithTask`.
    func completeWithValidation(_ validation: @escaping @Sendable () async throws -> Value) {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            Task(executorPreference: ValidationExecutor.shared) {
                do {
                    self.succeed(try await validation())
                } catch {
                    self.fail(error)
                }
            }
        } else {
            completeWithTask(validation)
        }
    }
}
