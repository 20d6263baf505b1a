import Foundation

/// A token bucket per client address: each address may spend `perMinute` tokens in a burst, and gets them
/// back at `perMinute` per minute. For bounding what one client can make the server do that costs it and
/// gains the client nothing when refused: registrations, and guesses at signatures.
///
/// At most ``maximumAddresses`` buckets are kept; beyond that, buckets that have filled up again are
/// forgotten first (a full bucket is the same as none), then all of them.
public final class AddressRateLimiter: @unchecked Sendable {
    /// Tokens per minute per address, which is also the burst.
    public let perMinute: Int
    /// The most addresses tracked at once.
    public let maximumAddresses: Int
    private let now: @Sendable () -> Double
    private let lock = NSLock()
    private var buckets: [String: (tokens: Double, updated: Double)] = [:]

    /// A limiter allowing `perMinute` events per address per minute (at least 1).
    /// - Parameters:
    ///   - perMinute: events allowed per address per minute; bursts of as many are allowed.
    ///   - maximumAddresses: the most addresses tracked; the least recently seen are forgotten beyond it.
    ///   - now: the clock, in seconds (monotonic by default); tests inject their own.
    public init(perMinute: Int, maximumAddresses: Int = 100_000, now: @escaping @Sendable () -> Double = AddressRateLimiter.monotonicSeconds) {
        self.perMinute = max(1, perMinute)
        self.maximumAddresses = max(1, maximumAddresses)
        self.now = now
    }

    /// Seconds on the monotonic clock.
    public static func monotonicSeconds() -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static let start = ContinuousClock.now

    private var rate: Double { Double(perMinute) / 60 }

    /// Spends one token of `address`: nil when there was one, else how many whole seconds until there is.
    public func take(_ address: String) -> Int? {
        lock.withLock {
            var bucket = refilled(address)
            defer { store(address, bucket) }
            guard bucket.tokens >= 1 else { return retryAfter(bucket) }
            bucket.tokens -= 1
            return nil
        }
    }

    /// How many whole seconds until `address` has a token again, or nil when it has one now (nothing spent).
    public func retryAfter(_ address: String) -> Int? {
        lock.withLock {
            let bucket = refilled(address)
            return bucket.tokens >= 1 ? nil : retryAfter(bucket)
        }
    }

    private func retryAfter(_ bucket: (tokens: Double, updated: Double)) -> Int {
        max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
    }

    private func refilled(_ address: String) -> (tokens: Double, updated: Double) {
        let time = now()
        guard let bucket = buckets[address] else { return (Double(perMinute), time) }
        return (min(Double(perMinute), bucket.tokens + max(0, time - bucket.updated) * rate), time)
    }

    private func store(_ address: String, _ bucket: (tokens: Double, updated: Double)) {
        buckets[address] = bucket
        guard buckets.count > maximumAddresses else { return }
        let time = now()
        buckets = buckets.filter { $0.value.tokens + (time - $0.value.updated) * rate < Double(perMinute) }
        if buckets.count > maximumAddresses { buckets = [address: bucket] }
    }
}
