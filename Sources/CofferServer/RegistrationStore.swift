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
    /// The HMAC secret for `hmac-sha256` as stored: wrapped under a master key
    /// (`wrapped-v1:<master key id>:…`, docs/SERVER.md, "The master keyring"), or base64 in clear (as
    /// earlier releases and instances without a master key store it); nil for a key pair.
    public let secret: String?
    /// When it was registered, UNIX seconds.
    public let createdAt: Int64
    /// Whether it may sign: active, disabled (until enabled again) or revoked (for good).
    public let state: State
    /// When a signature by it was last accepted, UNIX seconds, to the minute; nil before its first use.
    public let lastUsedAt: Int64?
    /// The device's encryption public key (X25519 or P-256 SubjectPublicKeyInfo DER, base64), which its
    /// data keys are sealed to; nil when it registered none.
    public let encryptionKey: String?
    /// The user this device belongs to (docs/SERVER.md, "Data keys"): the user it signed up through
    /// `POST /register_user`, or the one an admin linked it to; nil for none.
    public let userID: Int64?

    /// Whether a registered key may sign.
    public enum State: String, Sendable, Hashable, CaseIterable, Codable {
        /// It signs.
        case active
        /// An admin stopped it; an admin can enable it again.
        case disabled
        /// An admin withdrew it for good: it never signs again, and cannot be enabled.
        case revoked
    }

    /// A key record.
    /// - Parameters:
    ///   - keyID: the id clients put in `keyid`.
    ///   - algorithm: the algorithm bound to the key.
    ///   - publicKey: SPKI DER, base64, for a key pair.
    ///   - secret: the HMAC secret, base64, for a shared secret.
    ///   - createdAt: registration time, UNIX seconds.
    ///   - state: active unless told otherwise.
    ///   - lastUsedAt: the last accepted signature's time, if any.
    ///   - encryptionKey: the device's encryption public key, SPKI DER base64, if any.
    ///   - userID: the user the device belongs to, if any.
    public init(
        keyID: String, algorithm: HTTPSignatureAlgorithm, publicKey: String?, secret: String?, createdAt: Int64,
        state: State = .active, lastUsedAt: Int64? = nil, encryptionKey: String? = nil, userID: Int64? = nil
    ) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.secret = secret
        self.createdAt = createdAt
        self.state = state
        self.lastUsedAt = lastUsedAt
        self.encryptionKey = encryptionKey
        self.userID = userID
    }
}

/// One version of a device's data key as stored: wrapped under the server's master key (AES-256-GCM,
/// bound to owner, version and id), with that master key's id, so the database alone reveals nothing.
public struct StoredDataKey: Sendable, Hashable {
    /// Whose key it is: the device's key id.
    public let owner: String
    /// Its version, from 1.
    public let version: Int64
    /// Its public id (`dk_…`), the same for every version of one owner's key.
    public let dataKeyID: String
    /// nonce ‖ ciphertext ‖ tag, base64.
    public let wrapped: String
    /// The id of the master key that wrapped it.
    public let masterKeyID: String
    /// When it was made, UNIX seconds.
    public let createdAt: Int64

    /// A stored data key.
    /// - Parameters:
    ///   - owner: the device's key id.
    ///   - version: the version, from 1.
    ///   - dataKeyID: the key's public id.
    ///   - wrapped: the wrapped key, base64.
    ///   - masterKeyID: the wrapping master key's id.
    ///   - createdAt: creation time, UNIX seconds.
    public init(owner: String, version: Int64, dataKeyID: String, wrapped: String, masterKeyID: String, createdAt: Int64) {
        self.owner = owner
        self.version = version
        self.dataKeyID = dataKeyID
        self.wrapped = wrapped
        self.masterKeyID = masterKeyID
        self.createdAt = createdAt
    }
}

/// What answering a data-key request needs from the store, read at once: the oldest version still
/// handed out, the newest version, and the version asked for (or the newest).
public struct DataKeyLookup: Sendable, Hashable {
    /// The oldest version still handed out (1 when none was retired).
    public let minimumVersion: Int64
    /// The newest version stored; nil when the owner has no key yet.
    public let newestVersion: Int64?
    /// The version asked for, or the newest when none was named; nil when there is no such version.
    public let key: StoredDataKey?

    /// A lookup's result.
    /// - Parameters:
    ///   - minimumVersion: the oldest version still handed out.
    ///   - newestVersion: the newest version stored, if any.
    ///   - key: the version asked for (or the newest), if stored.
    public init(minimumVersion: Int64, newestVersion: Int64?, key: StoredDataKey?) {
        self.minimumVersion = minimumVersion
        self.newestVersion = newestVersion
        self.key = key
    }
}

/// A registration token an admin issued: `POST /register` accepts it `usesLeft` more times until
/// `expiresAt`, optionally only for one platform label. The token itself is shown once, when issued;
/// the store keeps its SHA-256 only.
public struct RegistrationToken: Sendable, Hashable {
    /// The token's public id (for listing and revoking; not the token).
    public let tokenID: String
    /// How many registrations it allows in all.
    public let uses: Int
    /// How many it still allows.
    public let usesLeft: Int
    /// When it stops working, UNIX seconds.
    public let expiresAt: Int64
    /// The platform label a registration with it must give, if any ("ios", "android"…).
    public let platform: String?
    /// Whether an admin revoked it.
    public let revoked: Bool
    /// When it was issued, UNIX seconds.
    public let createdAt: Int64

    /// A token record.
    /// - Parameters:
    ///   - tokenID: its public id.
    ///   - uses: registrations allowed in all.
    ///   - usesLeft: registrations still allowed.
    ///   - expiresAt: expiry, UNIX seconds.
    ///   - platform: the platform label it is bound to, if any.
    ///   - revoked: whether it was revoked.
    ///   - createdAt: issue time, UNIX seconds.
    public init(tokenID: String, uses: Int, usesLeft: Int, expiresAt: Int64, platform: String?, revoked: Bool, createdAt: Int64) {
        self.tokenID = tokenID
        self.uses = uses
        self.usesLeft = usesLeft
        self.expiresAt = expiresAt
        self.platform = platform
        self.revoked = revoked
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
    /// Brings the schema to this version of Coffer's, applying each numbered migration not yet applied
    /// in order (safe to call from several instances at once: one applies, the others find it done).
    func migrate() async throws
    /// Stores a key; when a key with the same id exists, stores nothing and returns the existing one.
    func insertKey(_ key: RegisteredKey) async throws -> RegisteredKey
    /// The key with this id.
    func key(id: String) async throws -> RegisteredKey?
    /// Stores a user and links the key that signed up to it when that key belongs to no user yet (in
    /// one transaction); nil when the e-mail address is already registered.
    func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser?
    /// Writes a signature's replay record and, when this is its first use, stores the user as
    /// ``insertUser(email:name:keyID:createdAt:)`` does — together: the request takes effect and is
    /// remembered, or neither (a failed write leaves the request free to be sent again). A default
    /// implementation writes the two one after the other; Coffer's stores write them in one transaction.
    func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion
    /// Every registered key, oldest first (at most `limit`).
    func keys(limit: Int) async throws -> [RegisteredKey]
    /// Changes a key's state and returns the record as stored afterwards; nil when there is no such
    /// key. A revoked key stays revoked whatever is asked.
    func setState(_ state: RegisteredKey.State, ofKey keyID: String) async throws -> RegisteredKey?
    /// Links a key (a device) to a user, whichever user it belonged to before; the record afterwards, or
    /// nil when there is no such key or no such user.
    func linkKey(_ keyID: String, toUser userID: Int64) async throws -> RegisteredKey?
    /// Records that a signature by the key was accepted at `time` (callers do so at most once a minute).
    func recordUse(ofKey keyID: String, at time: Int64) async throws
    /// Stores a new token under the SHA-256 of its secret (hex).
    func insertToken(_ token: RegistrationToken, secretHash: String) async throws
    /// Uses the token whose secret hashes to `secretHash` once, atomically across instances: nil when
    /// it is unknown, revoked, expired, used up, or bound to another platform than `platform`.
    func consumeToken(secretHash: String, platform: String?, now: Int64) async throws -> RegistrationToken?
    /// Every token, newest first (at most `limit`).
    func tokens(limit: Int) async throws -> [RegistrationToken]
    /// Revokes a token; false when there is none with this id.
    func revokeToken(id tokenID: String) async throws -> Bool
    /// The owner's data key at `version`, or its newest when `version` is nil; nil when there is none.
    func dataKey(owner: String, version: Int64?) async throws -> StoredDataKey?
    /// Stores a data key version unless that (owner, version) exists, and returns the one stored: of two
    /// instances making an owner's first key at once, both answer with the same key. Written only when
    /// its master key is the one the database records as wrapping (checked in the same statement): nil
    /// when that check failed and no such version is stored.
    func insertDataKey(_ key: StoredDataKey) async throws -> StoredDataKey?
    /// The oldest version of the owner's data key still handed out (1 when none was retired).
    func minimumDataKeyVersion(owner: String) async throws -> Int64
    /// The floor, the newest version and the version asked for (the newest when `version` is nil) of
    /// the owner's data key, read together. A default implementation composes ``minimumDataKeyVersion(owner:)``
    /// and ``dataKey(owner:version:)``; Coffer's stores answer in one read.
    func lookUpDataKey(owner: String, version: Int64?) async throws -> DataKeyLookup
    /// Retires the owner's versions below `version` (never lowers the floor).
    func setMinimumDataKeyVersion(_ version: Int64, owner: String) async throws
    /// The master keyring the database records (docs/SERVER.md, "The master keyring"), oldest change
    /// first; empty until a keyed instance has started.
    /// - Throws: ``ServerConfigurationError`` `.invalidRecord` for a state this release does not know.
    func masterKeyring() async throws -> [MasterKeyRecord]
    /// Makes `keyID` the wrapping key when the one recorded now is `expected` (nil: none is recorded),
    /// the key it replaces becoming previous, and gives each of `states`' keys its state — in one
    /// transaction, serialized with every other keyring change. False, and nothing changed, when the
    /// recorded wrapping key is not `expected`.
    func changeMasterKeyring(wrapping keyID: String, replacing expected: String?, setting states: [String: MasterKeyRecord.State], at time: Int64) async throws -> Bool
    /// How many data keys and HMAC secrets each master key wraps, and how many secrets are in clear
    /// (a scan of both tables: for starting on a database no keyed instance has used, and for
    /// operators).
    func masterKeyUsage() async throws -> MasterKeyUsage
    /// The number of the newest migration applied (``migrate()`` brings it to this Coffer's).
    func schemaVersion() async throws -> Int
    /// Checks that the store answers.
    func ping() async throws
    /// Releases connections.
    func close() async throws
}

/// What ``RegistrationStore/insertUser(email:name:keyID:createdAt:recordingFirstUse:)`` did.
public enum UserInsertion: Sendable, Hashable {
    /// The user was stored (and the replay record written).
    case inserted(RegisteredUser)
    /// The e-mail address is already registered; the replay record was written, no user.
    case emailExists
    /// The replay record was already there: nothing was written.
    case replayed
}

extension RegistrationStore {
    /// Writes the replay record, then the user: two writes, for a custom store that has no transaction
    /// holding both (a failure between them leaves the record written and no user).
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion {
        guard try await recordFirstUse(of: replay.identifier, expiringAt: replay.expiry, now: replay.now) else { return .replayed }
        guard let user = try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt) else { return .emailExists }
        return .inserted(user)
    }

    /// Composes ``minimumDataKeyVersion(owner:)`` and ``dataKey(owner:version:)`` (two or three reads,
    /// not one snapshot): for a custom store that has no single read for it.
    public func lookUpDataKey(owner: String, version: Int64?) async throws -> DataKeyLookup {
        let floor = try await minimumDataKeyVersion(owner: owner)
        let newest = try await dataKey(owner: owner, version: nil)
        guard let version else { return DataKeyLookup(minimumVersion: floor, newestVersion: newest?.version, key: newest) }
        return DataKeyLookup(minimumVersion: floor, newestVersion: newest?.version, key: try await dataKey(owner: owner, version: version))
    }
}

/// The SQL both stores run (SQLite 3.35+ and PostgreSQL 9.5+ read the same statements).
enum RegistrationSQL {
    static let keyColumns = "key_id, algorithm, public_key, secret, created_at, state, last_used_at, encryption_key, user_id"
    static let dataKeyColumns = "owner, version, data_key_id, wrapped, master_key_id, created_at"
    static let tokenColumns = "token_id, uses, uses_left, expires_at, platform, revoked, created_at"
    /// How often (one insert in this many) expired replay records are swept.
    static let sweepInterval = 1000

    /// The schema's history: migration N (1-based) is `migrations[N - 1]`, applied once, in order, in
    /// one transaction with the row that records it in `coffer_schema`. Never edit one that has
    /// shipped; add the next.
    static let migrations: [[String]] = [
        // 1: keys, users, replay records (what Coffer created before migrations were numbered; IF NOT
        // EXISTS lets a database from then pass through it unchanged).
        [
            "CREATE TABLE IF NOT EXISTS coffer_keys (key_id TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT, secret TEXT, created_at BIGINT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS coffer_users (id %SERIAL%, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL, key_id TEXT NOT NULL REFERENCES coffer_keys(key_id), created_at BIGINT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS coffer_replay (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS coffer_replay_expiry ON coffer_replay (expires_at)",
        ],
        // 2: the allow-list: key state and last use; registration tokens (their SHA-256 only).
        [
            "ALTER TABLE coffer_keys ADD COLUMN state TEXT NOT NULL DEFAULT 'active'",
            "ALTER TABLE coffer_keys ADD COLUMN last_used_at BIGINT",
            "CREATE TABLE coffer_tokens (token_id TEXT PRIMARY KEY, secret_hash TEXT NOT NULL UNIQUE, uses BIGINT NOT NULL, uses_left BIGINT NOT NULL, expires_at BIGINT NOT NULL, platform TEXT, revoked BIGINT NOT NULL DEFAULT 0, created_at BIGINT NOT NULL)",
        ],
        // 3: per-device data keys: the device's encryption key; data keys wrapped under the master key.
        [
            "ALTER TABLE coffer_keys ADD COLUMN encryption_key TEXT",
            "CREATE TABLE coffer_data_keys (owner TEXT NOT NULL, version BIGINT NOT NULL, data_key_id TEXT NOT NULL, wrapped TEXT NOT NULL, master_key_id TEXT NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (owner, version))",
            "CREATE TABLE coffer_data_key_floors (owner TEXT PRIMARY KEY, min_version BIGINT NOT NULL)",
        ],
        // 4: per-user data keys: the user a device belongs to.
        [
            "ALTER TABLE coffer_keys ADD COLUMN user_id BIGINT",
        ],
        // 5: SQLite's replay records in commit order (``sqliteOnlyMigrations``); nothing on PostgreSQL.
        [],
        // 6: the master keyring: each master key id the fleet wraps or wrapped with, at most one of them
        // wrapping; data keys findable by the key that wraps them (for rewrap and retirement).
        [
            "CREATE TABLE coffer_master_keyring (key_id TEXT PRIMARY KEY, state TEXT NOT NULL, changed_at BIGINT NOT NULL)",
            "CREATE UNIQUE INDEX coffer_master_keyring_one_wrapping ON coffer_master_keyring (state) WHERE state = 'wrapping'",
            "CREATE INDEX coffer_data_keys_master_key ON coffer_data_keys (master_key_id)",
        ],
    ]

    /// Statements SQLite runs after the shared ones of the same migration.
    ///
    /// 5: replay records appended in commit order (``SQLiteReplayLedger``): no index but the row id,
    /// so that a transaction's records share the table's last page. The records of the table keyed by
    /// identity are copied over (a request accepted before the upgrade stays a replay after it);
    /// `coffer_replay` is left as it is for instances not yet upgraded.
    static let sqliteOnlyMigrations: [Int: [String]] = [
        5: [
            "CREATE TABLE coffer_replay_log (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, expires_at BIGINT NOT NULL)",
            "INSERT INTO coffer_replay_log (id, expires_at) SELECT id, expires_at FROM coffer_replay ORDER BY expires_at",
        ],
    ]

    static let schemaTable = "CREATE TABLE IF NOT EXISTS coffer_schema (version BIGINT NOT NULL)"
    /// The schema version this Coffer needs.
    static var latestVersion: Int { migrations.count }

    /// A data key, written only under the master key the keyring records as wrapping.
    static let insertDataKey = """
        INSERT INTO coffer_data_keys (\(dataKeyColumns)) SELECT $1, $2, $3, $4, $5, $6
        WHERE EXISTS (SELECT 1 FROM coffer_master_keyring WHERE key_id = $5 AND state = 'wrapping')
        ON CONFLICT (owner, version) DO NOTHING
        """
    /// The floor, the newest version and the asked version's row (the newest's when $2 is NULL), as one
    /// row even when the owner has nothing stored.
    static let lookUpDataKey = """
        SELECT (SELECT min_version FROM coffer_data_key_floors WHERE owner = $1),
               (SELECT max(version) FROM coffer_data_keys WHERE owner = $1),
               k.owner, k.version, k.data_key_id, k.wrapped, k.master_key_id, k.created_at
        FROM (SELECT 1 AS one) AS one
        LEFT JOIN coffer_data_keys AS k
          ON k.owner = $1 AND k.version = COALESCE(CAST($2 AS BIGINT), (SELECT max(version) FROM coffer_data_keys WHERE owner = $1))
        """
    static let raiseFloor = """
        INSERT INTO coffer_data_key_floors (owner, min_version) VALUES ($1, $2)
        ON CONFLICT (owner) DO UPDATE SET min_version = excluded.min_version WHERE coffer_data_key_floors.min_version < excluded.min_version
        """

    /// Links the key that signed a user up to that user, unless it belongs to one already.
    static let linkFirstUser = "UPDATE coffer_keys SET user_id = $1 WHERE key_id = $2 AND user_id IS NULL"
    /// Links a key to a user that exists.
    static let linkKey = "UPDATE coffer_keys SET user_id = $1 WHERE key_id = $2 AND EXISTS (SELECT 1 FROM coffer_users WHERE id = $1)"
    /// A state change that never takes a key out of `revoked`.
    static let setState = "UPDATE coffer_keys SET state = $1 WHERE key_id = $2 AND state <> 'revoked'"
    static let recordUse = "UPDATE coffer_keys SET last_used_at = $1 WHERE key_id = $2 AND (last_used_at IS NULL OR last_used_at < $1)"
    static let consumeToken = """
        UPDATE coffer_tokens SET uses_left = uses_left - 1
        WHERE secret_hash = $1 AND uses_left > 0 AND revoked = 0 AND expires_at > $2 AND (platform IS NULL OR platform = $3)
        RETURNING \(tokenColumns)
        """
}
