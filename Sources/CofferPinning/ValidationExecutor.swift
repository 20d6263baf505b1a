import NIOCore
import NIOPosix

/// Where a TLS handshake's first chain validation runs: on two threads of its own (a SwiftNIO
/// `NIOThreadPool`, started at the first validation that needs it) rather than Swift's cooperative
/// pool.
///
/// swift-certificates validates asynchronously, so a handshake waiting for a verdict needs a thread to
/// run that validation on. The cooperative pool has one thread per core, and an application (or a test
/// run) that holds them all, synchronously waiting for a subprocess or a lock, would stall every
/// pinned connection behind it: the handshake fails closed on its timeout, but the connection is lost.
/// Not SwiftNIO's singleton blocking pool: an application may have turned SwiftNIO's singletons off,
/// and then touching one stops the process. A validation is a quarter of a millisecond of work, so two
/// threads serve a burst of handshakes; each task's jobs run there and never wait for the cooperative
/// pool.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class ValidationExecutor: TaskExecutor {
    /// The executor every pinned connection of the process shares; its threads live as long as the
    /// process.
    static let shared: ValidationExecutor = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return ValidationExecutor(pool: pool)
    }()

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
                // The pool is shutting down (never the shared one): the job still runs, on the global
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
