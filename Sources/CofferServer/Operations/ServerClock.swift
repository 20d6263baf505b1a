import Foundation

/// The time the registration server reads: every route asks this clock, never `Date()`, so that a test
/// can hold time still (``held(atSeconds:)``) and what it checks holds however slowly the machine runs.
///
/// Two readings, for two uses: ``wallSeconds`` is the time recorded and compared with recorded times
/// (a key's `createdAt`, a token's `expiresAt`, the per-hour limits counted in the database);
/// ``monotonicSeconds`` refills the per-address limits, and never runs backwards.
public struct ServerClock: Sendable {
    /// Seconds since 1970-01-01 UTC.
    public var wallSeconds: @Sendable () -> Int64
    /// Seconds on a monotonic clock, from an arbitrary origin.
    public var monotonicSeconds: @Sendable () -> Double

    /// A clock from its two readings.
    public init(wallSeconds: @escaping @Sendable () -> Int64, monotonicSeconds: @escaping @Sendable () -> Double) {
        self.wallSeconds = wallSeconds
        self.monotonicSeconds = monotonicSeconds
    }

    /// The system's clocks: the wall clock, and ``AddressRateLimiter/monotonicSeconds()``.
    public static var system: ServerClock {
        ServerClock(wallSeconds: { Int64(Date().timeIntervalSince1970) }, monotonicSeconds: AddressRateLimiter.monotonicSeconds)
    }

    /// A clock that stands still: the wall clock at `seconds` since 1970, the monotonic clock at 0.
    public static func held(atSeconds seconds: Int64) -> ServerClock {
        ServerClock(wallSeconds: { seconds }, monotonicSeconds: { 0 })
    }
}
