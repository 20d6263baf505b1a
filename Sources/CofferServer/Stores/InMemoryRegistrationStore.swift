// One file on purpose: the in-memory store answers every requirement as the SQL stores do, and is read
// beside them requirement by requirement; its keyring and rewrap are in +MasterKeys.swift.

public import CofferHTTPSignatures
import CofferCore
import Foundation

/// A ``RegistrationStore`` in this process's memory: the same answers as the SQLite and PostgreSQL
/// stores (the route tests run on it; the store suites hold the databases), with nothing written
/// anywhere.
///
/// **For tests and development only, never for production**: everything it holds (keys, users, tokens,
/// data keys, the replay records) is lost when the process ends, so a restarted server would accept
/// again every request it had accepted; and it serves one instance, where a fleet needs one shared
/// database. `coffer serve` never uses it.
///
/// Each call is one step of the actor: what the database stores do in one transaction (a key's
/// registration with its token's use, a user with its request's replay record) is done here without a
/// suspension in between. After ``close()`` every call throws, as a closed database does.
public actor InMemoryRegistrationStore: RegistrationStore {
    struct StoredToken {
        var record: RegistrationToken
        let secretHash: String
    }

    var keyRecords: [String: RegisteredKey] = [:]
    var userRecords: [RegisteredUser] = []
    /// Sign-ups each key asked for (`coffer_keys.sign_ups`).
    var signUps: [String: Int] = [:]
    var eventLog: [KeyEvent] = []
    var tokenRecords: [String: StoredToken] = [:]
    var dataKeyRecords: [String: [Int64: StoredDataKey]] = [:]
    var floors: [String: Int64] = [:]
    var keyring: [String: MasterKeyRecord] = [:]
    var replays: [String: Int64] = [:]
    var replayInserts = 0
    var isClosed = false

    /// An empty store, at this release's schema.
    public init() {}

    func open() throws {
        if isClosed { throw CofferCoreError(.ioFailure, "the in-memory registration store is closed") }
    }

    /// Nothing to migrate: the store is always at this release's schema.
    public func migrate() async throws { try open() }

    /// This release's schema version.
    public func schemaVersion() async throws -> Int {
        try open()
        return RegistrationSQL.latestVersion
    }

    /// Answers until ``close()``.
    public func ping() async throws { try open() }

    /// Every later call throws.
    public func close() async throws { isClosed = true }

    // MARK: Keys

    var wrappingKeyID: String? { keyring.values.first { $0.state == .wrapping }?.keyID }

    /// See ``RegistrationStore/registerKey(_:spending:)``.
    public func registerKey(_ key: RegisteredKey, spending token: TokenUse?) async throws -> KeyRegistration {
        try open()
        var tokenID: String?
        if let token {
            guard let valid = tokenRecords.values.first(where: { $0.secretHash == token.secretHash && Self.isSpendable($0.record, platform: token.platform, now: token.now) }) else {
                return .invalidToken
            }
            tokenID = valid.record.tokenID
        }
        if let existing = keyRecords[key.keyID] { return .exists(existing) }
        guard wrappingKeyID == (try RegistrationSQL.wrappingKeyNeeded(by: key)) else { return .wrappingKeyChanged }
        let stored = RegisteredKey(
            keyID: key.keyID, algorithm: key.algorithm, publicKey: key.publicKey, secret: key.secret, createdAt: key.createdAt, encryptionKey: key.encryptionKey,
            tag: key.tag
        )
        keyRecords[key.keyID] = stored
        eventLog.append(KeyEvent(keyID: key.keyID, at: key.createdAt, kind: .registered, actor: "key:" + key.keyID, detail: key.algorithm.rawValue))
        if let tokenID, let spent = tokenRecords[tokenID] {
            tokenRecords[tokenID]?.record = Self.token(spent.record, usesLeft: spent.record.usesLeft - 1)
        }
        return .registered(stored)
    }

    /// See ``RegistrationStore/key(id:)``.
    public func key(id: String) async throws -> RegisteredKey? {
        try open()
        return keyRecords[id]
    }

    /// See ``RegistrationStore/keys(after:limit:)``.
    public func keys(after position: KeyListPosition?, limit: Int) async throws -> [RegisteredKey] {
        Array(try await keys(limit: .max).filter { position?.precedes($0) ?? true }.prefix(max(0, limit)))
    }

    /// See ``RegistrationStore/users(after:limit:)``.
    public func users(after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        try open()
        return Array(userRecords.filter { $0.id > (id ?? Int64.min) }.prefix(max(0, limit)))
    }

    /// See ``RegistrationStore/keys(limit:)``.
    public func keys(limit: Int) async throws -> [RegisteredKey] {
        try open()
        // As the databases order them: by registration time, then by id's bytes.
        let ordered = keyRecords.values.sorted {
            $0.createdAt != $1.createdAt ? $0.createdAt < $1.createdAt : $0.keyID.utf8.lexicographicallyPrecedes($1.keyID.utf8)
        }
        return Array(ordered.prefix(max(0, limit)))
    }

    /// `after` tagged by `tagging` once `before` is checked against its tag (untagged without one).
    private func retag(_ before: RegisteredKey, as after: RegisteredKey, with tagging: KeyRecordTagging?) throws -> RegisteredKey {
        guard let tagging else { return after.untagged }
        try tagging.check(before)
        guard wrappingKeyID == tagging.masterKeyID else { throw RegistrationSQL.taggingKeyChanged(tagging) }
        return tagging.tagged(after)
    }

    /// See ``RegistrationStore/setEncryptionKey(_:ofKey:at:)``.
    public func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64) async throws -> EncryptionKeyChange? {
        switch try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: nil, tagging: nil) {
        case .set(let change): change
        case .limited, .unknownKey: nil
        }
    }

    /// See ``RegistrationStore/setEncryptionKey(_:ofKey:at:changesPerHour:)``: the count and the change
    /// with no suspension between them (the actor's one task at a time).
    public func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?) async throws -> EncryptionKeyChangeOutcome {
        try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: limit, tagging: nil)
    }

    /// See ``RegistrationStore/setEncryptionKey(_:ofKey:at:changesPerHour:tagging:)``.
    public func setEncryptionKey(
        _ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?, tagging: KeyRecordTagging?
    ) async throws -> EncryptionKeyChangeOutcome {
        try open()
        guard let before = keyRecords[keyID] else { return .unknownKey }
        guard before.encryptionKey != encryptionKey else {
            try tagging?.check(before)
            return .set(EncryptionKeyChange(key: before, previous: before.encryptionKey))
        }
        if let limit {
            let recent = eventLog.filter { $0.keyID == keyID && $0.kind == .encryptionKey && $0.at >= time - 3600 }
            if recent.count >= limit { return .limited(RecentActivity(count: recent.count, oldest: recent.map(\.at).min())) }
        }
        let after = try retag(before, as: before.replacing(encryptionKey: encryptionKey), with: tagging)
        keyRecords[keyID] = after
        let detail = EncryptionKeyIdentity.change(from: before.encryptionKey, to: encryptionKey)
        eventLog.append(KeyEvent(keyID: keyID, at: time, kind: .encryptionKey, actor: "key:" + keyID, detail: detail))
        return .set(EncryptionKeyChange(key: after, previous: before.encryptionKey))
    }

    /// See ``RegistrationStore/setState(_:ofKey:actor:at:)``.
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await setState(state, ofKey: keyID, actor: actor, at: time, tagging: nil)
    }

    /// See ``RegistrationStore/setState(_:ofKey:actor:at:tagging:)``.
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try open()
        guard let before = keyRecords[keyID] else { return nil }
        guard before.state != .revoked, before.state != state else {
            try tagging?.check(before)
            return before
        }
        let after = try retag(before, as: before.replacing(state: state), with: tagging)
        keyRecords[keyID] = after
        eventLog.append(KeyEvent(keyID: keyID, at: time, kind: .state, actor: actor, detail: state.rawValue))
        return after
    }

    /// See ``RegistrationStore/linkKey(_:toUser:actor:at:)``.
    public func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await linkKey(keyID, toUser: userID, actor: actor, at: time, tagging: nil)
    }

    /// See ``RegistrationStore/linkKey(_:toUser:actor:at:tagging:)``.
    public func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try open()
        guard let before = keyRecords[keyID], let user = userRecords.first(where: { $0.id == userID }) else { return nil }
        let binding = try tagging?.binding(ofUser: userID, rows: [user])
        let after = try retag(before, as: before.linked(toUser: userID, binding: binding), with: tagging)
        keyRecords[keyID] = after
        eventLog.append(KeyEvent(keyID: keyID, at: time, kind: .user, actor: actor, detail: "linked to user \(userID)"))
        return after
    }

    /// See ``RegistrationStore/recordUse(ofKey:at:)``.
    public func recordUse(ofKey keyID: String, at time: Int64) async throws {
        try open()
        guard let before = keyRecords[keyID], (before.lastUsedAt ?? Int64.min) < time else { return }
        keyRecords[keyID] = before.replacing(lastUsedAt: time)
    }

    /// See ``RegistrationStore/events(ofKey:limit:)``.
    public func events(ofKey keyID: String, limit: Int) async throws -> [KeyEvent] {
        try open()
        return Array(eventLog.reversed().filter { $0.keyID == keyID }.prefix(max(0, limit)))
    }

    /// See ``RegistrationStore/recentEvents(ofKey:kind:since:)``.
    public func recentEvents(ofKey keyID: String, kind: KeyEvent.Kind, since time: Int64) async throws -> RecentActivity {
        try open()
        let times = eventLog.filter { $0.keyID == keyID && $0.kind == kind && $0.at >= time }.map(\.at)
        return RecentActivity(count: times.count, oldest: times.min())
    }

    // MARK: Users

    /// See ``RegistrationStore/insertUser(email:name:keyID:createdAt:)``.
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser? {
        try open()
        return newUser(email: email, name: name, keyID: keyID, createdAt: createdAt)
    }

    private func newUser(email: String, name: String, keyID: String, createdAt: Int64) -> RegisteredUser? {
        let emailKey = UserFields.emailKey(email)
        guard !userRecords.contains(where: { $0.email == email || UserFields.emailKey($0.email) == emailKey }) else { return nil }
        let user = RegisteredUser(id: (userRecords.last?.id ?? 0) + 1, email: email, name: name, keyID: keyID, createdAt: createdAt)
        userRecords.append(user)
        return user
    }

    /// See ``RegistrationStore/insertUser(email:name:keyID:createdAt:recordingFirstUse:)``: the replay
    /// record and the user in one step.
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion {
        try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: nil)
    }

    /// See ``RegistrationStore/insertUser(email:name:keyID:createdAt:recordingFirstUse:signUpsPerKey:)``:
    /// the replay record, the key's count and the user in one step (the actor's one task at a time).
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?
    ) async throws -> UserInsertion {
        try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit, tagging: nil)
    }

    /// See ``RegistrationStore/insertUser(email:name:keyID:createdAt:recordingFirstUse:signUpsPerKey:tagging:)``.
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?,
        tagging: KeyRecordTagging?
    ) async throws -> UserInsertion {
        try open()
        if let tagging, wrappingKeyID != tagging.masterKeyID { throw RegistrationSQL.taggingKeyChanged(tagging) }
        if let replay {
            guard recordReplay(replay.identifier, expiringAt: replay.expiry, now: replay.now) else { return .replayed }
        }
        let count = signUps[keyID, default: 0]
        if let limit, count >= limit { return .limited }
        signUps[keyID] = count + 1
        guard let user = newUser(email: email, name: name, keyID: keyID, createdAt: createdAt) else { return .emailExists }
        guard let tagging else { return .inserted(user) }
        let tagged = tagging.tagged(user)
        userRecords[userRecords.count - 1] = tagged
        return .inserted(tagged)
    }

    /// See ``RegistrationStore/user(id:)``.
    public func user(id: Int64) async throws -> RegisteredUser? {
        try open()
        return userRecords.first { $0.id == id }
    }

    /// See ``RegistrationStore/users(email:limit:)``.
    public func users(email: String?, limit: Int) async throws -> [RegisteredUser] {
        try open()
        let found = email.map { email in userRecords.filter { $0.email == email || UserFields.emailKey($0.email) == UserFields.emailKey(email) } } ?? userRecords
        return Array(found.prefix(max(0, limit)))
    }

    // MARK: Tokens

    private static func isSpendable(_ token: RegistrationToken, platform: String?, now: Int64) -> Bool {
        token.usesLeft > 0 && !token.revoked && token.expiresAt > now && (token.platform == nil || token.platform == platform)
    }

    private static func token(_ token: RegistrationToken, usesLeft: Int? = nil, revoked: Bool? = nil) -> RegistrationToken {
        RegistrationToken(
            tokenID: token.tokenID, uses: token.uses, usesLeft: usesLeft ?? token.usesLeft, expiresAt: token.expiresAt, platform: token.platform,
            revoked: revoked ?? token.revoked, createdAt: token.createdAt
        )
    }

    /// See ``RegistrationStore/insertToken(_:secretHash:)``.
    /// - Throws: `CofferCoreError` `.ioFailure` when the id or the secret's hash is already stored (a
    ///   database's unique constraint).
    public func insertToken(_ token: RegistrationToken, secretHash: String) async throws {
        try open()
        guard tokenRecords[token.tokenID] == nil, !tokenRecords.values.contains(where: { $0.secretHash == secretHash }) else {
            throw CofferCoreError(.ioFailure, "a registration token with this id or secret is already stored")
        }
        tokenRecords[token.tokenID] = StoredToken(record: token, secretHash: secretHash)
    }

    /// See ``RegistrationStore/consumeToken(secretHash:platform:now:)``.
    public func consumeToken(secretHash: String, platform: String?, now: Int64) async throws -> RegistrationToken? {
        try open()
        guard let found = tokenRecords.values.first(where: { $0.secretHash == secretHash && Self.isSpendable($0.record, platform: platform, now: now) }) else {
            return nil
        }
        let spent = Self.token(found.record, usesLeft: found.record.usesLeft - 1)
        tokenRecords[spent.tokenID]?.record = spent
        return spent
    }

    /// See ``RegistrationStore/tokens(limit:)``.
    public func tokens(limit: Int) async throws -> [RegistrationToken] {
        try open()
        let ordered = tokenRecords.values.map(\.record).sorted {
            $0.createdAt != $1.createdAt ? $0.createdAt > $1.createdAt : $0.tokenID.utf8.lexicographicallyPrecedes($1.tokenID.utf8)
        }
        return Array(ordered.prefix(max(0, limit)))
    }

    /// See ``RegistrationStore/revokeToken(id:)``.
    public func revokeToken(id tokenID: String) async throws -> Bool {
        try open()
        guard let found = tokenRecords[tokenID] else { return false }
        tokenRecords[tokenID]?.record = Self.token(found.record, revoked: true)
        return true
    }

    // MARK: Data keys

    /// See ``RegistrationStore/dataKey(owner:version:)``.
    public func dataKey(owner: String, version: Int64?) async throws -> StoredDataKey? {
        try open()
        return storedDataKey(owner: owner, version: version)
    }

    private func storedDataKey(owner: String, version: Int64?) -> StoredDataKey? {
        guard let versions = dataKeyRecords[owner] else { return nil }
        guard let version else { return versions.keys.max().flatMap { versions[$0] } }
        return versions[version]
    }

    /// See ``RegistrationStore/insertDataKey(_:)``: written only under the wrapping master key.
    public func insertDataKey(_ key: StoredDataKey) async throws -> StoredDataKey? {
        try open()
        if wrappingKeyID == key.masterKeyID, dataKeyRecords[key.owner]?[key.version] == nil {
            dataKeyRecords[key.owner, default: [:]][key.version] = key
        }
        return dataKeyRecords[key.owner]?[key.version]
    }

    /// See ``RegistrationStore/recentDataKeys(owner:since:)``.
    public func recentDataKeys(owner: String, since time: Int64) async throws -> RecentActivity {
        try open()
        let times = (dataKeyRecords[owner] ?? [:]).values.map(\.createdAt).filter { $0 >= time }
        return RecentActivity(count: times.count, oldest: times.min())
    }

    /// See ``RegistrationStore/minimumDataKeyVersion(owner:)``.
    public func minimumDataKeyVersion(owner: String) async throws -> Int64 {
        try open()
        return floors[owner] ?? 1
    }

    /// See ``RegistrationStore/lookUpDataKey(owner:version:)``: one step, as the databases read it at once.
    public func lookUpDataKey(owner: String, version: Int64?) async throws -> DataKeyLookup {
        try open()
        let newest = dataKeyRecords[owner]?.keys.max()
        return DataKeyLookup(minimumVersion: floors[owner] ?? 1, newestVersion: newest, key: storedDataKey(owner: owner, version: version))
    }

    /// See ``RegistrationStore/setMinimumDataKeyVersion(_:owner:)``: never lowers the floor.
    public func setMinimumDataKeyVersion(_ version: Int64, owner: String) async throws {
        try open()
        if (floors[owner] ?? Int64.min) < version { floors[owner] = version }
    }

    // MARK: The master keyring

    /// See ``RegistrationStore/masterKeyring()``.
    public func masterKeyring() async throws -> [MasterKeyRecord] {
        try open()
        return keyring.values.sorted { $0.changedAt != $1.changedAt ? $0.changedAt < $1.changedAt : $0.keyID.utf8.lexicographicallyPrecedes($1.keyID.utf8) }
    }

    /// See ``RegistrationStore/changeMasterKeyring(wrapping:replacing:setting:at:)``.
    public func changeMasterKeyring(wrapping keyID: String, replacing expected: String?, setting states: [String: MasterKeyRecord.State], at time: Int64) async throws -> Bool {
        try open()
        guard wrappingKeyID == expected else { return false }
        for record in keyring.values where record.state == .wrapping && record.keyID != keyID {
            keyring[record.keyID] = MasterKeyRecord(keyID: record.keyID, state: .previous, changedAt: time)
        }
        for (id, state) in states where id != keyID {
            keyring[id] = MasterKeyRecord(keyID: id, state: state, changedAt: time)
        }
        keyring[keyID] = MasterKeyRecord(keyID: keyID, state: .wrapping, changedAt: time)
        return true
    }

    /// See ``RegistrationStore/masterKeyUsage()``.
    public func masterKeyUsage() async throws -> MasterKeyUsage {
        try open()
        var usage = MasterKeyUsage()
        for key in dataKeyRecords.values.flatMap(\.values) {
            usage.rows[key.masterKeyID, default: .init()].dataKeys += 1
            usage.rows[key.masterKeyID, default: .init()].newestDataKeyAt = max(usage.rows[key.masterKeyID]?.newestDataKeyAt ?? key.createdAt, key.createdAt)
        }
        for secret in keyRecords.values.compactMap(\.secret) {
            if secret.hasPrefix(WrappedSecret.prefix) {
                let id = String(secret.dropFirst(WrappedSecret.prefix.count).prefix(WrappedSecret.masterKeyIDLength))
                usage.rows[id, default: .init()].secrets += 1
            } else {
                usage.secretsInClear += 1
            }
        }
        for tag in keyRecords.values.map(\.tag) + userRecords.map(\.tag) {
            if let tag, tag.hasPrefix(KeyRecordTag.prefix) {
                usage.rows[String(tag.dropFirst(KeyRecordTag.prefix.count).prefix(WrappedSecret.masterKeyIDLength)), default: .init()].records += 1
            } else {
                usage.untaggedRecords += 1
            }
        }
        return usage
    }

    // MARK: Replay records

    /// Records a signature's first use (`HTTPSignatureReplayCache`), kept until it expires.
    public func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool {
        try open()
        return recordReplay(identifier, expiringAt: expiry, now: now)
    }

    private func recordReplay(_ identifier: String, expiringAt expiry: Int64, now: Int64) -> Bool {
        replayInserts += 1
        if replayInserts % RegistrationSQL.sweepInterval == 0 { replays = replays.filter { $0.value > now } }
        if let live = replays[identifier], live > now { return false }
        replays[identifier] = expiry
        return true
    }
}
