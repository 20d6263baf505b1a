/// Remembers which signatures were already accepted, so that a captured request cannot be sent again
/// while its signature is still fresh. ``InMemoryReplayCache`` serves one process; a server fleet shares
/// one in its database.
public protocol HTTPSignatureReplayCache: Sendable {
    /// Records `identifier` as used until `expiry` (UNIX seconds) and says whether this was its first use.
    ///
    /// `expiry` is the first instant at which the signature can no longer be accepted (the verifier
    /// passes the last accepted instant plus one), so a record is live for as long as a replay could be.
    /// Must be atomic: of two concurrent calls with the same identifier, exactly one returns true. An
    /// identifier whose earlier record has expired (`expiry` <= `now`) counts as unused.
    /// - Returns: true on first use, false for a replay.
    func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool
}

/// A replay cache in this process's memory: records expire with their signatures, and the cache refuses
/// new records (the verifier then answers `unavailable`) rather than forget live ones when it is full.
public actor InMemoryReplayCache: HTTPSignatureReplayCache {
    /// The most live records kept.
    public let capacity: Int
    private var expiries: [String: Int64] = [:]
    private var nextSweep = 1024

    /// A cache holding at most `capacity` live records (a million by default, about 100 MB at most).
    public init(capacity: Int = 1_000_000) {
        self.capacity = capacity
    }

    /// The number of records held, live or not yet swept.
    public var count: Int { expiries.count }

    public func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) throws -> Bool {
        if let existing = expiries[identifier], existing > now { return false }
        if expiries.count >= nextSweep || expiries.count >= capacity {
            expiries = expiries.filter { $0.value > now }
            nextSweep = max(1024, expiries.count * 2)
        }
        guard expiries.count < capacity else { throw ReplayCacheFull(capacity: capacity) }
        expiries[identifier] = expiry
        return true
    }

    /// Thrown when the cache holds `capacity` live records.
    public struct ReplayCacheFull: Error, CustomStringConvertible {
        /// The cache's capacity.
        public let capacity: Int
        public var description: String { "the replay cache holds \(capacity) live signatures and accepts no more until some expire" }
    }
}
