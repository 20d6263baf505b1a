/// When a group commit is worth waiting for: the writer waits a little for more writes only while
/// the last commit showed that several writers are at work.
///
/// PostgreSQL's `commit_delay` waits a fixed time whenever `commit_siblings` transactions are open;
/// here the evidence is the size of the batch just committed. Under load, the writes that follow one
/// commit are mostly the answers to it coming back (a client sends its next request; a signed route
/// other than `/register_user` writes its replay record, then its data), so a batch smaller than the
/// last is usually a batch caught early: waiting up to ``delayMicroseconds`` for the rest lets one
/// commit (one WAL append, one lock round) carry them. A writer on its own commits at once: its
/// batches hold one job, and one job is never less than the one before. When the load falls away the
/// first smaller batch waits out the delay and the next commits at once.
struct GroupCommitPacing: Sendable {
    /// The longest a batch waits for company, in microseconds; 0 never waits.
    let delayMicroseconds: Int

    /// The most jobs a batch waits for.
    static let largestAwaitedBatch = 64

    /// The size of the last batch committed (1 before any).
    private(set) var lastBatch = 1

    init(delayMicroseconds: Int) {
        self.delayMicroseconds = max(0, delayMicroseconds)
    }

    /// How many jobs to wait for when `taken` are ready, or nil to commit at once.
    func batchToAwait(taken: Int) -> Int? {
        guard delayMicroseconds > 0, taken < lastBatch else { return nil }
        return lastBatch
    }

    /// Records the size of a committed batch.
    mutating func committed(batchOf count: Int) {
        lastBatch = min(max(count, 1), Self.largestAwaitedBatch)
    }
}
