import CofferCore
import Foundation
import CofferCrypto
public import CofferHTTPSignatures

/// Looks keys up in a ``RegistrationStore`` for the verifier, remembering the ones it found: a
/// registered key never changes, so each instance reads it from the database once.
///
/// The cache sits behind a lock rather than in an actor: every signed request reads it, and a hop to an
/// actor's executor per request costs more than the lookup.
public final class StoreKeyProvider: HTTPSignatureKeyProvider, @unchecked Sendable {
    private let store: any RegistrationStore
    private let lock = NSLock()
    private var cache: [String: HTTPVerificationKey] = [:]
    /// The most keys remembered; the cache starts over when full.
    public let capacity: Int

    /// A provider over `store`.
    public init(store: any RegistrationStore, capacity: Int = 100_000) {
        self.store = store
        self.capacity = capacity
    }

    public func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey? {
        if let cached = lock.withLock({ cache[keyID] }) { return cached }
        guard let record = try await store.key(id: keyID) else { return nil }
        let key = try Self.verificationKey(of: record)
        lock.withLock {
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[keyID] = key
        }
        return key
    }

    /// The verification key a stored record describes.
    static func verificationKey(of record: RegisteredKey) throws -> HTTPVerificationKey {
        if let secret = record.secret {
            return .hmacSHA256(secret: try MACKey(bytes: Base64.decode(secret)))
        }
        guard let publicKey = record.publicKey else {
            throw ServerConfigurationError(.invalidRecord, "the stored key '\(record.keyID)' has neither a public key nor a secret")
        }
        return try HTTPVerificationKey(VerifyingKey(derRepresentation: Base64.decode(publicKey)), algorithm: record.algorithm)
    }
}
