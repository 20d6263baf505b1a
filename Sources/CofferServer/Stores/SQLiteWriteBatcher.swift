import CofferCore
import Foundation
import GRDB

/// Group commit for one SQLite database: writes that arrive while another is being committed share
/// the next transaction, and under load a batch waits briefly for the writes about to join it.
///
/// SQLite takes one writer at a time, and a signed request writes twice (its replay record, then its
/// data); a transaction and a hop to the writer queue each would halve a signed route's throughput.
/// The first write queues a drain on GRDB's writer queue; the drain takes everything queued so far,
/// runs the jobs one after the other inside one transaction, commits, answers every caller, and
/// repeats until the queue is empty. When the batch it took is smaller than the last one committed,
/// it first waits up to the pacing's delay for as many jobs as that one held (``GroupCommitPacing``:
/// a lone writer never waits). No caller hears of success before the transaction holding its job has
/// committed; if the commit fails, every caller of that batch gets the error.
///
/// Jobs must be single statements, or statements that may stand alone (a job that throws leaves the
/// statements it already ran in the batch): SQLite undoes a failing statement, not the transaction,
/// so one job's constraint error does not touch the others. (A savepoint per job would make any job
/// atomic, at a cost that measured as large as the job itself.)
final class SQLiteWriteBatcher: @unchecked Sendable {
    private struct Job {
        let work: (Database) throws -> any Sendable
        let continuation: CheckedContinuation<any Sendable, any Error>
    }

    /// How long a batch waits for company by default, in microseconds. Measured against 300 and
    /// 2,000 under 16 signing clients (docs/PERFORMANCE.md, "Group commit that waits"): 300 saved half
    /// as much CPU, 2,000 no more; a lone client never waits, and a half-loaded server's median answer
    /// took 0.4 ms longer.
    static let defaultDelayMicroseconds = 1_000

    private let pool: DatabasePool
    private let lock = NSLock()
    private var queue: [Job] = []
    private var draining = false
    /// Read and written on the writer queue only.
    private var pacing: GroupCommitPacing
    /// While the drain waits: how many queued jobs end the wait (0 when it does not wait).
    private var awaited = 0
    /// Whether a writer has signalled `arrivals` for the current wait.
    private var woken = false
    private var waits = 0
    private let arrivals = DispatchSemaphore(value: 0)

    /// Called on the writer queue after each batch's transaction, with whether it committed, before
    /// any caller of the batch hears of it.
    private let transactionEnded: @Sendable (_ committed: Bool) -> Void

    init(
        pool: DatabasePool, delayMicroseconds: Int = SQLiteWriteBatcher.defaultDelayMicroseconds,
        transactionEnded: @escaping @Sendable (_ committed: Bool) -> Void = { _ in }
    ) {
        self.pool = pool
        self.pacing = GroupCommitPacing(delayMicroseconds: delayMicroseconds)
        self.transactionEnded = transactionEnded
    }

    /// How many times a batch has waited for company.
    var waitCount: Int { lock.withLock { waits } }

    /// How many jobs are queued and not yet taken by a batch.
    var queuedCount: Int { lock.withLock { queue.count } }

    /// Runs `work` in the next batch and returns its result once that batch has committed.
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let value = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any Sendable, any Error>) in
            let (startsDrain, wakes) = lock.withLock {
                queue.append(Job(work: { try work($0) }, continuation: continuation))
                var wakes = false
                if awaited > 0, !woken, queue.count >= awaited {
                    woken = true
                    wakes = true
                }
                guard !draining else { return (false, wakes) }
                draining = true
                return (true, wakes)
            }
            if wakes { arrivals.signal() }
            if startsDrain { pool.asyncWriteWithoutTransaction { [self] db in drain(db) } }
        }
        guard let typed = value as? T else { throw CofferCoreError(.ioFailure, "a batched write returned \(type(of: value)), not \(T.self)") }
        return typed
    }

    /// Runs on the writer queue until no job is left.
    private func drain(_ db: Database) {
        while true {
            var batch: [Job] = lock.withLock {
                let taken = queue
                queue.removeAll(keepingCapacity: true)
                if taken.isEmpty { draining = false }
                return taken
            }
            if batch.isEmpty { return }
            if let target = pacing.batchToAwait(taken: batch.count) {
                batch += awaitJobs(count: target - batch.count)
            }
            pacing.committed(batchOf: batch.count)
            var outcomes: [Result<any Sendable, any Error>] = []
            outcomes.reserveCapacity(batch.count)
            do {
                try db.inTransaction {
                    for job in batch {
                        outcomes.append(Self.run(job, in: db))
                    }
                    return .commit
                }
            } catch {
                transactionEnded(false)
                for job in batch { job.continuation.resume(throwing: error) }
                continue
            }
            transactionEnded(true)
            for (job, outcome) in zip(batch, outcomes) { job.continuation.resume(with: outcome) }
        }
    }

    /// Waits until `count` more jobs are queued or the pacing's delay has passed, and takes what is
    /// queued then.
    private func awaitJobs(count: Int) -> [Job] {
        let waiting = lock.withLock {
            guard queue.count < count else { return false }
            awaited = count
            woken = false
            waits += 1
            return true
        }
        if waiting {
            let deadline = DispatchTime.now() + .microseconds(pacing.delayMicroseconds)
            let signalled = arrivals.wait(timeout: deadline) == .success
            let signalPending = lock.withLock {
                defer { awaited = 0; woken = false }
                return woken && !signalled
            }
            // A writer decided to wake us after the wait timed out: take its signal now, so the next
            // wait does not end at once.
            if signalPending { arrivals.wait() }
        }
        return lock.withLock {
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
    }

    private static func run(_ job: Job, in db: Database) -> Result<any Sendable, any Error> {
        Result { try job.work(db) }
    }
}
