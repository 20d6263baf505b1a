import Foundation
import PostgresNIO

/// The master keyring in PostgreSQL. Keyring changes and retirements take one advisory lock inside
/// their transaction, so that instances starting at once, a promotion and a retirement are applied one
/// after the other, each seeing what the previous one committed.
extension PostgresRegistrationStore: MasterKeyRewrapStore {
    /// The advisory lock every keyring change holds until its transaction ends.
    static let keyringLock: Int64 = 7_304_183

    /// The recorded keyring, oldest change first.
    public func masterKeyring() async throws -> [MasterKeyRecord] {
        let rows = try await client.query(PostgresQuery(unsafeSQL: MasterKeySQL.keyring), logger: logger)
        var records: [MasterKeyRecord] = []
        for try await (id, state, changedAt) in rows.decode((String, String, Int64).self) {
            records.append(MasterKeyRecord(keyID: id, state: try MasterKeyRecord.state(state, of: id), changedAt: changedAt))
        }
        return records
    }

    /// Changes the wrapping key when the recorded one is `expected`, in one transaction.
    public func changeMasterKeyring(wrapping keyID: String, replacing expected: String?, setting states: [String: MasterKeyRecord.State], at time: Int64) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.keyringLock))", logger: logger)
            var current: String?
            for try await id in try await connection.query(PostgresQuery(unsafeSQL: MasterKeySQL.wrapping), logger: logger).decode(String.self) { current = id }
            guard current == expected else { return false }
            try await connection.query(try Self.query(MasterKeySQL.demoteWrapping, [keyID, time]), logger: logger)
            for (id, state) in states.sorted(by: { $0.key < $1.key }) where id != keyID {
                try await connection.query(try Self.query(MasterKeySQL.setState, [id, state.rawValue, time]), logger: logger)
            }
            try await connection.query(try Self.query(MasterKeySQL.setState, [keyID, MasterKeyRecord.State.wrapping.rawValue, time]), logger: logger)
            return true
        }
    }

    /// Rows per master key, and secrets in clear.
    public func masterKeyUsage() async throws -> MasterKeyUsage {
        var usage = MasterKeyUsage()
        let dataKeys = try await client.query(PostgresQuery(unsafeSQL: MasterKeySQL.dataKeyUsage), logger: logger)
        for try await (id, count, newest) in dataKeys.decode((String, Int64, Int64?).self) {
            usage.rows[id, default: .init()].dataKeys = Int(count)
            usage.rows[id, default: .init()].newestDataKeyAt = newest
        }
        let secrets = try await client.query(PostgresQuery(unsafeSQL: MasterKeySQL.secretUsage), logger: logger)
        for try await (id, count) in secrets.decode((String, Int64).self) {
            if id.isEmpty { usage.secretsInClear = Int(count) } else { usage.rows[id, default: .init()].secrets = Int(count) }
        }
        for sql in [MasterKeySQL.recordUsage, MasterKeySQL.userRecordUsage] {
            let records = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            for try await (id, count) in records.decode((String, Int64).self) {
                if id.isEmpty { usage.untaggedRecords += Int(count) } else { usage.rows[id, default: .init()].records += Int(count) }
            }
        }
        return usage
    }

    /// A batch of data keys to rewrap.
    public func dataKeys(notWrappedUnder masterKeyID: String, after position: StoredDataKey?, limit: Int) async throws -> [StoredDataKey] {
        let query = try Self.query(MasterKeySQL.dataKeysToRewrap, [masterKeyID, position?.owner ?? "", position?.version ?? Int64.min, Int64(limit)])
        var keys: [StoredDataKey] = []
        for try await (owner, version, id, wrapped, master, created) in try await client.query(query, logger: logger).decode((String, Int64, String, String, String, Int64).self) {
            keys.append(StoredDataKey(owner: owner, version: version, dataKeyID: id, wrapped: wrapped, masterKeyID: master, createdAt: created))
        }
        return keys
    }

    /// Rewraps a batch of data keys in one transaction.
    public func rewrapDataKeys(_ changes: [MasterKeyRewrite<StoredDataKey>], under masterKeyID: String) async throws -> Int {
        try await changedRows(try changes.map { change in
            let row = change.row
            return try Self.query(
                MasterKeySQL.rewrapDataKey + " RETURNING owner", [change.replacement, masterKeyID, row.owner, row.version, row.wrapped, row.masterKeyID]
            )
        })
    }

    /// Runs `updates` (each `… RETURNING` one text column per changed row) in one transaction; how many
    /// rows they changed.
    private func changedRows(_ updates: [PostgresQuery]) async throws -> Int {
        guard !updates.isEmpty else { return 0 }
        return try await client.withTransaction(logger: logger) { connection in
            var changed = 0
            for update in updates {
                for try await _ in try await connection.query(update, logger: logger).decode(String.self) { changed += 1 }
            }
            return changed
        }
    }

    /// A batch of key records to tag (and their secrets to rewrap).
    public func keyRecords(notTaggedUnder masterKeyID: String, after keyID: String?, limit: Int) async throws -> [RegisteredKey] {
        let query = try Self.query(
            MasterKeySQL.keyRecordsToRewrite, [KeyRecordTag.marker(masterKeyID), WrappedSecret.marker(masterKeyID), keyID ?? "", Int64(limit)]
        )
        return try await Self.keys(client.query(query, logger: logger))
    }

    /// Rewrites a batch of key records in one transaction.
    public func rewriteKeyRecords(_ changes: [KeyRecordRewrite], under masterKeyID: String) async throws -> Int {
        try await changedRows(try changes.map { change in
            let (before, after) = (change.before, change.after)
            return try Self.query(MasterKeySQL.rewriteKeyRecord + " RETURNING key_id", [
                after.secret, after.tag, after.algorithm.rawValue, after.publicKey, after.encryptionKey, after.userID, after.state.rawValue,
                before.keyID, before.secret, before.tag, masterKeyID, after.userBinding,
            ])
        })
    }

    /// A batch of user records to tag.
    public func users(notTaggedUnder masterKeyID: String, after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        let query = try Self.query(MasterKeySQL.usersToRewrite, [KeyRecordTag.marker(masterKeyID), id ?? Int64.min, Int64(limit)])
        return try await Self.users(client.query(query, logger: logger))
    }

    /// Rewrites a batch of user records in one transaction.
    public func rewriteUsers(_ changes: [UserRecordRewrite], under masterKeyID: String) async throws -> Int {
        try await changedRows(try changes.map { change in
            let (before, after) = (change.before, change.after)
            return try Self.query(MasterKeySQL.rewriteUser + " RETURNING email", [
                after.tag, after.email, after.name, after.keyID, after.createdAt, before.id, before.tag, masterKeyID,
            ])
        })
    }

    /// Retires a key no row is wrapped under, in one transaction under the keyring's lock.
    public func retireMasterKey(_ masterKeyID: String, at time: Int64) async throws -> MasterKeyRetirement {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.keyringLock))", logger: logger)
            func count(_ sql: String, _ value: String) async throws -> Int {
                for try await count in try await connection.query(try Self.query(sql, [value]), logger: logger).decode(Int64.self) { return Int(count) }
                return 0
            }
            var state: String?
            for try await found in try await connection.query(try Self.query(MasterKeySQL.state, [masterKeyID]), logger: logger).decode(String.self) { state = found }
            let dataKeys = try await count(MasterKeySQL.dataKeysUnder, masterKeyID)
            let secrets = try await count(MasterKeySQL.secretsUnder, WrappedSecret.marker(masterKeyID))
            let records = try await count(MasterKeySQL.recordsUnder, KeyRecordTag.marker(masterKeyID))
                + count(MasterKeySQL.usersUnder, KeyRecordTag.marker(masterKeyID))
            if let refusal = MasterKeySQL.retirement(state: state, dataKeys: dataKeys, secrets: secrets, records: records) { return refusal }
            try await connection.query(try Self.query(MasterKeySQL.retire, [masterKeyID, time]), logger: logger)
            return .retired
        }
    }
}
