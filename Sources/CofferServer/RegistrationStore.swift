public import CofferHTTPSignatures

/// A key registered with the server: its id, the one algorithm it signs with, and either an SPKI public
/// key or an HMAC secret (base64 in storage).
public struct RegisteredKey: Sendable, Hashable {
    /// The id clients put in `keyid`.
    public let keyID: String
    /// The algorithm bound to the key.
    public let algorithm: HTTPSignatureAlgorithm
    /// The SubjectPublicKeyInfo DER, base64, for a key pair; nil for a shared secret.
    public let publicKey: String?
    /// The HMAC secret, base64, for `hmac-sha256`; nil for a key pair.
    public let secret: String?
    /// When it was registered, UNIX seconds.
    public let createdAt: Int64

    /// A key record.
    public init(keyID: String, algorithm: HTTPSignatureAlgorithm, publicKey: String?, secret: String?, createdAt: Int64) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.secret = secret
        self.createdAt = createdAt
    }
}

/// A user registered through a signed request.
public struct RegisteredUser: Sendable, Hashable, Codable {
    /// The user's number.
    public let id: Int64
    /// The e-mail address (unique).
    public let email: String
    /// The name.
    public let name: String
    /// The key that signed the registration.
    public let keyID: String
}

/// Where the registration server keeps registered keys, users and its replay cache. SQLite serves one
/// instance; PostgreSQL lets several instances behind a load balancer share all three, so a request
/// accepted by one is a replay at every other.
public protocol RegistrationStore: HTTPSignatureReplayCache {
    /// Creates the tables if they do not exist (safe to call from several instances at once).
    func migrate() async throws
    /// Stores a key; when a key with the same id exists, stores nothing and returns the existing one.
    func insertKey(_ key: RegisteredKey) async throws -> RegisteredKey
    /// The key with this id.
    func key(id: String) async throws -> RegisteredKey?
    /// Stores a user; nil when the e-mail address is already registered.
    func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser?
    /// Checks that the store answers.
    func ping() async throws
    /// Releases connections.
    func close() async throws
}

/// The SQL both stores run (SQLite 3.35+ and PostgreSQL 9.5+ read the same statements).
enum RegistrationSQL {
    static let keyColumns = "key_id, algorithm, public_key, secret, created_at"
    static let replayInsert = """
        INSERT INTO coffer_replay (id, expires_at) VALUES ($1, $2)
        ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE coffer_replay.expires_at <= $3
        RETURNING id
        """
    /// How often (one insert in this many) expired replay records are swept.
    static let sweepInterval = 1000
}
