// One file on purpose: the store protocol, the value types it speaks and the SQL both stores share,
// which change together whenever a migration is added.

public import CofferHTTPSignatures
public import CofferServerWire
import Foundation

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
    /// Which record of user ``userID`` the device was linked to (the SHA-256, hex, of the bytes the
    /// user record's tag authenticates; docs/SERVER.md, "Authenticated key records"), so that a user number given
    /// again does not make the device a member of the new user; nil for none, and for links made by an
    /// instance without master keys or an earlier release.
    public let userBinding: String?
    /// The record's authentication tag (docs/SERVER.md, "Authenticated key records"): made under the
    /// master keyring over every field above but ``lastUsedAt``; nil where the instance that wrote it
    /// held no master key.
    public let tag: String?

    /// Whether a registered key may sign: the admin API's `KeyState` (CofferServerWire), one type on
    /// the server and its clients.
    public typealias State = KeyState

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
    ///   - userBinding: which record of that user it was linked to, if known.
    ///   - tag: the record's authentication tag, if any.
    public init(
        keyID: String, algorithm: HTTPSignatureAlgorithm, publicKey: String?, secret: String?, createdAt: Int64,
        state: State = .active, lastUsedAt: Int64? = nil, encryptionKey: String? = nil, userID: Int64? = nil, userBinding: String? = nil, tag: String? = nil
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
        self.userBinding = userBinding
        self.tag = tag
    }

    /// This record without its tag: what a change by an instance without master keys stores.
    var untagged: RegisteredKey {
        RegisteredKey(
            keyID: keyID, algorithm: algorithm, publicKey: publicKey, secret: secret, createdAt: createdAt, state: state, lastUsedAt: lastUsedAt,
            encryptionKey: encryptionKey, userID: userID, userBinding: userBinding
        )
    }

    /// This record with the fields given replaced (the tag kept unless replaced: a changed record is
    /// tagged again by ``KeyRecordTagging/tagged(_:)``).
    func replacing(
        secret: String? = nil, state: State? = nil, lastUsedAt: Int64? = nil, encryptionKey: String? = nil, userID: Int64? = nil,
        userBinding: String? = nil, tag: String? = nil
    ) -> RegisteredKey {
        RegisteredKey(
            keyID: keyID, algorithm: algorithm, publicKey: publicKey, secret: secret ?? self.secret, createdAt: createdAt, state: state ?? self.state,
            lastUsedAt: lastUsedAt ?? self.lastUsedAt, encryptionKey: encryptionKey ?? self.encryptionKey, userID: userID ?? self.userID,
            userBinding: userBinding ?? self.userBinding, tag: tag ?? self.tag
        )
    }

    /// This record linked to user `userID`, as the record `binding` names (nil for none: the link of an
    /// instance without master keys).
    func linked(toUser userID: Int64, binding: String?) -> RegisteredKey {
        RegisteredKey(
            keyID: keyID, algorithm: algorithm, publicKey: publicKey, secret: secret, createdAt: createdAt, state: state, lastUsedAt: lastUsedAt,
            encryptionKey: encryptionKey, userID: userID, userBinding: binding, tag: tag
        )
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

/// A user registered through a signed request (docs/SERVER.md, "Users"): a claim the server does not
/// verify, which makes no device a member until an admin links one.
public struct RegisteredUser: Sendable, Hashable, Codable {
    /// The user's number.
    public let id: Int64
    /// The e-mail address, normalized (NFC, domain lowercased); unique compared case-insensitively.
    public let email: String
    /// The name.
    public let name: String
    /// The key that signed the user up (the creator, not a member).
    public let keyID: String
    /// When the user was signed up, UNIX seconds.
    public let createdAt: Int64
    /// The record's authentication tag (docs/SERVER.md, "Authenticated key records"): made under the
    /// master keyring over the fields above; nil where the instance that wrote it held no master key.
    public var tag: String?
}

/// A registration token offered with a key's registration: what ``RegistrationStore/registerKey(_:spending:)``
/// checks and spends together with the key's insert.
public struct TokenUse: Sendable, Hashable {
    /// The SHA-256 of the token's secret, hex.
    public let secretHash: String
    /// The platform label the request gave, if any (a token bound to a platform needs the same).
    public let platform: String?
    /// The time the token must not have expired by, UNIX seconds.
    public let now: Int64

    /// A token offered at `now` for a request naming `platform`.
    /// - Parameters:
    ///   - secretHash: the SHA-256 of the token's secret, hex.
    ///   - platform: the request's platform label, if any.
    ///   - now: the current time, UNIX seconds.
    public init(secretHash: String, platform: String?, now: Int64) {
        self.secretHash = secretHash
        self.platform = platform
        self.now = now
    }
}

/// What ``RegistrationStore/registerKey(_:spending:)`` did, in one transaction.
public enum KeyRegistration: Sendable, Hashable {
    /// The key was stored, its `registered` event written, and one use of the token (if any) spent.
    case registered(RegisteredKey)
    /// A key with this id was already registered (the record as stored): nothing was written and no
    /// token spent. The token, when one was offered, is valid.
    case exists(RegisteredKey)
    /// The token offered is unknown, revoked, expired, used up, or bound to another platform: nothing
    /// was written and nothing said about the key.
    case invalidToken
    /// The key's secret is wrapped under a master key that is no longer the keyring's wrapping key (a
    /// promotion happened meanwhile), or is in clear while the database records a keyring (it was
    /// recorded after a keyless instance started): nothing was written.
    case wrappingKeyChanged
}

/// One change in a key's record, kept in its history (docs/SERVER.md, "Admin API").
public struct KeyEvent: Sendable, Hashable {
    /// What changed: the admin API's `KeyEventKind` (CofferServerWire), one type on the server and its
    /// clients.
    public typealias Kind = KeyEventKind

    /// The key whose record changed.
    public let keyID: String
    /// When, UNIX seconds.
    public let at: Int64
    /// What changed.
    public let kind: Kind
    /// Who changed it: `key:<keyId>` (the key itself), `admin:<keyId>`, or `migration`.
    public let actor: String
    /// What it became, for people; nil where the kind says all.
    public let detail: String?

    /// An event.
    /// - Parameters:
    ///   - keyID: the key whose record changed.
    ///   - at: when, UNIX seconds.
    ///   - kind: what changed.
    ///   - actor: who changed it.
    ///   - detail: what it became, if the kind does not say.
    public init(keyID: String, at: Int64, kind: Kind, actor: String, detail: String?) {
        self.keyID = keyID
        self.at = at
        self.kind = kind
        self.actor = actor
        self.detail = detail
    }
}

/// How much of something happened in a window: what a limit counted across instances, and when the
/// oldest of it happened (so a refusal can say when to try again).
public struct RecentActivity: Sendable, Hashable {
    /// How many.
    public let count: Int
    /// When the oldest happened, UNIX seconds; nil when none did.
    public let oldest: Int64?

    /// A count and the oldest time.
    /// - Parameters:
    ///   - count: how many.
    ///   - oldest: the oldest one's time, UNIX seconds, if any.
    public init(count: Int, oldest: Int64?) {
        self.count = count
        self.oldest = oldest
    }
}

/// What ``RegistrationStore/setEncryptionKey(_:ofKey:at:)`` did.
public struct EncryptionKeyChange: Sendable, Hashable {
    /// The key's record afterwards.
    public let key: RegisteredKey
    /// The encryption key it had before (SPKI DER, base64), if any.
    public let previous: String?
    /// Whether anything changed (false when it already had this encryption key).
    public var changed: Bool { previous != key.encryptionKey }

    /// A change's outcome.
    /// - Parameters:
    ///   - key: the record afterwards.
    ///   - previous: the encryption key before, if any.
    public init(key: RegisteredKey, previous: String?) {
        self.key = key
        self.previous = previous
    }
}

/// What ``RegistrationStore/setEncryptionKey(_:ofKey:at:changesPerHour:)`` did, in one transaction.
public enum EncryptionKeyChangeOutcome: Sendable, Hashable {
    /// The key has this encryption key now: it was stored with its `encryption-key` event, or the key
    /// already had it (``EncryptionKeyChange/changed`` false: nothing written, nothing counted).
    case set(EncryptionKeyChange)
    /// The key's encryption key changed as many times in the hour before the request as the limit allows
    /// (their count and the oldest's time): nothing was written.
    case limited(RecentActivity)
    /// There is no key with this id: nothing was written.
    case unknownKey
}

/// Where the registration server keeps registered keys, users and its replay cache. SQLite serves one
/// instance; PostgreSQL lets several instances behind a load balancer share all three, so a request
/// accepted by one is a replay at every other.
public protocol RegistrationStore: HTTPSignatureReplayCache {
    /// Brings the schema to this version of Coffer's, applying each numbered migration not yet applied
    /// in order (safe to call from several instances at once: one applies, the others find it done).
    func migrate() async throws
    /// Migrates as ``migrate()`` does and answers the numbers of the migrations this call applied (none
    /// when another instance applied them first), for the log. A default implementation compares the
    /// schema version before and after, which counts another instance's work as its own; Coffer's stores
    /// answer from inside the migration lock.
    func applyMigrations() async throws -> [Int]
    /// Registers a key, in one transaction with the check and the use of `token` (docs/SERVER.md, "Who
    /// may register"): when the token is offered and not valid, nothing is written; when a key with the
    /// same id exists, nothing is written and no use spent; otherwise the key and its `registered`
    /// event are stored and one use of the token spent. Of several registrations of one key at once,
    /// across instances, exactly one stores it. A secret wrapped under a master key is stored only while
    /// that key is the keyring's wrapping key, checked in the same transaction.
    func registerKey(_ key: RegisteredKey, spending token: TokenUse?) async throws -> KeyRegistration
    /// The key with this id.
    func key(id: String) async throws -> RegisteredKey?
    /// Sets the device's encryption key (SPKI DER, base64) and, when it changed, writes an
    /// `encryption-key` event by the key itself, in one transaction; nil when there is no such key.
    func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64) async throws -> EncryptionKeyChange?
    /// Sets the device's encryption key as ``setEncryptionKey(_:ofKey:at:)`` does unless it changed
    /// `limit` times (or more) in the hour before `time`, counting its `encryption-key` events, the count
    /// and the write in one transaction serialized with every other change of the same key, across
    /// instances: of many changes at once, exactly as many as the limit allows are stored. Setting the
    /// key it already has writes and counts nothing. A nil `limit` counts nothing. A default
    /// implementation counts and then writes (two steps, not exact under concurrency); Coffer's stores
    /// are exact.
    func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?) async throws -> EncryptionKeyChangeOutcome
    /// Sets the device's encryption key as ``setEncryptionKey(_:ofKey:at:changesPerHour:)`` does, keeping
    /// the record authenticated (docs/SERVER.md, "Authenticated key records"): with `tagging`, the record
    /// as read is checked against its tag and the record as written is tagged, under a master key the
    /// keyring still records as wrapping, all in the same transaction. A default implementation, for a
    /// custom store that keeps no tags, refuses any `tagging`.
    /// - Throws: ``ServerConfigurationError`` `.unauthenticRecord` or `.masterKeyUnavailable` when the
    ///   record as read does not match its tag (nothing written); `.masterKeyringMismatch` when the
    ///   tagging key is no longer the wrapping key.
    func setEncryptionKey(
        _ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?, tagging: KeyRecordTagging?
    ) async throws -> EncryptionKeyChangeOutcome
    /// Stores a user signed up by `keyID` (its creator; no device becomes a member), under an address
    /// already normalized (NFC, domain lowercased: what `POST /register_user` stores); nil when a user with that address,
    /// compared case-insensitively, exists.
    func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser?
    /// Writes a signature's replay record and, when this is its first use, stores the user as
    /// ``insertUser(email:name:keyID:createdAt:)`` does — together: the request takes effect and is
    /// remembered, or neither (a failed write leaves the request free to be sent again). A default
    /// implementation writes the two one after the other; Coffer's stores write them in one transaction.
    func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion
    /// Writes the replay record (when given) and, on its first use, stores the user as
    /// ``insertUser(email:name:keyID:createdAt:recordingFirstUse:)`` does, unless `keyID` already signed up
    /// `limit` users (every sign-up it asked for counts, an address already registered included): the
    /// count, its increase and the user's insert in one statement or transaction, serialized with the
    /// key's other sign-ups across instances. A nil `limit` counts without limiting. A default
    /// implementation counts the key's users and then writes (not exact under concurrency); Coffer's
    /// stores are exact.
    func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?
    ) async throws -> UserInsertion
    /// Stores a user as ``insertUser(email:name:keyID:createdAt:recordingFirstUse:signUpsPerKey:)`` does and,
    /// with `tagging`, tags the user's record (its number included) under a master key the keyring still
    /// records as wrapping, in the same transaction: the user is stored tagged, or not at all. A default
    /// implementation, for a custom store that keeps no tags, refuses any `tagging`.
    func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?,
        tagging: KeyRecordTagging?
    ) async throws -> UserInsertion
    /// The user numbered `id`, nil for none.
    func user(id: Int64) async throws -> RegisteredUser?
    /// The user whose address is `email` (compared as sign-up compares them), or every user when nil;
    /// oldest first, at most `limit`.
    func users(email: String?, limit: Int) async throws -> [RegisteredUser]
    /// Every registered key, oldest first (at most `limit`).
    func keys(limit: Int) async throws -> [RegisteredKey]
    /// The registered keys after `position` (from the first when nil), oldest first (creation time, then
    /// key id), at most `limit`: one page of the admin listing. A default implementation reads every key
    /// and drops those before the position.
    func keys(after position: KeyListPosition?, limit: Int) async throws -> [RegisteredKey]
    /// The users numbered above `id` (from the first when nil), oldest first, at most `limit`: one page
    /// of the admin listing. A default implementation reads every user and drops those before.
    func users(after id: Int64?, limit: Int) async throws -> [RegisteredUser]
    /// Changes a key's state and writes a `state` event by `actor` when it changed, in one
    /// transaction; the record as stored afterwards, or nil when there is no such key. A revoked key
    /// stays revoked whatever is asked.
    func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64) async throws -> RegisteredKey?
    /// Changes a key's state as ``setState(_:ofKey:actor:at:)`` does, keeping the record authenticated
    /// with `tagging` as ``setEncryptionKey(_:ofKey:at:changesPerHour:tagging:)`` does.
    func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey?
    /// Makes a key (a device) a member of a user, whichever user it belonged to before, and writes a
    /// `user` event by `actor`, in one transaction; the record afterwards, or nil when there is no such
    /// key or no such user. Only an admin's link makes a device a member (docs/SERVER.md, "Users").
    func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64) async throws -> RegisteredKey?
    /// Links a key to a user as ``linkKey(_:toUser:actor:at:)`` does, keeping the record authenticated
    /// with `tagging` as ``setEncryptionKey(_:ofKey:at:changesPerHour:tagging:)`` does.
    func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey?
    /// The key's history, newest first (at most `limit`).
    func events(ofKey keyID: String, limit: Int) async throws -> [KeyEvent]
    /// The events of `kind` the key's history holds from `time` on (UNIX seconds): what per-key limits
    /// count, across every instance.
    func recentEvents(ofKey keyID: String, kind: KeyEvent.Kind, since time: Int64) async throws -> RecentActivity
    /// The versions of the owner's data key made from `time` on (UNIX seconds).
    func recentDataKeys(owner: String, since time: Int64) async throws -> RecentActivity
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

/// Where a page of the key listing starts: after the key registered at ``createdAt`` with id ``keyID``
/// (keys are listed by creation time, then id). As text, the admin API's `next` and `after`:
/// `<createdAt>.<keyId>`.
public struct KeyListPosition: Sendable, Hashable {
    /// The last listed key's creation time, UNIX seconds.
    public let createdAt: Int64
    /// The last listed key's id.
    public let keyID: String

    /// The position after `key`.
    public init(after key: RegisteredKey) {
        createdAt = key.createdAt
        keyID = key.keyID
    }

    /// The position `text` names (`<createdAt>.<keyId>`: decimal digits, a dot, then 1 to 256 bytes of
    /// printable ASCII without spaces); nil for text of another shape.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")), (1...19).contains(dot), bytes[..<dot].allSatisfy({ (0x30...0x39).contains($0) }),
              (1...256).contains(bytes.count - dot - 1), bytes[(dot + 1)...].allSatisfy({ (0x21...0x7E).contains($0) }),
              let time = Int64(String(decoding: bytes[..<dot], as: UTF8.self)) else {
            return nil
        }
        createdAt = time
        keyID = String(decoding: bytes[(dot + 1)...], as: UTF8.self)
    }

    /// The text form, `<createdAt>.<keyId>`.
    public var text: String { "\(createdAt).\(keyID)" }

    /// Whether `key` comes after this position (as the databases order keys: by time, then id's bytes).
    func precedes(_ key: RegisteredKey) -> Bool {
        key.createdAt != createdAt ? key.createdAt > createdAt : keyID.utf8.lexicographicallyPrecedes(key.keyID.utf8)
    }
}

/// What ``RegistrationStore/insertUser(email:name:keyID:createdAt:recordingFirstUse:)`` did.
public enum UserInsertion: Sendable, Hashable {
    /// The user was stored (and the replay record written).
    case inserted(RegisteredUser)
    /// The e-mail address is already registered; the replay record was written, no user.
    case emailExists
    /// The replay record was already there: nothing was written.
    case replayed
    /// The key signed up as many users as the limit allows: the replay record was written, no user.
    case limited
}

extension RegistrationStore {
    /// Stores a key without a token; when a key with the same id exists, stores nothing and returns the
    /// existing one.
    @available(*, deprecated, renamed: "registerKey(_:spending:)", message: "registerKey checks and spends a registration token in the same transaction")
    public func insertKey(_ key: RegisteredKey) async throws -> RegisteredKey {
        switch try await registerKey(key, spending: nil) {
        case .registered(let stored), .exists(let stored): return stored
        case .invalidToken, .wrappingKeyChanged: return key
        }
    }

    /// Changes a key's state on behalf of no one in particular (its event's actor is `unknown`).
    @available(*, deprecated, renamed: "setState(_:ofKey:actor:at:)", message: "name who changed the key, for its history")
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String) async throws -> RegisteredKey? {
        try await setState(state, ofKey: keyID, actor: "unknown", at: Int64(Date().timeIntervalSince1970))
    }

    /// Links a key to a user on behalf of no one in particular (its event's actor is `unknown`).
    @available(*, deprecated, renamed: "linkKey(_:toUser:actor:at:)", message: "name who linked the key, for its history")
    public func linkKey(_ keyID: String, toUser userID: Int64) async throws -> RegisteredKey? {
        try await linkKey(keyID, toUser: userID, actor: "unknown", at: Int64(Date().timeIntervalSince1970))
    }

    /// Writes the replay record, then the user: two writes, for a custom store that has no transaction
    /// holding both (a failure between them leaves the record written and no user).
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion {
        guard try await recordFirstUse(of: replay.identifier, expiringAt: replay.expiry, now: replay.now) else { return .replayed }
        guard let user = try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt) else { return .emailExists }
        return .inserted(user)
    }

    /// Writes the replay record, counts the key's users, then stores the user: for a custom store that
    /// has no transaction holding the three (sign-ups at once may pass the limit together).
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?
    ) async throws -> UserInsertion {
        if let replay {
            guard try await recordFirstUse(of: replay.identifier, expiringAt: replay.expiry, now: replay.now) else { return .replayed }
        }
        if let limit, try await users(email: nil, limit: .max).count(where: { $0.keyID == keyID }) >= limit { return .limited }
        guard let user = try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt) else { return .emailExists }
        return .inserted(user)
    }

    /// Reads the schema version, migrates, and reads it again (not exact when another instance migrates
    /// at the same time: for a custom store that cannot say what it applied).
    public func applyMigrations() async throws -> [Int] {
        let before = try await schemaVersion()
        try await migrate()
        let after = try await schemaVersion()
        return after > before ? Array(Swift.max(before, 0) + 1 ... after) : []
    }

    /// Counts the key's recent changes, then sets it (two steps: for a custom store that has no
    /// transaction holding both; changes at once may pass the limit together).
    public func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?) async throws -> EncryptionKeyChangeOutcome {
        guard let before = try await key(id: keyID) else { return .unknownKey }
        if before.encryptionKey != encryptionKey, let limit {
            let recent = try await recentEvents(ofKey: keyID, kind: .encryptionKey, since: time - 3600)
            if recent.count >= limit { return .limited(recent) }
        }
        guard let change = try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time) else { return .unknownKey }
        return .set(change)
    }

    /// Refuses `tagging` and otherwise stores the user as
    /// ``insertUser(email:name:keyID:createdAt:recordingFirstUse:signUpsPerKey:)`` does: for a custom
    /// store that keeps no authenticated records.
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?,
        tagging: KeyRecordTagging?
    ) async throws -> UserInsertion {
        try Self.refuse(tagging)
        return try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit)
    }

    /// The user numbered `id`, read through the page query.
    public func user(id: Int64) async throws -> RegisteredUser? {
        try await users(after: id - 1, limit: 1).first { $0.id == id }
    }

    /// Reads every key and keeps those after `position`: for a custom store without a page query.
    public func keys(after position: KeyListPosition?, limit: Int) async throws -> [RegisteredKey] {
        Array(try await keys(limit: .max).filter { position?.precedes($0) ?? true }.prefix(max(0, limit)))
    }

    /// Reads every user and keeps those numbered above `id`: for a custom store without a page query.
    public func users(after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        Array(try await users(email: nil, limit: .max).filter { $0.id > (id ?? Int64.min) }.prefix(max(0, limit)))
    }

    /// Refuses `tagging` and otherwise sets the key as ``setEncryptionKey(_:ofKey:at:changesPerHour:)``
    /// does: for a custom store that keeps no authenticated key records.
    public func setEncryptionKey(
        _ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?, tagging: KeyRecordTagging?
    ) async throws -> EncryptionKeyChangeOutcome {
        try Self.refuse(tagging)
        return try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: limit)
    }

    /// Refuses `tagging` and otherwise changes the state as ``setState(_:ofKey:actor:at:)`` does: for a
    /// custom store that keeps no authenticated key records.
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try Self.refuse(tagging)
        return try await setState(state, ofKey: keyID, actor: actor, at: time)
    }

    /// Refuses `tagging` and otherwise links as ``linkKey(_:toUser:actor:at:)`` does: for a custom store
    /// that keeps no authenticated key records.
    public func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try Self.refuse(tagging)
        return try await linkKey(keyID, toUser: userID, actor: actor, at: time)
    }

    private static func refuse(_ tagging: KeyRecordTagging?) throws {
        guard tagging == nil else {
            throw ServerConfigurationError(
                .invalidDatabaseLocation, "this store keeps no authenticated key records, which an instance with master keys needs: expected one of Coffer's stores (SQLite or PostgreSQL)"
            )
        }
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
    static let keyColumns = "key_id, algorithm, public_key, secret, created_at, state, last_used_at, encryption_key, user_id, record_tag, user_binding"
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
        // 6: users and keys by what was proven: addresses compared case-insensitively; each key's
        // history. Then a step in Swift (same transaction: ``emailKeys(for:taken:)``,
        // ``recordSignUpLinks``, ``unlinkSignUps``) fills `email_key` and undoes the links signing up made.
        [
            "ALTER TABLE coffer_users ADD COLUMN email_key TEXT",
            "CREATE UNIQUE INDEX coffer_users_by_email_key ON coffer_users (email_key)",
            "CREATE TABLE coffer_key_events (id %SERIAL%, key_id TEXT NOT NULL, at BIGINT NOT NULL, kind TEXT NOT NULL, actor TEXT NOT NULL, detail TEXT)",
            "CREATE INDEX coffer_key_events_key ON coffer_key_events (key_id, id)",
        ],
        // 7: the master keyring: each master key id the fleet wraps or wrapped with, at most one of them
        // wrapping; data keys findable by the key that wraps them (for rewrap and retirement).
        [
            "CREATE TABLE coffer_master_keyring (key_id TEXT PRIMARY KEY, state TEXT NOT NULL, changed_at BIGINT NOT NULL)",
            "CREATE UNIQUE INDEX coffer_master_keyring_one_wrapping ON coffer_master_keyring (state) WHERE state = 'wrapping'",
            "CREATE INDEX coffer_data_keys_master_key ON coffer_data_keys (master_key_id)",
        ],
        // 8: how many users each key signed up (``insertUser``'s limit), counted from the users stored.
        // Then a step in Swift (same transaction) gives every user the `email_key` of this release's
        // comparison (``UserFields/emailKey(_:)``: case folding, the domain mapped), oldest first.
        [
            "ALTER TABLE coffer_keys ADD COLUMN sign_ups BIGINT NOT NULL DEFAULT 0",
            "UPDATE coffer_keys SET sign_ups = (SELECT COUNT(*) FROM coffer_users WHERE coffer_users.key_id = coffer_keys.key_id)",
        ],
        // 9: key and user records authenticated under the master keyring (``KeyRecordTag``), and links
        // naming the user record they were made to. Records from before carry no tag until `rewrap` is
        // asked to tag them.
        [
            "ALTER TABLE coffer_keys ADD COLUMN record_tag TEXT",
            "ALTER TABLE coffer_users ADD COLUMN record_tag TEXT",
            "ALTER TABLE coffer_keys ADD COLUMN user_binding TEXT",
        ],
    ]

    /// What each migration does, for the log line that says it was applied: `migrationTitles[N - 1]`.
    static let migrationTitles = [
        "keys, users and replay records",
        "the allow-list: key state, last use, registration tokens",
        "per-device data keys",
        "per-user data keys",
        "SQLite's replay records in commit order",
        "users and keys by what was proven, and each key's history",
        "the master keyring",
        "users signed up per key; addresses compared as mail systems compare them",
        "key and user records authenticated under the master keyring",
    ]

    /// The migration after whose statements the user-identity step runs.
    static let userIdentityMigration = 6
    /// The migration after whose statements every user's `email_key` is made again.
    static let emailFoldingMigration = 8
    /// The migration that gives key records their tag (records from before it carry none until an
    /// operator's rewrap tags them).
    static let keyRecordTagMigration = 9

    /// Migration 6's step, for users stored before it: which `email_key` to give each user that has none
    /// (`users`: id and stored address, oldest first), given the keys already `taken`. Of addresses that
    /// now compare equal the oldest user gets the key and the others keep none, so that no user is lost
    /// and new sign-ups of the address are refused.
    static func emailKeys(for users: [(id: Int64, email: String)], taken: Set<String>) -> [(id: Int64, key: String)] {
        var taken = taken
        return users.compactMap { user in
            let key = UserFields.emailKey(user.email)
            return taken.insert(key).inserted ? (user.id, key) : nil
        }
    }

    /// Migration 6's step, after `email_key`: the links signing up made (a device linked to the user it
    /// created) are recorded in the device's history ($1: the time), then undone
    /// (``unlinkSignUps``), so that only an admin's link makes a device a member of a user.
    static let recordSignUpLinks = """
        INSERT INTO coffer_key_events (key_id, at, kind, actor, detail)
        SELECT k.key_id, $1, 'user', 'migration', 'unlinked from user ' || k.user_id || ': signing up makes no device a member; an admin links it'
        FROM coffer_keys AS k JOIN coffer_users AS u ON u.id = k.user_id AND u.key_id = k.key_id
        """
    static let unlinkSignUps = """
        UPDATE coffer_keys SET user_id = NULL
        WHERE user_id IS NOT NULL AND EXISTS (SELECT 1 FROM coffer_users AS u WHERE u.id = coffer_keys.user_id AND u.key_id = coffer_keys.key_id)
        """

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

    /// A user, unless one with the same address (byte for byte, or compared case-insensitively) exists.
    static let userColumns = "id, email, name, key_id, created_at, record_tag"
    /// One more sign-up by a key, unless it reached the limit ($2; below 0: none).
    static let countSignUp = "UPDATE coffer_keys SET sign_ups = sign_ups + 1 WHERE key_id = $1 AND ($2 < 0 OR sign_ups < $2)"
    static let insertUser = "INSERT INTO coffer_users (email, email_key, name, key_id, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING"
    static let usersByEmail = "SELECT \(userColumns) FROM coffer_users WHERE email_key = $1 OR email = $2 ORDER BY id LIMIT $3"
    static let allUsers = "SELECT \(userColumns) FROM coffer_users ORDER BY id LIMIT $1"
    static let usersAfter = "SELECT \(userColumns) FROM coffer_users WHERE id > $1 ORDER BY id LIMIT $2"
    static let keysAfter = "SELECT \(keyColumns) FROM coffer_keys WHERE created_at > $1 OR (created_at = $1 AND key_id > $2) ORDER BY created_at, key_id LIMIT $3"
    /// Links a key to a user that exists.
    /// A new user's tag, while $3 is the wrapping key.
    static let tagUser = "UPDATE coffer_users SET record_tag = $1 WHERE id = $2 AND \(MasterKeySQL.isWrapping("$3"))"
    static let userByID = "SELECT \(userColumns) FROM coffer_users WHERE id = $1"
    static let linkKey = "UPDATE coffer_keys SET user_id = $1, record_tag = $3, user_binding = $4 WHERE key_id = $2 AND EXISTS (SELECT 1 FROM coffer_users WHERE id = $1)"
    /// One change in a key's history.
    static let insertEvent = "INSERT INTO coffer_key_events (key_id, at, kind, actor, detail) VALUES ($1, $2, $3, $4, $5)"
    static let events = "SELECT key_id, at, kind, actor, detail FROM coffer_key_events WHERE key_id = $1 ORDER BY id DESC LIMIT $2"
    static let recentEvents = "SELECT COUNT(*), MIN(at) FROM coffer_key_events WHERE key_id = $1 AND kind = $2 AND at >= $3"
    static let recentDataKeys = "SELECT COUNT(*), MIN(created_at) FROM coffer_data_keys WHERE owner = $1 AND created_at >= $2"
    static let setEncryptionKey = "UPDATE coffer_keys SET encryption_key = $1, record_tag = $3 WHERE key_id = $2"
    /// The master key a new record must be written under, which the keyring must record as wrapping in
    /// the same transaction: the one its tag (or, untagged, its wrapped secret) names; nil for a record
    /// with neither, written only while no keyring is recorded.
    /// - Throws: ``ServerConfigurationError`` `.unauthenticRecord` for a tag that does not parse or
    ///   names another key than the secret's.
    static func wrappingKeyNeeded(by key: RegisteredKey) throws(ServerConfigurationError) -> String? {
        let secretKey = try key.secret.flatMap { (secret) throws(ServerConfigurationError) in try WrappedSecret.masterKeyID(of: secret) }
        guard let tag = key.tag else { return secretKey }
        let tagKey = try KeyRecordTag.parts(of: tag, keyID: key.keyID).masterKeyID
        guard secretKey == nil || secretKey == tagKey else {
            throw ServerConfigurationError(.unauthenticRecord, "the record of key '\(key.keyID.clipped(toUTF8: 80))' is tagged under one master key and its secret wrapped under another")
        }
        return tagKey
    }

    /// The refusal of a tagged change whose master key stopped being the wrapping key meanwhile.
    static func taggingKeyChanged(_ tagging: KeyRecordTagging) -> ServerConfigurationError {
        ServerConfigurationError(
            .masterKeyringMismatch, "the master key \(tagging.masterKeyID) is no longer the keyring's wrapping key (a promotion happened meanwhile); nothing was written"
        )
    }

    /// A registration token that can be spent now: its id.
    static let validToken = "SELECT token_id FROM coffer_tokens WHERE secret_hash = $1 AND uses_left > 0 AND revoked = 0 AND expires_at > $2 AND (platform IS NULL OR platform = $3)"
    static let spendToken = "UPDATE coffer_tokens SET uses_left = uses_left - 1 WHERE token_id = $1 AND uses_left > 0"
    static let insertKey = "INSERT INTO coffer_keys (key_id, algorithm, public_key, secret, created_at, encryption_key, record_tag) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key_id) DO NOTHING"
    /// A state change that never takes a key out of `revoked`.
    static let setState = "UPDATE coffer_keys SET state = $1, record_tag = $3 WHERE key_id = $2 AND state <> 'revoked'"
    static let recordUse = "UPDATE coffer_keys SET last_used_at = $1 WHERE key_id = $2 AND (last_used_at IS NULL OR last_used_at < $1)"
    static let consumeToken = """
        UPDATE coffer_tokens SET uses_left = uses_left - 1
        WHERE secret_hash = $1 AND uses_left > 0 AND revoked = 0 AND expires_at > $2 AND (platform IS NULL OR platform = $3)
        RETURNING \(tokenColumns)
        """
}
