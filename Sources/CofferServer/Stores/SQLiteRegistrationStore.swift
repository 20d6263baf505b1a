// One file on purpose: the SQLite store's every write job, kept together so that its one-writer
// transactions (savepoints per registration) are reviewed as one piece.

import CofferCore
public import CofferHTTPSignatures
import Foundation
import GRDB

/// The registration store in one SQLite file (WAL mode; the file is created 0600 in a 0700 folder).
public final class SQLiteRegistrationStore: RegistrationStore {
    let pool: DatabasePool
    private let inserts = Counter()
    private let writes: SQLiteWriteBatcher
    private let replays = SQLiteReplayLedger()

    /// Opens (creating if needed) the database at `path`.
    public init(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        // Created only if absent (O_EXCL), 0600: FileManager.createFile replaces a file that appeared
        // meanwhile, so of two instances starting at once on a new file, the second emptied the file
        // under the first, which went on writing to a file no longer in the folder.
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            closeDescriptor(descriptor)
        } else if errno != EEXIST {
            throw CofferCoreError(.ioFailure, "cannot create the database file \(path): \(String(cString: strerror(errno)))")
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        writes = SQLiteWriteBatcher(pool: pool) { [replays] committed in replays.transactionEnded(committed: committed) }
    }

    /// Applies the numbered migrations not yet applied (docs/SERVER.md, "Storage schema"), each in the
    /// transaction that records it; a second instance waits for the write lock and finds them done.
    public func migrate() async throws {
        _ = try await applyMigrations()
    }

    /// Applies the migrations not yet applied, in one write transaction (SQLite's one writer: an
    /// instance migrating at the same time waits, then finds them applied); the numbers it applied.
    public func applyMigrations() async throws -> [Int] {
        try await pool.write { db in
            try db.execute(sql: RegistrationSQL.schemaTable)
            let applied = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM coffer_schema") ?? 0
            var versions: [Int] = []
            for (index, statements) in RegistrationSQL.migrations.enumerated() where index + 1 > applied {
                for statement in statements + (RegistrationSQL.sqliteOnlyMigrations[index + 1] ?? []) {
                    try db.execute(sql: statement.replacingOccurrences(of: "%SERIAL%", with: "INTEGER PRIMARY KEY AUTOINCREMENT"))
                }
                if index + 1 == RegistrationSQL.userIdentityMigration { try Self.userIdentityStep(in: db) }
                if index + 1 == RegistrationSQL.emailFoldingMigration { try Self.emailFoldingStep(in: db) }
                try db.execute(sql: "INSERT INTO coffer_schema (version) VALUES (?)", arguments: [index + 1])
                versions.append(index + 1)
            }
            return versions
        }
    }

    /// Migration 8's step: every user's `email_key` made again, oldest first (of addresses that now
    /// compare equal, the oldest keeps the key and the others none: no user is lost, and new sign-ups of
    /// the address are refused).
    private static func emailFoldingStep(in db: Database) throws {
        let users = try Row.fetchAll(db, sql: "SELECT id, email FROM coffer_users ORDER BY id").map { (id: $0[0] as Int64, email: $0[1] as String) }
        try db.execute(sql: "UPDATE coffer_users SET email_key = NULL")
        for (id, key) in RegistrationSQL.emailKeys(for: users, taken: []) {
            try db.execute(sql: "UPDATE coffer_users SET email_key = ? WHERE id = ?", arguments: [key, id])
        }
    }

    /// Migration 6's step in Swift (addresses' keys; sign-up links recorded and undone), inside its transaction.
    private static func userIdentityStep(in db: Database) throws {
        let taken = Set(try String.fetchAll(db, sql: "SELECT email_key FROM coffer_users WHERE email_key IS NOT NULL"))
        let users = try Row.fetchAll(db, sql: "SELECT id, email FROM coffer_users WHERE email_key IS NULL ORDER BY id").map { (id: $0[0] as Int64, email: $0[1] as String) }
        for (id, key) in RegistrationSQL.emailKeys(for: users, taken: taken) {
            try db.execute(sql: "UPDATE coffer_users SET email_key = ? WHERE id = ?", arguments: [key, id])
        }
        try db.execute(sql: sqlite(RegistrationSQL.recordSignUpLinks), arguments: [Int64(Date().timeIntervalSince1970)])
        try db.execute(sql: RegistrationSQL.unlinkSignUps)
    }

    /// Registers a key in one savepoint of one write job: the token's check, the key's look-up, its
    /// insert with its event, and the token's use (the database's one writer runs the job alone).
    public func registerKey(_ key: RegisteredKey, spending token: TokenUse?) async throws -> KeyRegistration {
        try await write { db in
            var outcome = KeyRegistration.invalidToken
            try db.inSavepoint {
                var tokenID: String?
                if let token {
                    tokenID = try String.fetchOne(db, sql: Self.sqlite(RegistrationSQL.validToken), arguments: [token.secretHash, token.now, token.platform])
                    guard tokenID != nil else { return .commit }
                }
                if let existing = try Self.key(id: key.keyID, in: db) {
                    outcome = .exists(existing)
                    return .commit
                }
                // Tagged (and wrapped): only under the recorded wrapping key. Untagged: only while no
                // keyring is recorded.
                let wraps = if let masterKeyID = try RegistrationSQL.wrappingKeyNeeded(by: key) {
                    try Self.isWrapping(masterKeyID, in: db)
                } else {
                    try String.fetchOne(db, sql: MasterKeySQL.wrapping) == nil
                }
                guard wraps else {
                    outcome = .wrappingKeyChanged
                    return .commit
                }
                try db.execute(
                    sql: Self.sqlite(RegistrationSQL.insertKey),
                    arguments: [key.keyID, key.algorithm.rawValue, key.publicKey, key.secret, key.createdAt, key.encryptionKey, key.tag]
                )
                try Self.insertEvent(KeyEvent(keyID: key.keyID, at: key.createdAt, kind: .registered, actor: "key:" + key.keyID, detail: key.algorithm.rawValue), in: db)
                if let tokenID {
                    try db.execute(sql: Self.sqlite(RegistrationSQL.spendToken), arguments: [tokenID])
                    guard db.changesCount == 1 else { throw CofferCoreError(.ioFailure, "the registration token's use was not recorded") }
                }
                outcome = .registered(try Self.key(id: key.keyID, in: db) ?? key)
                return .commit
            }
            return outcome
        }
    }

    private static func isWrapping(_ masterKeyID: String, in db: Database) throws -> Bool {
        try Row.fetchOne(db, sql: "SELECT 1 WHERE " + sqlite(MasterKeySQL.isWrapping("$1")), arguments: [masterKeyID]) != nil
    }

    /// The record as read checked against its tag, and the tag of the record to write, made under a key
    /// the keyring still records as wrapping (nil: no tagging, the record is written without a tag).
    private static func retag(_ before: RegisteredKey, as after: RegisteredKey, with tagging: KeyRecordTagging?, in db: Database) throws -> String? {
        guard let tagging else { return nil }
        try tagging.check(before)
        guard try isWrapping(tagging.masterKeyID, in: db) else { throw RegistrationSQL.taggingKeyChanged(tagging) }
        return tagging.tagged(after).tag
    }

    private static func insertEvent(_ event: KeyEvent, in db: Database) throws {
        try db.execute(sql: sqlite(RegistrationSQL.insertEvent), arguments: [event.keyID, event.at, event.kind.rawValue, event.actor, event.detail])
    }

    /// Sets the device's encryption key and writes its event, in one savepoint.
    public func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64) async throws -> EncryptionKeyChange? {
        switch try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: nil, tagging: nil) {
        case .set(let change): change
        case .limited, .unknownKey: nil
        }
    }

    /// Sets a device's encryption key unless it changed `limit` times in the last hour: the count and the
    /// write in one write transaction (SQLite's one writer, across processes sharing the file).
    public func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?) async throws -> EncryptionKeyChangeOutcome {
        try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: limit, tagging: nil)
    }

    /// Sets a device's encryption key as ``setEncryptionKey(_:ofKey:at:changesPerHour:)`` does, the
    /// record checked against its tag and tagged again in the same write transaction.
    public func setEncryptionKey(
        _ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?, tagging: KeyRecordTagging?
    ) async throws -> EncryptionKeyChangeOutcome {
        try await write { db in
            var outcome = EncryptionKeyChangeOutcome.unknownKey
            try db.inSavepoint {
                guard let before = try Self.key(id: keyID, in: db) else { return .commit }
                guard before.encryptionKey != encryptionKey else {
                    try tagging?.check(before)
                    outcome = .set(EncryptionKeyChange(key: before, previous: before.encryptionKey))
                    return .commit
                }
                if let limit {
                    let recent = try Self.activity(db, RegistrationSQL.recentEvents, [keyID, KeyEvent.Kind.encryptionKey.rawValue, time - 3600])
                    if recent.count >= limit {
                        outcome = .limited(recent)
                        return .commit
                    }
                }
                let tag = try Self.retag(before, as: before.replacing(encryptionKey: encryptionKey), with: tagging, in: db)
                try db.execute(sql: Self.sqlite(RegistrationSQL.setEncryptionKey), arguments: [encryptionKey, keyID, tag])
                let detail = EncryptionKeyIdentity.change(from: before.encryptionKey, to: encryptionKey)
                try Self.insertEvent(KeyEvent(keyID: keyID, at: time, kind: .encryptionKey, actor: "key:" + keyID, detail: detail), in: db)
                outcome = .set(EncryptionKeyChange(key: try Self.key(id: keyID, in: db) ?? before, previous: before.encryptionKey))
                return .commit
            }
            return outcome
        }
    }

    /// The key's history, newest first.
    public func events(ofKey keyID: String, limit: Int) async throws -> [KeyEvent] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: Self.sqlite(RegistrationSQL.events), arguments: [keyID, limit]).compactMap { row in
                let row = row.checked("coffer_key_events")
                return try KeyEvent.Kind(rawValue: row(2)).map { KeyEvent(keyID: try row(0), at: try row(1), kind: $0, actor: try row(3), detail: try row(4)) }
            }
        }
    }

    /// Events of one kind since a time.
    public func recentEvents(ofKey keyID: String, kind: KeyEvent.Kind, since time: Int64) async throws -> RecentActivity {
        try await pool.read { db in try Self.activity(db, RegistrationSQL.recentEvents, [keyID, kind.rawValue, time]) }
    }

    /// Data-key versions made since a time.
    public func recentDataKeys(owner: String, since time: Int64) async throws -> RecentActivity {
        try await pool.read { db in try Self.activity(db, RegistrationSQL.recentDataKeys, [owner, time]) }
    }

    private static func activity(_ db: Database, _ statement: String, _ arguments: StatementArguments) throws -> RecentActivity {
        let row = try Row.fetchOne(db, sql: sqlite(statement), arguments: arguments)
        return RecentActivity(count: row?[0] ?? 0, oldest: row?[1])
    }

    /// Users by address, or all.
    public func users(email: String?, limit: Int) async throws -> [RegisteredUser] {
        try await pool.read { db in
            let rows = if let email {
                try Row.fetchAll(db, sql: Self.sqlite(RegistrationSQL.usersByEmail), arguments: [UserFields.emailKey(email), email, limit])
            } else {
                try Row.fetchAll(db, sql: Self.sqlite(RegistrationSQL.allUsers), arguments: [limit])
            }
            return try rows.map(Self.user)
        }
    }

    /// The key registered under `id`, or nil.
    public func key(id: String) async throws -> RegisteredKey? {
        try await pool.read { db in try Self.key(id: id, in: db) }
    }

    private static func key(id: String, in db: Database) throws -> RegisteredKey? {
        try Row.fetchOne(db.cachedStatement(sql: selectKey), arguments: [id]).map(record)
    }

    /// The record a row of ``RegistrationSQL/keyColumns`` holds.
    /// - Throws: ``ServerConfigurationError`` `.invalidRecord` for an algorithm this release does not
    ///   know or a value of another type than Coffer writes (a row written outside Coffer: refused, `503`).
    static func record(_ row: Row) throws(ServerConfigurationError) -> RegisteredKey {
        let row = row.checked("coffer_keys")
        let keyID: String = try row("key_id")
        guard let algorithm = HTTPSignatureAlgorithm(rawValue: try row("algorithm")) else {
            throw ServerConfigurationError(.invalidRecord, "the stored key '\(keyID.clipped(toUTF8: 80))' names an algorithm this release does not know: it was written outside Coffer")
        }
        return RegisteredKey(
            keyID: keyID, algorithm: algorithm, publicKey: try row("public_key"), secret: try row("secret"), createdAt: try row("created_at"),
            state: RegisteredKey.State(rawValue: try row("state")) ?? .revoked, lastUsedAt: try row("last_used_at"), encryptionKey: try row("encryption_key"),
            userID: try row("user_id"), userBinding: try row("user_binding"), tag: try row("record_tag")
        )
    }

    /// The user a row of ``RegistrationSQL/userColumns`` holds.
    static func user(_ row: Row) throws(ServerConfigurationError) -> RegisteredUser {
        let row = row.checked("coffer_users")
        return RegisteredUser(
            id: try row("id"), email: try row("email"), name: try row("name"), keyID: try row("key_id"), createdAt: try row("created_at"),
            tag: try row("record_tag")
        )
    }

    /// The user numbered `id`.
    public func user(id: Int64) async throws -> RegisteredUser? {
        try await pool.read { db in try Row.fetchOne(db, sql: Self.sqlite(RegistrationSQL.userByID), arguments: [id]).map(Self.user) }
    }


    /// The owner's data key at `version`, or the newest.
    public func dataKey(owner: String, version: Int64?) async throws -> StoredDataKey? {
        try await pool.read { db in
            if let version {
                return try Row.fetchOne(db.cachedStatement(sql: Self.selectDataKeyVersion), arguments: [owner, version]).map(Self.dataKey)
            }
            return try Row.fetchOne(db.cachedStatement(sql: Self.selectNewestDataKey), arguments: [owner]).map(Self.dataKey)
        }
    }

    /// Stores a version unless it exists, only under the wrapping master key; the one stored.
    public func insertDataKey(_ key: StoredDataKey) async throws -> StoredDataKey? {
        try await write { db in
            try db.execute(
                sql: Self.sqlite(RegistrationSQL.insertDataKey),
                arguments: [key.owner, key.version, key.dataKeyID, key.wrapped, key.masterKeyID, key.createdAt]
            )
            let row = try Row.fetchOne(
                db, sql: "SELECT \(RegistrationSQL.dataKeyColumns) FROM coffer_data_keys WHERE owner = ? AND version = ?", arguments: [key.owner, key.version]
            )
            return try row.map(Self.dataKey)
        }
    }

    /// The oldest version still handed out.
    public func minimumDataKeyVersion(owner: String) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT min_version FROM coffer_data_key_floors WHERE owner = ?"), arguments: [owner]) ?? 1
        }
    }

    /// The floor, the newest version and the asked (or newest) version, in one read.
    public func lookUpDataKey(owner: String, version: Int64?) async throws -> DataKeyLookup {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.lookUpDataKey), arguments: [owner, version]) else {
                return DataKeyLookup(minimumVersion: 1, newestVersion: nil, key: nil)
            }
            let checked = row.checked("coffer_data_keys")
            let stored: Int64? = try checked(3)
            return DataKeyLookup(
                minimumVersion: try checked(0, as: Int64?.self) ?? 1, newestVersion: try checked(1),
                key: stored == nil ? nil : StoredDataKey(
                    owner: try checked(2), version: try checked(3), dataKeyID: try checked(4), wrapped: try checked(5), masterKeyID: try checked(6),
                    createdAt: try checked(7)
                )
            )
        }
    }

    /// Raises the floor.
    public func setMinimumDataKeyVersion(_ version: Int64, owner: String) async throws {
        try await write { db in try db.execute(sql: Self.sqlite(RegistrationSQL.raiseFloor), arguments: [owner, version]) }
    }

    static func dataKey(_ row: Row) throws(ServerConfigurationError) -> StoredDataKey {
        let row = row.checked("coffer_data_keys")
        return StoredDataKey(
            owner: try row("owner"), version: try row("version"), dataKeyID: try row("data_key_id"), wrapped: try row("wrapped"),
            masterKeyID: try row("master_key_id"), createdAt: try row("created_at")
        )
    }

    /// A page of keys, oldest first.
    public func keys(after position: KeyListPosition?, limit: Int) async throws -> [RegisteredKey] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: Self.sqlite(RegistrationSQL.keysAfter), arguments: [position?.createdAt ?? Int64.min, position?.keyID ?? "", limit]
            ).compactMap(Self.record)
        }
    }

    /// A page of users, oldest first.
    public func users(after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: Self.sqlite(RegistrationSQL.usersAfter), arguments: [id ?? Int64.min, limit])
                .map(Self.user)
        }
    }

    /// Every key, oldest first.
    public func keys(limit: Int) async throws -> [RegisteredKey] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(RegistrationSQL.keyColumns) FROM coffer_keys ORDER BY created_at, key_id LIMIT ?", arguments: [limit])
                .map(Self.record)
        }
    }

    /// Changes a key's state (never out of `revoked`) and writes its event, in one savepoint; the
    /// stored record afterwards, nil for no such key.
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await setState(state, ofKey: keyID, actor: actor, at: time, tagging: nil)
    }

    /// Changes a key's state as ``setState(_:ofKey:actor:at:)`` does, the record checked against its
    /// tag and tagged again in the same savepoint.
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try await write { db in
            var after: RegisteredKey?
            try db.inSavepoint {
                guard let before = try Self.key(id: keyID, in: db) else { return .commit }
                guard before.state != .revoked, before.state != state else {
                    try tagging?.check(before)
                    after = before
                    return .commit
                }
                let tag = try Self.retag(before, as: before.replacing(state: state), with: tagging, in: db)
                try db.execute(sql: Self.sqlite(RegistrationSQL.setState), arguments: [state.rawValue, keyID, tag])
                after = try Self.key(id: keyID, in: db)
                if let after, after.state != before.state {
                    try Self.insertEvent(KeyEvent(keyID: keyID, at: time, kind: .state, actor: actor, detail: after.state.rawValue), in: db)
                }
                return .commit
            }
            return after
        }
    }

    /// Records a use of the key (only ever moves `last_used_at` forward).
    public func recordUse(ofKey keyID: String, at time: Int64) async throws {
        try await write { db in try db.execute(sql: Self.sqlite(RegistrationSQL.recordUse), arguments: [time, keyID]) }
    }

    /// Stores a token under its secret's hash.
    public func insertToken(_ token: RegistrationToken, secretHash: String) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO coffer_tokens (token_id, secret_hash, uses, uses_left, expires_at, platform, revoked, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [token.tokenID, secretHash, token.uses, token.usesLeft, token.expiresAt, token.platform, token.revoked ? 1 : 0, token.createdAt]
            )
        }
    }

    /// Uses a token once, in one statement (the write lock makes it atomic).
    public func consumeToken(secretHash: String, platform: String?, now: Int64) async throws -> RegistrationToken? {
        try await write { db in
            try Row.fetchOne(db, sql: Self.sqlite(RegistrationSQL.consumeToken), arguments: [secretHash, now, platform]).map(Self.token)
        }
    }

    /// Every token, newest first.
    public func tokens(limit: Int) async throws -> [RegistrationToken] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(RegistrationSQL.tokenColumns) FROM coffer_tokens ORDER BY created_at DESC, token_id LIMIT ?", arguments: [limit])
                .map(Self.token)
        }
    }

    /// Revokes a token.
    public func revokeToken(id tokenID: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE coffer_tokens SET revoked = 1 WHERE token_id = ?", arguments: [tokenID])
            return db.changesCount > 0
        }
    }

    private static func token(_ row: Row) throws(ServerConfigurationError) -> RegistrationToken {
        let row = row.checked("coffer_tokens")
        return RegistrationToken(
            tokenID: try row("token_id"), uses: try row("uses"), usesLeft: try row("uses_left"), expiresAt: try row("expires_at"),
            platform: try row("platform"), revoked: try row("revoked", as: Int64.self) != 0, createdAt: try row("created_at")
        )
    }

    /// A shared statement in SQLite's spelling: `?1`… for PostgreSQL's `$1`….
    static func sqlite(_ statement: String) -> String { statement.replacingOccurrences(of: "$", with: "?") }

    /// Adds a user; nil when the address is already registered.
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser? {
        try await write { db in try Self.insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, in: db) }
    }

    /// The user, inside a write job; nil when the address is taken.
    private static func insertUser(email: String, name: String, keyID: String, createdAt: Int64, in db: Database) throws -> RegisteredUser? {
        try db.cachedStatement(sql: userInsert).execute(arguments: [email, UserFields.emailKey(email), name, keyID, createdAt])
        guard db.changesCount == 1 else { return nil }
        return RegisteredUser(id: db.lastInsertedRowID, email: email, name: name, keyID: keyID, createdAt: createdAt)
    }

    /// Writes a replay record inside a write job, sweeping expired ones when `sweep`; false for a replay:
    /// when a live record has the identifier or its Coffer 1.0.0 form (docs/HTTP-SIGNATURES.md, "Replay
    /// protection"). The database's one writer runs the job alone, so look-up and append are one
    /// atomic step (``SQLiteReplayLedger``).
    private static func recordFirstUse(
        _ identifier: String, expiringAt expiry: Int64, now: Int64, sweep: Bool, ledger: SQLiteReplayLedger, in db: Database
    ) throws -> Bool {
        if sweep { try ledger.sweep(now: now, in: db) }
        return try ledger.recordFirstUse(identifier, expiringAt: expiry, now: now, in: db)
    }

    /// Writes the replay record and, on its first use, the user, in one job of one transaction.
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion {
        try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: nil)
    }

    /// Writes the replay record (when given), counts the key's sign-up and stores the user, in one job
    /// of one transaction (SQLite's one writer: the count is exact across processes).
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?
    ) async throws -> UserInsertion {
        try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit, tagging: nil)
    }

    /// Stores the user as ``insertUser(email:name:keyID:createdAt:recordingFirstUse:signUpsPerKey:)`` does
    /// and tags it in the same job, under a key the keyring still records as wrapping.
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?,
        tagging: KeyRecordTagging?
    ) async throws -> UserInsertion {
        let sweep = inserts.next() % RegistrationSQL.sweepInterval == 0
        return try await write { [replays] db in
            if let replay {
                guard try Self.recordFirstUse(replay.identifier, expiringAt: replay.expiry, now: replay.now, sweep: sweep, ledger: replays, in: db) else {
                    return .replayed
                }
            }
            var counted = false
            var inserted: Int64?
            do {
                try db.cachedStatement(sql: Self.countSignUp).execute(arguments: [keyID, Int64(limit ?? -1)])
                guard db.changesCount == 1 else { return .limited }
                counted = true
                guard var user = try Self.insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, in: db) else { return .emailExists }
                inserted = user.id
                if let tagging {
                    user = tagging.tagged(user)
                    try db.execute(sql: Self.sqlite(RegistrationSQL.tagUser), arguments: [user.tag, user.id, tagging.masterKeyID])
                    guard db.changesCount == 1 else { throw RegistrationSQL.taggingKeyChanged(tagging) }
                }
                return .inserted(user)
            } catch {
                // This job must leave nothing (it shares its transaction with others): its record goes
                // too (it was new or expired, so taking it back forgets nothing live), its count and its user.
                if let replay { try? replays.forget(replay.identifier, in: db) }
                if let inserted { try? db.execute(sql: "DELETE FROM coffer_users WHERE id = ?", arguments: [inserted]) }
                if counted { try? db.execute(sql: "UPDATE coffer_keys SET sign_ups = sign_ups - 1 WHERE key_id = ?", arguments: [keyID]) }
                throw error
            }
        }
    }

    /// Links a key to a user and writes its event, in one savepoint; the record afterwards, nil when
    /// either is unknown.
    public func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await linkKey(keyID, toUser: userID, actor: actor, at: time, tagging: nil)
    }

    /// Links a key to a user as ``linkKey(_:toUser:actor:at:)`` does, the record checked against its
    /// tag and tagged again in the same savepoint.
    public func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try await write { db in
            var linked: RegisteredKey?
            try db.inSavepoint {
                guard let before = try Self.key(id: keyID, in: db) else { return .commit }
                // The user's record as this transaction reads it, checked, is the one the link names.
                let users = try tagging == nil ? [] : Row.fetchAll(db, sql: Self.sqlite(RegistrationSQL.userByID), arguments: [userID]).map(Self.user)
                let binding = try tagging?.binding(ofUser: userID, rows: users)
                let tag = try Self.retag(before, as: before.linked(toUser: userID, binding: binding), with: tagging, in: db)
                try db.execute(sql: Self.sqlite(RegistrationSQL.linkKey), arguments: [userID, keyID, tag, binding])
                guard db.changesCount > 0 else { return .commit }
                try Self.insertEvent(KeyEvent(keyID: keyID, at: time, kind: .user, actor: actor, detail: "linked to user \(userID)"), in: db)
                linked = try Self.key(id: keyID, in: db)
                return .commit
            }
            return linked
        }
    }

    /// Records a signature's replay identity; durable (committed) before the answer is given.
    public func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool {
        let sweep = inserts.next() % RegistrationSQL.sweepInterval == 0
        return try await write { [replays] db in
            try Self.recordFirstUse(identifier, expiringAt: expiry, now: now, sweep: sweep, ledger: replays, in: db)
        }
    }

    /// Runs `work` in a write transaction shared with the writes that arrive meanwhile
    /// (``SQLiteWriteBatcher``).
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writes.write(work)
    }

    // The statements of the signed routes, prepared once per connection (GRDB's statement cache):
    // compiling them for every request cost more than running them.
    private static let selectKey = "SELECT \(RegistrationSQL.keyColumns) FROM coffer_keys WHERE key_id = ?"
    private static let lookUpDataKey = sqlite(RegistrationSQL.lookUpDataKey)
    private static let selectDataKeyVersion = "SELECT \(RegistrationSQL.dataKeyColumns) FROM coffer_data_keys WHERE owner = ? AND version = ?"
    private static let selectNewestDataKey = "SELECT \(RegistrationSQL.dataKeyColumns) FROM coffer_data_keys WHERE owner = ? ORDER BY version DESC LIMIT 1"

    /// Without `RETURNING` (the row id is the connection's last insert): SQLite runs `RETURNING` as a
    /// trigger, which opens a statement journal for the statement; freeing its memory each time made the
    /// allocator hand pages back to the kernel (madvise) and fault them in again, ~6 µs a request.
    private static let userInsert = sqlite(RegistrationSQL.insertUser)
    private static let countSignUp = sqlite(RegistrationSQL.countSignUp)

    /// The newest migration applied (0 before any).
    public func schemaVersion() async throws -> Int {
        try await pool.read { db in
            guard try db.tableExists("coffer_schema") else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT MAX(version) FROM coffer_schema") ?? 0
        }
    }

    /// Throws unless the database answers a trivial query.
    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    /// Closes the connections; the store cannot be used afterwards.
    public func close() async throws {
        try pool.close()
    }
}

/// A thread-safe counter.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

/// Closes a descriptor (the store's own `close()` hides the C function inside the class).
private func closeDescriptor(_ descriptor: Int32) {
    close(descriptor)
}
