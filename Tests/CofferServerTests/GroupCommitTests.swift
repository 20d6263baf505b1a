@testable import CofferServer
import CofferTestSupport
import CofferTesting
import Dispatch
import GRDB
import Testing

/// The group commit's wait: taken only under load, ended by the writes it waits for, bounded by its
/// delay, and never at the cost of an answer.
@Suite("Group commit")
struct GroupCommitTests {
    @Test func aLoneWriterNeverWaits() {
        var pacing = GroupCommitPacing(delayMicroseconds: 300)
        #expect(pacing.batchToAwait(taken: 1) == nil)
        pacing.committed(batchOf: 1)
        #expect(pacing.batchToAwait(taken: 1) == nil)
    }

    @Test func aBatchSmallerThanTheLastWaitsForAsManyJobs() {
        var pacing = GroupCommitPacing(delayMicroseconds: 300)
        pacing.committed(batchOf: 8)
        #expect(pacing.batchToAwait(taken: 3) == 8)
        #expect(pacing.batchToAwait(taken: 8) == nil)
        #expect(pacing.batchToAwait(taken: 12) == nil)
        // Once the smaller batch has committed, the next of its size commits at once.
        pacing.committed(batchOf: 3)
        #expect(pacing.batchToAwait(taken: 3) == nil)
    }

    @Test func aZeroDelayNeverWaitsAndTheAwaitedBatchIsBounded() {
        var off = GroupCommitPacing(delayMicroseconds: 0)
        off.committed(batchOf: 50)
        #expect(off.batchToAwait(taken: 1) == nil)
        var on = GroupCommitPacing(delayMicroseconds: -5)
        on.committed(batchOf: 50)
        #expect(on.batchToAwait(taken: 1) == nil)
        var large = GroupCommitPacing(delayMicroseconds: 300)
        large.committed(batchOf: 10_000)
        #expect(large.batchToAwait(taken: 1) == GroupCommitPacing.largestAwaitedBatch)
    }

    /// A wait that would last a minute: were a lone writer to wait, this test would take minutes and
    /// count the waits.
    @Test func sequentialWritesCommitWithoutWaiting() async throws {
        let (directory, pool) = try Self.database()
        let batcher = SQLiteWriteBatcher(pool: pool, delayMicroseconds: 60_000_000)
        for index in 0..<50 {
            let rowID = try await batcher.write { db in
                try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [index])
                return db.lastInsertedRowID
            }
            #expect(rowID == Int64(index + 1))
        }
        #expect(batcher.waitCount == 0)
        try pool.close()
        _ = directory
    }

    /// After a batch of 16, a lone write waits once (and is answered when the delay passes, committed),
    /// and the next lone write does not wait.
    @Test func theWaitFollowsTheLoad() async throws {
        let (directory, pool) = try Self.database()
        let batcher = SQLiteWriteBatcher(pool: pool, delayMicroseconds: 2_000)
        // Hold the writer queue until 16 writes are queued, so that they make one batch.
        let hold = DispatchSemaphore(value: 0)
        pool.asyncWriteWithoutTransaction { _ in hold.wait() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask { try await batcher.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [index]) } }
            }
            while batcher.queuedCount < 16 { await Task.yield() }
            hold.signal()
            try await group.waitForAll()
        }
        #expect(batcher.waitCount == 0)
        let count = try await batcher.write { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") ?? -1 }
        #expect(count == 16)
        #expect(batcher.waitCount == 1)
        _ = try await batcher.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (99)") }
        #expect(batcher.waitCount == 1)
        let stored = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
        #expect(stored == 17)
        try pool.close()
        _ = directory
    }

    /// Sixteen writers, each writing again as soon as it is answered (as clients do), so that batches
    /// wait while writes arrive: every job runs once, every answer is its own, and a job that fails
    /// fails alone. The writers run on a thread of their own (interleaved where they await their
    /// answers, so all sixteen writes are outstanding at once): on the global pool, busy with the other
    /// tests, each one's next write could wait seconds for a thread, the writes arrived one at a time
    /// and no batch ever waited (seen in two full runs; the second with the writers on a concurrent
    /// queue, which draws on the same busy threads: see `DedicatedExecutor`).
    @Test func concurrentWritersGetTheirOwnAnswers() async throws {
        try await onADedicatedThread { try await sixteenWriters() }
    }

    private func sixteenWriters() async throws {
        let (directory, pool) = try Self.database()
        let batcher = SQLiteWriteBatcher(pool: pool, delayMicroseconds: 500)
        let outcomes = await withTaskGroup(of: [(Int, Int?)].self) { group in
            for writer in 0..<16 {
                group.addTask {
                    var answers: [(Int, Int?)] = []
                    for turn in 0..<25 {
                        let index = writer * 25 + turn
                        let value = try? await batcher.write { db -> Int in
                            // Every seventh breaks the table's CHECK: its statement is undone, not the batch.
                            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [index % 7 == 0 ? -index - 1 : index])
                            return index
                        }
                        answers.append((index, value))
                    }
                    return answers
                }
            }
            return await group.reduce(into: [Int: Int?]()) { outcomes, answers in
                for (index, value) in answers { outcomes[index] = value }
            }
        }
        #expect(outcomes.count == 400)
        for (index, value) in outcomes {
            #expect(value == (index % 7 == 0 ? nil : index), "write \(index)")
        }
        let stored = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
        #expect(stored == (0..<400).filter { $0 % 7 != 0 }.count)
        #expect(batcher.waitCount > 0)
        try pool.close()
        _ = directory
    }

    private static func database() throws -> (TemporaryDirectory, DatabasePool) {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("batch.sqlite"))
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL CHECK (v >= 0))") }
        return (directory, pool)
    }
}
