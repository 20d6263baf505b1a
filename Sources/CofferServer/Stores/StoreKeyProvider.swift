import CofferCore
import Foundation
import CofferCrypto
public import CofferHTTPSignatures

/// Looks keys up in a ``RegistrationStore`` for the verifier, remembering each answer for at most
/// ``maximumAge``: a key an admin disables or revokes through any instance is refused by every instance
/// within that time (half a second by default), without a database read per request.
///
/// The cache sits behind a lock rather than in an actor: every signed request reads it, and a hop to an
/// actor's executor per request costs more than the lookup.
public final class StoreKeyProvider: HTTPSignatureKeyProvider, @unchecked Sendable {
    private let store: any RegistrationStore
    private let masterKeys: ServerMasterKeyring?
    private let lock = NSLock()
    private var cache: [String: Entry] = [:]
    private let clock: @Sendable () -> ContinuousClock.Instant
    /// The most keys remembered; the cache starts over when full.
    public let capacity: Int
    /// How long an answer from the store is trusted: 0.5 s by default, so that revocation reaches every
    /// instance within a second.
    public let maximumAge: Duration

    private struct Entry {
        let record: RegisteredKey
        let key: HTTPVerificationKey
        let fetched: ContinuousClock.Instant
    }

    /// A provider over `store`.
    /// - Parameters:
    ///   - store: where keys are registered.
    ///   - masterKeys: the master keys that open HMAC secrets stored wrapped (docs/SERVER.md, "The
    ///     master keyring"); a secret is opened once per record read, not per request.
    ///   - capacity: the most keys remembered at once.
    ///   - maximumAge: how long an answer is reused before the store is asked again.
    ///   - clock: the time source (tests pass their own).
    public init(
        store: any RegistrationStore, masterKeys: ServerMasterKeyring? = nil, capacity: Int = 100_000, maximumAge: Duration = .milliseconds(500),
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.store = store
        self.masterKeys = masterKeys
        self.capacity = capacity
        self.maximumAge = maximumAge
        self.clock = clock
    }

    /// The key registered as `keyID`, nil for none.
    /// - Throws: `HTTPSignatureError` `.keyRevoked` for a disabled or revoked key; the store's error
    ///   when it fails; `HTTPSignatureError` `.unavailable` for an HMAC secret wrapped under a master
    ///   key this provider was not given, or that does not open (the request is answered `503`, not
    ///   `401`, and the reason goes to the log).
    public func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey? {
        guard let entry = try await entry(forKeyID: keyID) else { return nil }
        guard entry.record.state == .active else {
            throw HTTPSignatureError(.keyRevoked, "the key '\(keyID)' is \(entry.record.state.rawValue): it no longer signs")
        }
        return entry.key
    }

    /// The stored record of `keyID` as this provider last read it (at most ``maximumAge`` ago), nil for
    /// none: what a route behind the signature check reads about the key that signed, without another
    /// database read.
    public func record(forKeyID keyID: String) async throws -> RegisteredKey? {
        try await entry(forKeyID: keyID)?.record
    }

    private func entry(forKeyID keyID: String) async throws -> Entry? {
        let now = clock()
        if let cached = lock.withLock({ cache[keyID] }), now - cached.fetched < maximumAge { return cached }
        let key: HTTPVerificationKey
        let record: RegisteredKey
        do {
            // An unknown id is not remembered: a key registered a moment ago must work at once.
            guard let stored = try await store.key(id: keyID) else { return nil }
            record = stored
            key = try Self.verificationKey(of: record, masterKeys: masterKeys)
        } catch let error as ServerConfigurationError where [.masterKeyUnavailable, .unauthenticRecord, .invalidRecord].contains(error.code) {
            // `unavailable` keeps its reason in the server's log (which master key is missing, which
            // record was changed outside Coffer) and out of the answer: 503, not 401, since the key is
            // registered and its owner may be fine.
            throw HTTPSignatureError(.unavailable, error.reason, underlying: error)
        }
        let entry = Entry(record: record, key: key, fetched: now)
        lock.withLock {
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[keyID] = entry
        }
        return entry
    }

    /// The verification key a stored record describes, once the record is shown to be Coffer's
    /// (docs/SERVER.md, "Authenticated key records"): with master keys, its tag must match (and a secret
    /// be wrapped); with or without, a `k_` key id must be the one its public key gives. An HMAC secret
    /// is opened with the master key that wraps it (or read in clear where no keyring is held, as
    /// earlier releases stored it).
    static func verificationKey(of record: RegisteredKey, masterKeys: ServerMasterKeyring?) throws -> HTTPVerificationKey {
        if let masterKeys { try KeyRecordTag.check(record, keyring: masterKeys) }
        if record.publicKey != nil && record.secret != nil {
            throw ServerConfigurationError(.invalidRecord, "the stored key '\(record.keyID.clipped(toUTF8: 80))' has both a public key and a secret")
        }
        if let stored = record.secret {
            var secret = try WrappedSecret.open(stored, keyID: record.keyID, keyring: masterKeys)
            defer { SecretBytes.wipe(&secret) }
            return .hmacSHA256(secret: try MACKey(bytes: secret))
        }
        guard let publicKey = record.publicKey else {
            throw ServerConfigurationError(.invalidRecord, "the stored key '\(record.keyID)' has neither a public key nor a secret")
        }
        let verifying = try VerifyingKey(derRepresentation: Base64.decode(publicKey))
        // The id a public key is registered under is its own fingerprint: a row whose public key was
        // swapped for another keeps an id that no longer names it. (Ids of other shapes were given by
        // 1.0.0, before ids were fingerprints.)
        if record.keyID.hasPrefix("k_"), verifying.fingerprint.registeredKeyID != record.keyID {
            throw ServerConfigurationError(.unauthenticRecord, "the stored key '\(record.keyID.clipped(toUTF8: 80))' holds a public key whose id is \(verifying.fingerprint.registeredKeyID): it was changed outside Coffer")
        }
        return try HTTPVerificationKey(verifying, algorithm: record.algorithm)
    }
}

/// Records when keys were last used, at most once a minute per key and instance: the admin listing
/// shows `lastUsedAt` to the minute without a database write per request.
final class KeyUseRecorder: @unchecked Sendable {
    private let store: any RegistrationStore
    private let lock = NSLock()
    private var recorded: [String: Int64] = [:]

    init(store: any RegistrationStore) {
        self.store = store
    }

    /// Notes an accepted signature by `keyID` now; writes only when this minute was not yet written.
    func noteUse(of keyID: String, now: Int64 = Int64(Date().timeIntervalSince1970)) async throws {
        let minute = now - now % 60
        let due = lock.withLock { () -> Bool in
            guard recorded[keyID] != minute else { return false }
            if recorded.count >= 100_000 { recorded.removeAll(keepingCapacity: true) }
            recorded[keyID] = minute
            return true
        }
        if due { try await store.recordUse(ofKey: keyID, at: minute) }
    }
}
