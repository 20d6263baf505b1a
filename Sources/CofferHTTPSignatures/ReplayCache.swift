import CofferCore
import Foundation

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
    /// Expiries by identifier, in tables of their own (``ExpiringRecordTable``: one dictionary of
    /// them all held up every verification while it grew).
    private var expiries = ExpiringRecordTable<String, Int64>()
    /// The `now` of the last sweep of every table at capacity: a full cache is swept once per second
    /// of its callers' clock, not on every request it refuses (within one second no record expires).
    private var sweptFullAt: Int64?

    /// A cache holding at most `capacity` live records (a million by default, about 100 MB at most).
    public init(capacity: Int = 1_000_000) {
        self.capacity = capacity
    }

    /// The number of records held, live or not yet swept.
    public var count: Int { expiries.count }

    /// How many records the fullest of the cache's tables holds (for tests).
    package var largestTableCount: Int { expiries.largestTableCount }

    public func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) throws -> Bool {
        if let existing = expiries[identifier], existing > now { return false }
        expiries.pruneIfDue(tableOf: identifier) { _, expiry in expiry > now }
        if expiries.count >= capacity, sweptFullAt != now {
            expiries.pruneAll { _, expiry in expiry > now }
            sweptFullAt = now
        }
        guard expiries.count < capacity else { throw ReplayCacheFull(capacity: capacity) }
        expiries.updateValue(expiry, forKey: identifier)
        return true
    }
}

/// A signature's replay record, not yet written: what a store needs to write it in the same
/// transaction as the request's own effect (``HTTPSignatureReplayCache/recordFirstUse(of:expiringAt:now:)``'s
/// arguments), so that a request either takes effect *and* is remembered, or neither.
public struct HTTPReplayRecord: Sendable, Hashable {
    /// The signature's replay identity: its anchor (`created`, or `expires`), then a digest of its key id
    /// and nonce, or of its signature base — 80 hex digits that sort in the anchors' order.
    public let identifier: String
    /// The first instant (UNIX seconds) at which the signature is no longer accepted.
    public let expiry: Int64
    /// The verifier's clock when it checked the signature.
    public let now: Int64

    /// A record; see the properties.
    public init(identifier: String, expiry: Int64, now: Int64) {
        self.identifier = identifier
        self.expiry = expiry
        self.now = now
    }

    /// The identity of a signature whose anchor (`created`, or `expires`) is `anchor` and whose
    /// key-and-nonce (or key-and-base) digest is `digest`: 16 hex digits of the anchor with its top bit
    /// flipped, so that identities sort as their anchors do, then the digest's (docs/HTTP-SIGNATURES.md,
    /// "Replay protection").
    static func identifier(anchor: Int64, digest: [UInt8]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + digest.count)
        withUnsafeBytes(of: (UInt64(bitPattern: anchor) ^ (1 << 63)).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: digest)
        return Hex.encode(bytes)
    }

    /// The identifier Coffer 1.0.0 gave the same signature (the digest alone, without the anchor), or nil
    /// when `identifier` is not one of this version's: what a store that kept records across the
    /// upgrade must also find live before it calls a signature new.
    public static func earlierIdentifier(of identifier: String) -> String? {
        let utf8 = identifier.utf8
        guard utf8.count == 80, utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) else {
            return nil
        }
        return String(identifier.dropFirst(16))
    }

    /// The identifier Coffer 1.0.0 gave this record's signature; see ``earlierIdentifier(of:)``.
    public var earlierIdentifier: String? { Self.earlierIdentifier(of: identifier) }
}

/// The replay record a verified signature still owes: the route behind a middleware that defers it
/// takes it (``take()``) into its own write, and the middleware writes whatever was not taken once the
/// route has answered. Taken at most once.
package final class HTTPReplayObligation: @unchecked Sendable {
    /// The record owed.
    package let record: HTTPReplayRecord
    private let lock = NSLock()
    private var taken = false

    package init(_ record: HTTPReplayRecord) {
        self.record = record
    }

    /// The record, the first time it is asked for; nil afterwards.
    package func take() -> HTTPReplayRecord? {
        lock.withLock {
            guard !taken else { return nil }
            taken = true
            return record
        }
    }
}
