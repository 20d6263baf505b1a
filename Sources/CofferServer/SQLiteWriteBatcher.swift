import CofferCore
import Foundation
import GRDB

/// Group commit for one SQLite database: writes that arrive while another is being committed share
/// the next transaction.
///
/// SQLite takes one writer at a time, and a signed request writes twice (its replay record, then its
/// data); a transaction and a hop to the writer queue each would halve a signed route's throughput.
/// The first write queues a drain on GRDB's writer queue; the drain takes everything queued so far,
/// runs the jobs one after the other inside one transaction, commits, answers every caller, and
/// repeats until the queue is empty. No caller hears of success before the transaction holding its
/// job has committed; if the commit fails, every caller of that batch gets the error.
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

    private let pool: DatabasePool
    private let lock = NSLock()
    private var queue: [Job] = []
    private var draining = false

    init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Runs `work` in the next batch and returns its result once that batch has committed.
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let value = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any Sendable, any Error>) in
            let startsDrain = lock.withLock {
                queue.append(Job(work: { try work($0) }, continuation: continuation))
                guard !draining else { return false }
                draining = true
                return true
            }
            if startsDrain { pool.asyncWriteWithoutTransaction { [self] db in drain(db) } }
        }
        guard let typed = value as? T else { throw CofferCoreError(.ioFailure, "a batched write returned \(type(of: value)), not \(T.self)") }
        return typed
    }

    /// Runs on the writer queue until no job is left.
    private func drain(_ db: Database) {
        while true {
            let batch: [Job] = lock.withLock {
                let taken = queue
                queue.removeAll(keepingCapacity: true)
                if taken.isEmpty { draining = false }
                return taken
            }
            if batch.isEmpty { return }
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
                for job in batch { job.continuation.resume(throwing: error) }
                continue
            }
            for (job, outcome) in zip(batch, outcomes) { job.continuation.resume(with: outcome) }
        }
    }

    private static func run(_ job: Job, in db: Database) -> Result<any Sendable, any Error> {
        Result { try job.work(db) }
    }
}
