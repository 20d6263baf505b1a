// One file on purpose: the PostgreSQL store's every statement and transaction, kept beside each other
// so that its locking (token rows FOR UPDATE, the keyring share lock) is reviewed as one piece; the
// SQL text itself is shared with SQLite in RegistrationSQL. The two statements prepared per connection
// wrap texts from here and RegistrationSQL (PostgresPreparedStatements.swift).

import CofferCore
public import CofferHTTPSignatures
import Foundation
public import Logging
import NIOSSL
import PostgresNIO

/// The registration store in PostgreSQL, shared by every server instance that points at the same
/// database: registered keys, users, and the replay cache (an `INSERT … ON CONFLICT` is the atomic
/// "first use" test across instances).
public final class PostgresRegistrationStore: RegistrationStore {
    let client: PostgresClient
    private let runner: Task<Void, Never>
    private let inserts = Counter()
    let logger: Logger
    /// What the connection was made with (for the first connection's own error, ``checkConnection()``).
    private let settings: Settings

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require|verify-ca|verify-full`,
    /// with `sslrootcert=FILE` for the authorities that sign the database's certificate), within `limits`.
    /// - Throws: ``ServerConfigurationError`` for a URL that cannot be used (its message never holds the
    ///   password), or a certificate-authority file that cannot be read (named).
    public init(url: String, logger: Logger = Logger(label: "coffer.postgres"), limits: DatabaseLimits = DatabaseLimits()) throws {
        let settings = try Settings(url: url, limits: limits)
        let client = PostgresClient(configuration: try settings.clientConfiguration(), backgroundLogger: logger)
        self.client = client
        self.logger = logger
        self.settings = settings
        runner = Task { await client.run() }
    }

    /// The client configuration `url` describes, with the default limits.
    /// - Throws: ``ServerConfigurationError`` naming the URL without its password.
    static func configuration(url: String) throws(ServerConfigurationError) -> PostgresClient.Configuration {
        try Settings(url: url, limits: DatabaseLimits()).clientConfiguration()
    }

    /// A URL read once: where to connect, as whom, with which TLS, and within which limits.
    struct Settings: Sendable {
        let host: String
        let port: Int
        let username: String
        let password: String?
        let database: String?
        let sslMode: String
        let certificateAuthorityFile: String?
        let limits: DatabaseLimits

        init(url: String, limits: DatabaseLimits) throws(ServerConfigurationError) {
            let hint = "percent-encode characters such as @ : / ? # [ ] and spaces in the user name and password (@ is %40)"
            guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
                throw ServerConfigurationError(
                    .invalidDatabaseLocation, "the database URL does not parse as postgres://user:password@host:port/database (it is not shown: it may hold a password)", hint: hint
                )
            }
            guard ["postgres", "postgresql"].contains(components.scheme ?? "") else {
                throw ServerConfigurationError(.invalidDatabaseLocation, "\(PostgresRegistrationStore.redacted(url)) is not a postgres://user:password@host:port/database URL", hint: hint)
            }
            let items = components.queryItems ?? []
            let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            sslMode = items.first { $0.name == "sslmode" }?.value ?? "prefer"
            guard ["disable", "prefer", "require", "verify-ca", "verify-full"].contains(sslMode) else {
                throw ServerConfigurationError(.invalidDatabaseLocation, "sslmode must be disable, prefer, require, verify-ca or verify-full, not '\(sslMode.clipped(toUTF8: 32))'")
            }
            certificateAuthorityFile = limits.certificateAuthorityFile ?? items.first { $0.name == "sslrootcert" }?.value
            if certificateAuthorityFile != nil, !sslMode.hasPrefix("verify-") {
                throw ServerConfigurationError(
                    .invalidDatabaseLocation, "a certificate authority for the database is used only with sslmode=verify-ca or verify-full, not \(sslMode)",
                    hint: "add sslmode=verify-full to the database URL"
                )
            }
            self.host = host
            port = components.port ?? 5432
            username = components.percentEncodedUser?.removingPercentEncoding ?? "postgres"
            password = components.percentEncodedPassword?.removingPercentEncoding ?? items.first { $0.name == "password" }?.value
            self.database = database.isEmpty ? nil : database
            self.limits = limits
        }

        /// The TLS settings `sslmode` asks for: `require` and stronger check the chain (against
        /// ``certificateAuthorityFile`` when given), `verify-ca` without the host name.
        func tlsConfiguration() throws(ServerConfigurationError) -> TLSConfiguration {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let certificateAuthorityFile {
                do {
                    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificateAuthorityFile))
                } catch {
                    throw ServerConfigurationError(
                        .invalidDatabaseLocation, "the database's certificate authority \(certificateAuthorityFile) cannot be read as PEM certificates: \(error)", underlying: error
                    )
                }
            }
            if sslMode == "verify-ca" { tls.certificateVerification = .noHostnameVerification }
            return tls
        }

        func clientConfiguration() throws(ServerConfigurationError) -> PostgresClient.Configuration {
            let tls: PostgresClient.Configuration.TLS
            switch sslMode {
            case "disable": tls = .disable
            case "prefer": tls = .prefer(try tlsConfiguration())
            default: tls = .require(try tlsConfiguration())
            }
            var configuration = PostgresClient.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
            configuration.options.connectTimeout = limits.connectTimeout
            configuration.options.maximumConnections = limits.maximumConnections
            configuration.options.additionalStartupParameters = startupParameters
            return configuration
        }

        /// `statement_timeout` in milliseconds, when there is a bound.
        var startupParameters: [(String, String)] {
            guard let milliseconds = statementTimeoutMilliseconds else { return [] }
            return [("statement_timeout", String(milliseconds))]
        }

        /// The statement bound in milliseconds (at least 1), nil when there is none.
        var statementTimeoutMilliseconds: Int64? {
            guard let bound = limits.statementTimeout else { return nil }
            return max(1, bound.components.seconds * 1000 + bound.components.attoseconds / 1_000_000_000_000_000)
        }

        /// One connection's configuration, as the pool's connections are made but allowed at least
        /// `minimumConnectTimeout` to connect (the start's one connection is not a request's wait).
        func connectionConfiguration(minimumConnectTimeout: Duration = .zero) throws -> PostgresConnection.Configuration {
            let tls: PostgresConnection.Configuration.TLS
            switch sslMode {
            case "disable": tls = .disable
            case "prefer": tls = .prefer(try NIOSSLContext(configuration: try tlsConfiguration()))
            default: tls = .require(try NIOSSLContext(configuration: try tlsConfiguration()))
            }
            var configuration = PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
            configuration.options.connectTimeout = .init(max(limits.connectTimeout, minimumConnectTimeout))
            configuration.options.additionalStartupParameters = startupParameters
            return configuration
        }
    }

    /// Makes one connection, outside the pool, and closes it (allowing it at least 10 seconds, whatever
    /// the limits' connection wait): a pool retries a refused sign-in for ever, while this fails at once
    /// with PostgreSQL's own reason (`28P01` wrong password, `3D000` no
    /// such database, a TLS failure…), which the error carries.
    /// - Throws: ``ServerConfigurationError`` `.databaseUnavailable` saying PostgreSQL's error.
    public func checkConnection() async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: try settings.connectionConfiguration(minimumConnectTimeout: .seconds(10)), id: 0, logger: logger)
        } catch {
            throw ServerConfigurationError(
                .databaseUnavailable, "cannot connect to PostgreSQL at \(settings.host):\(settings.port): \(DatabaseFailure.describe(error))",
                hint: "check that the database server runs and that the URL's host, port, user, password, database and sslmode are right", underlying: error
            )
        }
        if let asked = settings.statementTimeoutMilliseconds {
            await PostgresStatementBound.warnUnlessItHolds(asked: asked, on: connection, role: settings.username, logger: logger)
        }
        try? await connection.close()
    }

    /// The URL for messages and logs, never with its password: the user-info password and a `password`
    /// query parameter become `***`. A URL that does not parse is not shown at all — where its password
    /// ends cannot be known — only its scheme.
    public static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.host != nil else {
            let scheme = url.range(of: "://").map { url[..<$0.lowerBound].clipped(toUTF8: 16) } ?? "a database"
            return "the \(scheme) URL (not shown: it does not parse, and may hold a password)"
        }
        if components.password != nil { components.password = "***" }
        if let items = components.queryItems, items.contains(where: { $0.name.lowercased() == "password" }) {
            components.queryItems = items.map { $0.name.lowercased() == "password" ? URLQueryItem(name: $0.name, value: "***") : $0 }
        }
        return components.string ?? "the database URL (not shown)"
    }

    /// Applies the numbered migrations not yet applied (docs/SERVER.md, "Storage schema"), each in the
    /// transaction that records it, under an advisory lock: one instance migrates, the others wait and
    /// find the work done.
    public func migrate() async throws {
        _ = try await applyMigrations()
    }

    /// Applies the migrations not yet applied, each in its own transaction, under a lock every instance
    /// takes to migrate (one that waited finds them applied); the numbers this call applied.
    public func applyMigrations() async throws -> [Int] {
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(7304182)", logger: logger)
            var versions: [Int] = []
            do {
                try await connection.query(PostgresQuery(unsafeSQL: RegistrationSQL.schemaTable), logger: logger)
                var applied = 0
                for try await version in try await connection.query("SELECT COALESCE(MAX(version), 0) FROM coffer_schema", logger: logger).decode(Int64.self) {
                    applied = Int(version)
                }
                for (index, statements) in RegistrationSQL.migrations.enumerated() where index + 1 > applied {
                    try await connection.query("BEGIN", logger: logger)
                    do {
                        for statement in statements {
                            try await connection.query(
                                PostgresQuery(unsafeSQL: statement.replacingOccurrences(of: "%SERIAL%", with: "BIGSERIAL PRIMARY KEY")), logger: logger
                            )
                        }
                        if index + 1 == RegistrationSQL.userIdentityMigration { try await userIdentityStep(on: connection) }
                        if index + 1 == RegistrationSQL.emailFoldingMigration { try await emailFoldingStep(on: connection) }
                        try await connection.query("INSERT INTO coffer_schema (version) VALUES (\(Int64(index + 1)))", logger: logger)
                        try await connection.query("COMMIT", logger: logger)
                        versions.append(index + 1)
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        throw error
                    }
                }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(7304182)", logger: logger)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(7304182)", logger: logger)
            return versions
        }
    }

    /// Migration 8's step: every user's `email_key` made again, oldest first, inside its transaction.
    private func emailFoldingStep(on connection: PostgresConnection) async throws {
        var users: [(id: Int64, email: String)] = []
        for try await (id, email) in try await connection.query("SELECT id, email FROM coffer_users ORDER BY id", logger: logger).decode((Int64, String).self) {
            users.append((id, email))
        }
        try await connection.query("UPDATE coffer_users SET email_key = NULL", logger: logger)
        for (id, key) in RegistrationSQL.emailKeys(for: users, taken: []) {
            try await connection.query("UPDATE coffer_users SET email_key = \(key) WHERE id = \(id)", logger: logger)
        }
    }

    /// Migration 6's step in Swift (addresses' keys; sign-up links recorded and undone), inside its transaction.
    private func userIdentityStep(on connection: PostgresConnection) async throws {
        var taken = Set<String>()
        for try await key in try await connection.query("SELECT email_key FROM coffer_users WHERE email_key IS NOT NULL", logger: logger).decode(String.self) {
            taken.insert(key)
        }
        var users: [(id: Int64, email: String)] = []
        for try await (id, email) in try await connection.query("SELECT id, email FROM coffer_users WHERE email_key IS NULL ORDER BY id", logger: logger).decode((Int64, String).self) {
            users.append((id, email))
        }
        for (id, key) in RegistrationSQL.emailKeys(for: users, taken: taken) {
            try await connection.query("UPDATE coffer_users SET email_key = \(key) WHERE id = \(id)", logger: logger)
        }
        try await connection.query(try Self.query(RegistrationSQL.recordSignUpLinks, [Int64(Date().timeIntervalSince1970)]), logger: logger)
        try await connection.query(PostgresQuery(unsafeSQL: RegistrationSQL.unlinkSignUps), logger: logger)
    }

    /// Registers a key in one transaction that locks the token's row first (`FOR UPDATE`): the
    /// registrations spending one token run one after the other, and of two inserts of one key the
    /// second waits for the first and then finds it.
    public func registerKey(_ key: RegisteredKey, spending token: TokenUse?) async throws -> KeyRegistration {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection -> KeyRegistration in
            var tokenID: String?
            if let token {
                let rows = try await connection.query(
                    try Self.query(RegistrationSQL.validToken + " FOR UPDATE", [token.secretHash, token.now, token.platform]), logger: logger
                )
                for try await id in rows.decode(String.self) { tokenID = id }
                guard tokenID != nil else { return .invalidToken }
            }
            if let existing = try await Self.keys(connection.query(try Self.selectKey(key.keyID), logger: logger)).first { return .exists(existing) }
            if let masterKeyID = try RegistrationSQL.wrappingKeyNeeded(by: key) {
                // Tagged (and wrapped): only under the recorded wrapping key, share-locked until this
                // transaction ends (a promotion waits for it).
                guard try await Self.isWrapping(masterKeyID, on: connection, logger: logger) else { return .wrappingKeyChanged }
            } else {
                // Untagged only while no keyring is recorded; the table's share lock makes a keyring
                // recorded meanwhile wait for this transaction.
                try await connection.query("LOCK TABLE coffer_master_keyring IN SHARE MODE", logger: logger)
                var recorded = false
                for try await _ in try await connection.query(PostgresQuery(unsafeSQL: MasterKeySQL.wrapping), logger: logger).decode(String.self) {
                    recorded = true
                }
                guard !recorded else { return .wrappingKeyChanged }
            }
            let inserted = try await connection.query(
                try Self.query(
                    RegistrationSQL.insertKey + " RETURNING key_id",
                    [key.keyID, key.algorithm.rawValue, key.publicKey, key.secret, key.createdAt, key.encryptionKey, key.tag]
                ),
                logger: logger
            )
            var stored = false
            for try await _ in inserted.decode(String.self) { stored = true }
            guard stored else {
                // Another transaction inserted it meanwhile (this insert waited for its commit).
                guard let existing = try await Self.keys(connection.query(try Self.selectKey(key.keyID), logger: logger)).first else {
                    throw CofferCoreError(.ioFailure, "PostgreSQL neither inserted nor found the key \(key.keyID)")
                }
                return .exists(existing)
            }
            try await connection.query(
                try Self.event(KeyEvent(keyID: key.keyID, at: key.createdAt, kind: .registered, actor: "key:" + key.keyID, detail: key.algorithm.rawValue)),
                logger: logger
            )
            if let tokenID {
                var spent = false
                for try await _ in try await connection.query(try Self.query(RegistrationSQL.spendToken + " RETURNING token_id", [tokenID]), logger: logger).decode(String.self) {
                    spent = true
                }
                guard spent else { throw CofferCoreError(.ioFailure, "the registration token's use was not recorded") }
            }
            return .registered(try await Self.keys(connection.query(try Self.selectKey(key.keyID), logger: logger)).first ?? key)
        }
    }

    /// Whether the keyring records `masterKeyID` as wrapping, its row share-locked until the transaction
    /// ends (a promotion waits for it).
    private static func isWrapping(_ masterKeyID: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let wrapping = try query("SELECT 1 FROM coffer_master_keyring WHERE key_id = $1 AND state = 'wrapping' FOR SHARE", [masterKeyID])
        for try await _ in try await connection.query(wrapping, logger: logger).decode(Int32.self) { return true }
        return false
    }

    /// The record as read (locked) checked against its tag, and the tag of the record to write, made
    /// under a key the keyring still records as wrapping (nil: no tagging, written without a tag).
    private static func retag(
        _ before: RegisteredKey, as after: RegisteredKey, with tagging: KeyRecordTagging?, on connection: PostgresConnection, logger: Logger
    ) async throws -> String? {
        guard let tagging else { return nil }
        try tagging.check(before)
        guard try await isWrapping(tagging.masterKeyID, on: connection, logger: logger) else { throw RegistrationSQL.taggingKeyChanged(tagging) }
        return tagging.tagged(after).tag
    }

    /// The key's row, locked until the transaction ends.
    private static func lockedKey(_ keyID: String, on connection: PostgresConnection, logger: Logger) async throws -> RegisteredKey? {
        let locked = try query("SELECT \(RegistrationSQL.keyColumns) FROM coffer_keys WHERE key_id = $1 FOR UPDATE", [keyID])
        return try await keys(connection.query(locked, logger: logger)).first
    }

    private static func selectKey(_ keyID: String) throws -> PostgresQuery {
        try query("SELECT \(RegistrationSQL.keyColumns) FROM coffer_keys WHERE key_id = $1", [keyID])
    }

    private static func event(_ event: KeyEvent) throws -> PostgresQuery {
        try query(RegistrationSQL.insertEvent, [event.keyID, event.at, event.kind.rawValue, event.actor, event.detail])
    }

    /// Sets the device's encryption key and writes its event, in one transaction that locks the key's row.
    public func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64) async throws -> EncryptionKeyChange? {
        switch try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: nil, tagging: nil) {
        case .set(let change): change
        case .limited, .unknownKey: nil
        }
    }

    /// Sets a device's encryption key unless it changed `limit` times in the last hour: the key's row is
    /// locked first, so every change of one key waits for the one before it to commit, and the count
    /// (a statement after the lock) sees it.
    public func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?) async throws -> EncryptionKeyChangeOutcome {
        try await setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: limit, tagging: nil)
    }

    /// Sets a device's encryption key as ``setEncryptionKey(_:ofKey:at:changesPerHour:)`` does, the
    /// locked record checked against its tag and tagged again in the same transaction.
    public func setEncryptionKey(
        _ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?, tagging: KeyRecordTagging?
    ) async throws -> EncryptionKeyChangeOutcome {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection -> EncryptionKeyChangeOutcome in
            guard let before = try await Self.lockedKey(keyID, on: connection, logger: logger) else { return .unknownKey }
            guard before.encryptionKey != encryptionKey else {
                try tagging?.check(before)
                return .set(EncryptionKeyChange(key: before, previous: before.encryptionKey))
            }
            if let limit {
                let counted = try Self.query(RegistrationSQL.recentEvents, [keyID, KeyEvent.Kind.encryptionKey.rawValue, time - 3600])
                for try await (count, oldest) in try await connection.query(counted, logger: logger).decode((Int64, Int64?).self) where count >= Int64(limit) {
                    return .limited(RecentActivity(count: Int(count), oldest: oldest))
                }
            }
            let tag = try await Self.retag(before, as: before.replacing(encryptionKey: encryptionKey), with: tagging, on: connection, logger: logger)
            try await connection.query(try Self.query(RegistrationSQL.setEncryptionKey, [encryptionKey, keyID, tag]), logger: logger)
            let detail = EncryptionKeyIdentity.change(from: before.encryptionKey, to: encryptionKey)
            try await connection.query(try Self.event(KeyEvent(keyID: keyID, at: time, kind: .encryptionKey, actor: "key:" + keyID, detail: detail)), logger: logger)
            let after = try await Self.keys(connection.query(try Self.selectKey(keyID), logger: logger)).first ?? before
            return .set(EncryptionKeyChange(key: after, previous: before.encryptionKey))
        }
    }

    /// The key's history, newest first.
    public func events(ofKey keyID: String, limit: Int) async throws -> [KeyEvent] {
        let rows = try await client.query(try Self.query(RegistrationSQL.events, [keyID, Int64(limit)]), logger: logger)
        var events: [KeyEvent] = []
        for try await (keyID, at, kind, actor, detail) in rows.decode((String, Int64, String, String, String?).self) {
            if let kind = KeyEvent.Kind(rawValue: kind) { events.append(KeyEvent(keyID: keyID, at: at, kind: kind, actor: actor, detail: detail)) }
        }
        return events
    }

    /// Events of one kind since a time.
    public func recentEvents(ofKey keyID: String, kind: KeyEvent.Kind, since time: Int64) async throws -> RecentActivity {
        try await activity(try Self.query(RegistrationSQL.recentEvents, [keyID, kind.rawValue, time]))
    }

    /// Data-key versions made since a time.
    public func recentDataKeys(owner: String, since time: Int64) async throws -> RecentActivity {
        try await activity(try Self.query(RegistrationSQL.recentDataKeys, [owner, time]))
    }

    private func activity(_ query: PostgresQuery) async throws -> RecentActivity {
        for try await (count, oldest) in try await client.query(query, logger: logger).decode((Int64, Int64?).self) {
            return RecentActivity(count: Int(count), oldest: oldest)
        }
        return RecentActivity(count: 0, oldest: nil)
    }

    /// Users by address, or all.
    public func users(email: String?, limit: Int) async throws -> [RegisteredUser] {
        let query = try email.map { try Self.query(RegistrationSQL.usersByEmail, [UserFields.emailKey($0), $0, Int64(limit)]) }
            ?? Self.query(RegistrationSQL.allUsers, [Int64(limit)])
        return try await Self.users(client.query(query, logger: logger))
    }

    /// The users of rows of ``RegistrationSQL/userColumns``.
    static func users(_ rows: PostgresRowSequence) async throws -> [RegisteredUser] {
        var users: [RegisteredUser] = []
        do {
            for try await (id, email, name, keyID, createdAt, tag) in rows.decode((Int64, String, String, String, Int64, String?).self) {
                users.append(RegisteredUser(id: id, email: email, name: name, keyID: keyID, createdAt: createdAt, tag: tag))
            }
        } catch is PostgresDecodingError {
            throw ServerConfigurationError(.invalidRecord, "a row of coffer_users holds a value of another type than Coffer writes: it was written outside Coffer")
        }
        return users
    }

    /// The user numbered `id`.
    public func user(id: Int64) async throws -> RegisteredUser? {
        try await Self.users(client.query(try Self.query(RegistrationSQL.userByID, [id]), logger: logger)).first
    }

    /// The key registered under `id`, or nil.
    public func key(id: String) async throws -> RegisteredKey? {
        try await keys(where: "WHERE key_id = $1", [id]).first
    }

    /// A page of keys, oldest first.
    public func keys(after position: KeyListPosition?, limit: Int) async throws -> [RegisteredKey] {
        let query = try Self.query(RegistrationSQL.keysAfter, [position?.createdAt ?? Int64.min, position?.keyID ?? "", Int64(limit)])
        return try await Self.keys(client.query(query, logger: logger))
    }

    /// A page of users, oldest first.
    public func users(after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        let query = try Self.query(RegistrationSQL.usersAfter, [id ?? Int64.min, Int64(limit)])
        return try await Self.users(client.query(query, logger: logger))
    }

    /// Every key, oldest first.
    public func keys(limit: Int) async throws -> [RegisteredKey] {
        try await keys(where: "ORDER BY created_at, key_id LIMIT $1", [Int64(limit)])
    }

    private typealias KeyRow = (String, String, String?, String?, Int64, String, Int64?, String?, Int64?, String?, String?)

    private func keys(where clause: String, _ values: [any PostgresEncodable & Sendable]) async throws -> [RegisteredKey] {
        try await Self.keys(client.query(try Self.query("SELECT \(RegistrationSQL.keyColumns) FROM coffer_keys \(clause)", values), logger: logger))
    }

    /// The key records of rows of ``RegistrationSQL/keyColumns``.
    static func keys(_ rows: PostgresRowSequence) async throws -> [RegisteredKey] {
        var keys: [RegisteredKey] = []
        do {
            for try await row in rows.decode(KeyRow.self) { keys.append(try record(row)) }
        } catch is PostgresDecodingError {
            // Its text quotes the row, which may hold a secret.
            throw ServerConfigurationError(.invalidRecord, "a row of coffer_keys holds a value of another type than Coffer writes: it was written outside Coffer")
        }
        return keys
    }

    /// The record of a decoded key row.
    /// - Throws: ``ServerConfigurationError`` `.invalidRecord` for an algorithm this release does not know.
    private static func record(_ row: KeyRow) throws(ServerConfigurationError) -> RegisteredKey {
        let (keyID, algorithm, publicKey, secret, createdAt, state, lastUsedAt, encryptionKey, userID, tag, userBinding) = row
        guard let algorithm = HTTPSignatureAlgorithm(rawValue: algorithm) else {
            throw ServerConfigurationError(.invalidRecord, "the stored key '\(keyID.clipped(toUTF8: 80))' names an algorithm this release does not know: it was written outside Coffer")
        }
        return RegisteredKey(
            keyID: keyID, algorithm: algorithm, publicKey: publicKey, secret: secret, createdAt: createdAt,
            state: RegisteredKey.State(rawValue: state) ?? .revoked, lastUsedAt: lastUsedAt, encryptionKey: encryptionKey, userID: userID,
            userBinding: userBinding, tag: tag
        )
    }

    /// The owner's data key at `version`, or the newest.
    public func dataKey(owner: String, version: Int64?) async throws -> StoredDataKey? {
        let select = "SELECT \(RegistrationSQL.dataKeyColumns) FROM coffer_data_keys WHERE owner = $1"
        let query = try version.map { try Self.query(select + " AND version = $2", [owner, $0]) }
            ?? Self.query(select + " ORDER BY version DESC LIMIT 1", [owner])
        let rows = try await client.query(query, logger: logger)
        for try await (owner, version, id, wrapped, master, created) in rows.decode((String, Int64, String, String, String, Int64).self) {
            return StoredDataKey(owner: owner, version: version, dataKeyID: id, wrapped: wrapped, masterKeyID: master, createdAt: created)
        }
        return nil
    }

    /// Stores a version unless it exists, only under the wrapping master key; the one stored (`ON
    /// CONFLICT DO NOTHING`, then read back).
    public func insertDataKey(_ key: StoredDataKey) async throws -> StoredDataKey? {
        try await client.query(
            try Self.query(RegistrationSQL.insertDataKey, [key.owner, key.version, key.dataKeyID, key.wrapped, key.masterKeyID, key.createdAt]),
            logger: logger
        )
        return try await dataKey(owner: key.owner, version: key.version)
    }

    /// The oldest version still handed out.
    public func minimumDataKeyVersion(owner: String) async throws -> Int64 {
        let rows = try await client.query("SELECT min_version FROM coffer_data_key_floors WHERE owner = \(owner)", logger: logger)
        for try await version in rows.decode(Int64.self) { return version }
        return 1
    }

    /// The floor, the newest version and the asked (or newest) version, in one query.
    public func lookUpDataKey(owner: String, version: Int64?) async throws -> DataKeyLookup {
        let rows = try await client.execute(LookUpDataKeyStatement(owner: owner, version: version), logger: logger)
        for try await (floor, newest, owner, version, id, wrapped, master, created) in rows {
            var key: StoredDataKey?
            if let owner, let version, let id, let wrapped, let master, let created {
                key = StoredDataKey(owner: owner, version: version, dataKeyID: id, wrapped: wrapped, masterKeyID: master, createdAt: created)
            }
            return DataKeyLookup(minimumVersion: floor ?? 1, newestVersion: newest, key: key)
        }
        return DataKeyLookup(minimumVersion: 1, newestVersion: nil, key: nil)
    }

    /// Raises the floor.
    public func setMinimumDataKeyVersion(_ version: Int64, owner: String) async throws {
        try await client.query(try Self.query(RegistrationSQL.raiseFloor, [owner, version]), logger: logger)
    }

    /// Changes a key's state (never out of `revoked`) and writes its event, in one transaction that
    /// locks the key's row; the stored record afterwards, nil for no such key.
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await setState(state, ofKey: keyID, actor: actor, at: time, tagging: nil)
    }

    /// Changes a key's state as ``setState(_:ofKey:actor:at:)`` does, the locked record checked against
    /// its tag and tagged again in the same transaction.
    public func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection -> RegisteredKey? in
            guard let before = try await Self.lockedKey(keyID, on: connection, logger: logger) else { return nil }
            guard before.state != .revoked, before.state != state else {
                try tagging?.check(before)
                return before
            }
            let tag = try await Self.retag(before, as: before.replacing(state: state), with: tagging, on: connection, logger: logger)
            try await connection.query(try Self.query(RegistrationSQL.setState, [state.rawValue, keyID, tag]), logger: logger)
            let after = try await Self.keys(connection.query(try Self.selectKey(keyID), logger: logger)).first
            if let after, after.state != before.state {
                try await connection.query(try Self.event(KeyEvent(keyID: keyID, at: time, kind: .state, actor: actor, detail: after.state.rawValue)), logger: logger)
            }
            return after
        }
    }

    /// Records a use of the key (only ever moves `last_used_at` forward).
    public func recordUse(ofKey keyID: String, at time: Int64) async throws {
        try await client.query(try Self.query(RegistrationSQL.recordUse, [time, keyID]), logger: logger)
    }

    /// Stores a token under its secret's hash.
    public func insertToken(_ token: RegistrationToken, secretHash: String) async throws {
        try await client.query("""
            INSERT INTO coffer_tokens (token_id, secret_hash, uses, uses_left, expires_at, platform, revoked, created_at)
            VALUES (\(token.tokenID), \(secretHash), \(Int64(token.uses)), \(Int64(token.usesLeft)), \(token.expiresAt), \(token.platform), \(Int64(token.revoked ? 1 : 0)), \(token.createdAt))
            """, logger: logger)
    }

    /// Uses a token once; one `UPDATE … RETURNING`, atomic across instances.
    public func consumeToken(secretHash: String, platform: String?, now: Int64) async throws -> RegistrationToken? {
        try await tokens(try Self.query(RegistrationSQL.consumeToken, [secretHash, now, platform])).first
    }

    /// Every token, newest first.
    public func tokens(limit: Int) async throws -> [RegistrationToken] {
        try await tokens(try Self.query("SELECT \(RegistrationSQL.tokenColumns) FROM coffer_tokens ORDER BY created_at DESC, token_id LIMIT $1", [Int64(limit)]))
    }

    /// Revokes a token.
    public func revokeToken(id tokenID: String) async throws -> Bool {
        let rows = try await client.query("UPDATE coffer_tokens SET revoked = 1 WHERE token_id = \(tokenID) RETURNING token_id", logger: logger)
        for try await _ in rows.decode(String.self) { return true }
        return false
    }

    private func tokens(_ query: PostgresQuery) async throws -> [RegistrationToken] {
        let rows = try await client.query(query, logger: logger)
        var tokens: [RegistrationToken] = []
        for try await (id, uses, usesLeft, expiresAt, platform, revoked, createdAt) in rows.decode((String, Int64, Int64, Int64, String?, Int64, Int64).self) {
            tokens.append(RegistrationToken(
                tokenID: id, uses: Int(uses), usesLeft: Int(usesLeft), expiresAt: expiresAt, platform: platform, revoked: revoked != 0, createdAt: createdAt
            ))
        }
        return tokens
    }

    /// A statement with `$1`… bound to `values`, in order.
    static func query(_ sql: String, _ values: [(any PostgresEncodable & Sendable)?]) throws -> PostgresQuery {
        var binds = PostgresBindings()
        for value in values {
            if let value { try binds.append(value) } else { binds.appendNull() }
        }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// Adds a user; nil when the address is already registered.
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser? {
        let rows = try await client.query(
            try Self.query(RegistrationSQL.insertUser + " RETURNING id", [email, UserFields.emailKey(email), name, keyID, createdAt]), logger: logger
        )
        for try await id in rows.decode(Int64.self) {
            return RegisteredUser(id: id, email: email, name: name, keyID: keyID, createdAt: createdAt)
        }
        return nil
    }

    /// Writes the replay record and, on its first use, the user: one statement, so both or neither.
    /// A concurrent statement with the same record waits for this one and then finds it (the replay
    /// insert's `ON CONFLICT`), so of two copies exactly one stores the user.
    public func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion {
        try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: nil)
    }

    /// Writes the replay record (when given), the key's sign-up count and the user: one statement. The
    /// count's `UPDATE` locks the key's row, so a sign-up by the same key at once waits for this one and
    /// then checks the limit against the count it left.
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?
    ) async throws -> UserInsertion {
        try await insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit, tagging: nil)
    }

    /// Stores the user as ``insertUser(email:name:keyID:createdAt:recordingFirstUse:signUpsPerKey:)`` does;
    /// with `tagging`, that statement and the user's tag (under a key still recorded as wrapping) run in
    /// one transaction.
    public func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?,
        tagging: KeyRecordTagging?
    ) async throws -> UserInsertion {
        guard let tagging else {
            let (client, logger) = (client, logger)
            return try await Self.insertUser(
                email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit, sweeping: inserts,
                running: { try await client.query($0, logger: logger) }
            )
        }
        let (logger, inserts) = (logger, inserts)
        return try await client.withTransaction(logger: logger) { connection -> UserInsertion in
            let outcome = try await Self.insertUser(
                email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit, sweeping: inserts,
                running: { try await connection.query($0, logger: logger) }
            )
            guard case .inserted(let user) = outcome else { return outcome }
            let tagged = tagging.tagged(user)
            var done = false
            let update = try Self.query(RegistrationSQL.tagUser + " RETURNING id", [tagged.tag, tagged.id, tagging.masterKeyID])
            for try await _ in try await connection.query(update, logger: logger).decode(Int64.self) { done = true }
            // Thrown, the transaction is rolled back: no user, no count, no replay record.
            guard done else { throw RegistrationSQL.taggingKeyChanged(tagging) }
            return .inserted(tagged)
        }
    }

    /// The statement of ``insertUser(email:name:keyID:createdAt:recordingFirstUse:signUpsPerKey:)``, on
    /// the client or on a transaction's connection.
    private static func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?,
        sweeping inserts: Counter, running run: (PostgresQuery) async throws -> PostgresRowSequence
    ) async throws -> UserInsertion {
        let limit = Int64(limit ?? -1)
        let rows: PostgresRowSequence
        if let replay {
            if inserts.next() % RegistrationSQL.sweepInterval == 0 {
                _ = try await run("DELETE FROM coffer_replay WHERE expires_at <= \(replay.now)")
            }
            rows = try await run("""
                WITH replay AS (
                    INSERT INTO coffer_replay (id, expires_at) SELECT \(replay.identifier), \(replay.expiry)
                    WHERE NOT EXISTS (SELECT 1 FROM coffer_replay WHERE id = \(replay.earlierIdentifier ?? replay.identifier) AND expires_at > \(replay.now))
                    ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE coffer_replay.expires_at <= \(replay.now)
                    RETURNING id
                ), counted AS (
                    UPDATE coffer_keys SET sign_ups = sign_ups + 1
                    WHERE key_id = \(keyID) AND EXISTS (SELECT 1 FROM replay) AND (\(limit) < 0 OR sign_ups < \(limit))
                    RETURNING key_id
                ), inserted AS (
                    INSERT INTO coffer_users (email, email_key, name, key_id, created_at)
                    SELECT \(email), \(UserFields.emailKey(email)), \(name), \(keyID), \(createdAt) WHERE EXISTS (SELECT 1 FROM counted)
                    ON CONFLICT DO NOTHING RETURNING id
                )
                SELECT (SELECT COUNT(*) FROM replay), (SELECT COUNT(*) FROM counted), (SELECT id FROM inserted)
                """)
        } else {
            rows = try await run("""
                WITH counted AS (
                    UPDATE coffer_keys SET sign_ups = sign_ups + 1
                    WHERE key_id = \(keyID) AND (\(limit) < 0 OR sign_ups < \(limit))
                    RETURNING key_id
                ), inserted AS (
                    INSERT INTO coffer_users (email, email_key, name, key_id, created_at)
                    SELECT \(email), \(UserFields.emailKey(email)), \(name), \(keyID), \(createdAt) WHERE EXISTS (SELECT 1 FROM counted)
                    ON CONFLICT DO NOTHING RETURNING id
                )
                SELECT CAST(1 AS BIGINT), (SELECT COUNT(*) FROM counted), (SELECT id FROM inserted)
                """)
        }
        for try await (recorded, counted, id) in rows.decode((Int64, Int64, Int64?).self) {
            guard recorded > 0 else { return .replayed }
            guard counted > 0 else { return .limited }
            guard let id else { return .emailExists }
            return .inserted(RegisteredUser(id: id, email: email, name: name, keyID: keyID, createdAt: createdAt))
        }
        throw CofferCoreError(.ioFailure, "PostgreSQL answered the user insert with no row")
    }

    /// Links a key to a user and writes its event, in one transaction; the record afterwards, nil when
    /// either is unknown.
    public func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await linkKey(keyID, toUser: userID, actor: actor, at: time, tagging: nil)
    }

    /// Links a key to a user as ``linkKey(_:toUser:actor:at:)`` does, the locked record checked against
    /// its tag and tagged again in the same transaction.
    public func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection -> RegisteredKey? in
            guard let before = try await Self.lockedKey(keyID, on: connection, logger: logger) else { return nil }
            // The user's record as this transaction reads it, checked, is the one the link names.
            let users = tagging == nil ? [] : try await Self.users(connection.query(try Self.query(RegistrationSQL.userByID, [userID]), logger: logger))
            let binding = try tagging?.binding(ofUser: userID, rows: users)
            let tag = try await Self.retag(before, as: before.linked(toUser: userID, binding: binding), with: tagging, on: connection, logger: logger)
            var linked = false
            let link = try Self.query(RegistrationSQL.linkKey + " RETURNING key_id", [userID, keyID, tag, binding])
            for try await _ in try await connection.query(link, logger: logger).decode(String.self) {
                linked = true
            }
            guard linked else { return nil }
            try await connection.query(try Self.event(KeyEvent(keyID: keyID, at: time, kind: .user, actor: actor, detail: "linked to user \(userID)")), logger: logger)
            return try await Self.keys(connection.query(try Self.selectKey(keyID), logger: logger)).first
        }
    }

    public func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool {
        if inserts.next() % RegistrationSQL.sweepInterval == 0 {
            try await client.query("DELETE FROM coffer_replay WHERE expires_at <= \(now)", logger: logger)
        }
        let statement = RecordFirstUseStatement(
            identifier: identifier, expiry: expiry, now: now, earlierIdentifier: HTTPReplayRecord.earlierIdentifier(of: identifier) ?? identifier
        )
        for try await _ in try await client.execute(statement, logger: logger) { return true }
        return false
    }

    /// The atomic "first use" test (docs/HTTP-SIGNATURES.md, "Replay protection"): inserts the record
    /// ($1, expiring at $2) unless a live record has its identifier or its Coffer 1.0.0 identifier ($4);
    /// an expired record of the same identifier is renewed. Of two concurrent copies, the second waits
    /// for the first's row and then finds it live (the `DO UPDATE`'s condition is checked again).
    static let replayInsert = """
        INSERT INTO coffer_replay (id, expires_at) SELECT $1, $2
        WHERE NOT EXISTS (SELECT 1 FROM coffer_replay WHERE id = $4 AND expires_at > $3)
        ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE coffer_replay.expires_at <= $3
        RETURNING id
        """

    /// The newest migration applied (0 before any).
    public func schemaVersion() async throws -> Int {
        var exists = false
        for try await _ in try await client.query("SELECT 1 FROM pg_tables WHERE tablename = 'coffer_schema' AND schemaname = current_schema()", logger: logger).decode(Int32.self) {
            exists = true
        }
        guard exists else { return 0 }
        let rows = try await client.query("SELECT COALESCE(MAX(version), 0) FROM coffer_schema", logger: logger)
        for try await version in rows.decode(Int64.self) { return Int(version) }
        return 0
    }

    /// Throws unless the database answers a trivial query.
    public func ping() async throws {
        try await client.query("SELECT 1", logger: logger)
    }

    /// Closes the connections; the store cannot be used afterwards.
    public func close() async throws {
        runner.cancel()
        _ = await runner.value
    }
}
