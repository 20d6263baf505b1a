import CofferHTTPSignatures
import Testing

/// The replay cache in a process's memory: first use once, replays until expiry, a bounded size, and
/// no table that grows large enough to hold up every verification while it rehashes.
@Suite("In-memory replay cache")
struct InMemoryReplayCacheTests {
    static let now: Int64 = 1_800_000_000

    /// Records `count` identifiers `prefix-0`… expiring at `expiry`, as seen at `now`.
    static func fill(_ cache: InMemoryReplayCache, _ prefix: String, count: Int, expiringAt expiry: Int64, now: Int64 = now) async throws {
        for index in 0..<count {
            _ = try await cache.recordFirstUse(of: "\(prefix)-\(index)", expiringAt: expiry, now: now)
        }
    }

    @Test func aRecordIsAReplayUntilItExpires() async throws {
        let cache = InMemoryReplayCache()
        #expect(try await cache.recordFirstUse(of: "a", expiringAt: Self.now + 10, now: Self.now))
        #expect(try await !cache.recordFirstUse(of: "a", expiringAt: Self.now + 10, now: Self.now + 9))
        #expect(try await cache.recordFirstUse(of: "a", expiringAt: Self.now + 20, now: Self.now + 10), "unused from its expiry on")
    }

    /// Full of live records, the cache refuses new ones rather than forget any; once some expire it
    /// takes new ones again.
    @Test func aFullCacheRefusesNewRecordsUntilSomeExpire() async throws {
        let cache = InMemoryReplayCache(capacity: 100)
        for index in 0..<100 {
            #expect(try await cache.recordFirstUse(of: "r\(index)", expiringAt: Self.now + (index < 50 ? 10 : 100), now: Self.now))
        }
        await #expect(throws: InMemoryReplayCache.ReplayCacheFull.self) {
            try await cache.recordFirstUse(of: "new", expiringAt: Self.now + 100, now: Self.now + 1)
        }
        #expect(try await !cache.recordFirstUse(of: "r0", expiringAt: Self.now + 100, now: Self.now + 1), "a live record is still a replay")
        #expect(try await cache.recordFirstUse(of: "new", expiringAt: Self.now + 100, now: Self.now + 10), "half of them expired")
        #expect(await cache.count == 51)
        #expect(try await !cache.recordFirstUse(of: "r99", expiringAt: Self.now + 100, now: Self.now + 10))
    }

    /// Expired records leave memory as it grows: 20,000 that expire, then 20,000 recorded after.
    @Test func expiredRecordsAreDroppedAsTheCacheGrows() async throws {
        let cache = InMemoryReplayCache()
        try await Self.fill(cache, "old", count: 20_000, expiringAt: Self.now + 10)
        #expect(await cache.count == 20_000)
        try await Self.fill(cache, "new", count: 20_000, expiringAt: Self.now + 1_000, now: Self.now + 20)
        let count = await cache.count
        #expect(count < 20_000 + 2_000, "the expired ones are gone from memory: \(count) held")
        #expect(try await !cache.recordFirstUse(of: "new-0", expiringAt: Self.now + 1_000, now: Self.now + 30))
    }

    /// No table holds more than a small share of the records (``ExpiringRecordTable``): one dictionary
    /// of them all rehashes every entry at once as it grows, while every verification waits.
    @Test func noTableHoldsMoreThanAShareOfTheRecords() async throws {
        let cache = InMemoryReplayCache()
        try await Self.fill(cache, "id", count: 20_000, expiringAt: Self.now + 1_000)
        #expect(await cache.count == 20_000)
        let largest = await cache.largestTableCount
        #expect(largest <= 20_000 / 64, "the fullest table holds \(largest)")
    }
}
