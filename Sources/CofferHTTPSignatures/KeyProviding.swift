/// Where a verifier finds the key a signature names in its `keyid`. Implement it over your database;
/// ``HTTPStaticKeys`` serves a fixed set.
public protocol HTTPSignatureKeyProvider: Sendable {
    /// The key registered under `keyID`, or nil when there is none. Throw ``HTTPSignatureError`` with
    /// `.keyRevoked` for a key that exists but may no longer sign (it passes through to the answer);
    /// throw anything else only when the store itself fails (the request is then refused as
    /// `unavailable`, not as a bad signature).
    func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey?
}

/// A fixed set of keys by key id.
public struct HTTPStaticKeys: HTTPSignatureKeyProvider {
    /// The keys.
    public var keys: [String: HTTPVerificationKey]

    /// A set of keys.
    public init(_ keys: [String: HTTPVerificationKey]) {
        self.keys = keys
    }

    public func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey? {
        keys[keyID]
    }
}
