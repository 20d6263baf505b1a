extension InMemoryReplayCache {
    /// Thrown when the cache holds `capacity` live records: it refuses new records rather than forget
    /// live ones, and ``HTTPMessageVerifier`` answers such a refusal with ``HTTPSignatureError/Code/unavailable``.
    public struct ReplayCacheFull: Error, CustomStringConvertible {
        /// The cache's capacity.
        public let capacity: Int
        /// What a person reads: the capacity, and that the cache takes records again as they expire.
        public var description: String { "the replay cache holds \(capacity) live signatures and accepts no more until some expire" }
    }
}
