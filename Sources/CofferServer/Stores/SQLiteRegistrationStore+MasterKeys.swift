import Foundation
import GRDB

/// The master keyring in SQLite. Changes of several statements run in a transaction of their own
/// (`pool.write`, serialized with every other write through SQLite's one writer), not in a shared batch
/// whose other jobs would commit a half-done change.
extension SQLiteRegistrationStore: MasterKeyRewrapStore {
    /// The recorded keyring, oldest change first.
    public func masterKeyring() async throws -> [MasterKeyRecord] {
        try await pool.read { db in try Self.masterKeyring(in: db) }
    }

    private static func masterKeyring(in db: Database) throws -> [MasterKeyRecord] {
        try Row.fetchAll(db, sql: MasterKeySQL.keyring).map { row in
            let row = row.checked("coffer_master_keyring")
            let id: String = try row(0)
            return MasterKeyRecord(keyID: id, state: try MasterKeyRecord.state(row(1), of: id), changedAt: try row(2))
        }
    }

    /// Changes the wrapping key when the recorded one is `expected`, in one transaction.
    public func changeMasterKeyring(wrapping keyID: String, replacing expected: String?, setting states: [String: MasterKeyRecord.State], at time: Int64) async throws -> Bool {
        try await pool.write { db in
            guard try String.fetchOne(db, sql: MasterKeySQL.wrapping) == expected else { return false }
            try db.execute(sql: Self.sqlite(MasterKeySQL.demoteWrapping), arguments: [keyID, time])
            for (id, state) in states.sorted(by: { $0.key < $1.key }) where id != keyID {
                try db.execute(sql: Self.sqlite(MasterKeySQL.setState), arguments: [id, state.rawValue, time])
            }
            try db.execute(sql: Self.sqlite(MasterKeySQL.setState), arguments: [keyID, MasterKeyRecord.State.wrapping.rawValue, time])
            return true
        }
    }

    /// Rows per master key, and secrets in clear.
    public func masterKeyUsage() async throws -> MasterKeyUsage {
        try await pool.read { db in
            var usage = MasterKeyUsage()
            for row in try Row.fetchAll(db, sql: MasterKeySQL.dataKeyUsage).map({ $0.checked("coffer_data_keys") }) {
                let id: String = try row(0)
                usage.rows[id, default: .init()].dataKeys = try row(1)
                usage.rows[id, default: .init()].newestDataKeyAt = try row(2)
            }
            for row in try Row.fetchAll(db, sql: MasterKeySQL.secretUsage).map({ $0.checked("coffer_keys") }) {
                let id: String = try row(0)
                if id.isEmpty { usage.secretsInClear = try row(1) } else { usage.rows[id, default: .init()].secrets = try row(1) }
            }
            for (sql, table) in [(MasterKeySQL.recordUsage, "coffer_keys"), (MasterKeySQL.userRecordUsage, "coffer_users")] {
                for row in try Row.fetchAll(db, sql: sql).map({ $0.checked(table) }) {
                    let id: String = try row(0)
                    let count: Int = try row(1)
                    if id.isEmpty { usage.untaggedRecords += count } else { usage.rows[id, default: .init()].records += count }
                }
            }
            return usage
        }
    }

    /// A batch of data keys to rewrap.
    public func dataKeys(notWrappedUnder masterKeyID: String, after position: StoredDataKey?, limit: Int) async throws -> [StoredDataKey] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: Self.sqlite(MasterKeySQL.dataKeysToRewrap), arguments: [masterKeyID, position?.owner ?? "", position?.version ?? Int64.min, limit]
            ).map(Self.dataKey)
        }
    }

    /// Rewraps a batch of data keys in one transaction.
    public func rewrapDataKeys(_ changes: [MasterKeyRewrite<StoredDataKey>], under masterKeyID: String) async throws -> Int {
        try await changedRows(MasterKeySQL.rewrapDataKey, changes.map { change in
            let row = change.row
            return [change.replacement, masterKeyID, row.owner, row.version, row.wrapped, row.masterKeyID]
        })
    }

    /// Runs `statement` once per set of arguments, in one transaction; how many rows it changed.
    private func changedRows(_ statement: String, _ arguments: [StatementArguments]) async throws -> Int {
        guard !arguments.isEmpty else { return 0 }
        return try await pool.write { db in
            var changed = 0
            for values in arguments {
                try db.execute(sql: Self.sqlite(statement), arguments: values)
                changed += db.changesCount
            }
            return changed
        }
    }

    /// A batch of key records to tag (and their secrets to rewrap).
    public func keyRecords(notTaggedUnder masterKeyID: String, after keyID: String?, limit: Int) async throws -> [RegisteredKey] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: Self.sqlite(MasterKeySQL.keyRecordsToRewrite),
                arguments: [KeyRecordTag.marker(masterKeyID), WrappedSecret.marker(masterKeyID), keyID ?? "", limit]
            ).map(Self.record)
        }
    }

    /// Rewrites a batch of key records in one transaction.
    public func rewriteKeyRecords(_ changes: [KeyRecordRewrite], under masterKeyID: String) async throws -> Int {
        try await changedRows(MasterKeySQL.rewriteKeyRecord, changes.map { change in
            let (before, after) = (change.before, change.after)
            return [
                after.secret, after.tag, after.algorithm.rawValue, after.publicKey, after.encryptionKey, after.userID, after.state.rawValue,
                before.keyID, before.secret, before.tag, masterKeyID, after.userBinding,
            ]
        })
    }

    /// A batch of user records to tag.
    public func users(notTaggedUnder masterKeyID: String, after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: Self.sqlite(MasterKeySQL.usersToRewrite), arguments: [KeyRecordTag.marker(masterKeyID), id ?? Int64.min, limit]).map(Self.user)
        }
    }

    /// Rewrites a batch of user records in one transaction.
    public func rewriteUsers(_ changes: [UserRecordRewrite], under masterKeyID: String) async throws -> Int {
        try await changedRows(MasterKeySQL.rewriteUser, changes.map { change in
            let (before, after) = (change.before, change.after)
            return [after.tag, after.email, after.name, after.keyID, after.createdAt, before.id, before.tag, masterKeyID]
        })
    }

    /// Retires a key no row is wrapped under, in one transaction.
    public func retireMasterKey(_ masterKeyID: String, at time: Int64) async throws -> MasterKeyRetirement {
        try await pool.write { db in
            let state = try String.fetchOne(db, sql: Self.sqlite(MasterKeySQL.state), arguments: [masterKeyID])
            let dataKeys = try Int.fetchOne(db, sql: Self.sqlite(MasterKeySQL.dataKeysUnder), arguments: [masterKeyID]) ?? 0
            let secrets = try Int.fetchOne(db, sql: Self.sqlite(MasterKeySQL.secretsUnder), arguments: [WrappedSecret.marker(masterKeyID)]) ?? 0
            let records = (try Int.fetchOne(db, sql: Self.sqlite(MasterKeySQL.recordsUnder), arguments: [KeyRecordTag.marker(masterKeyID)]) ?? 0)
                + (try Int.fetchOne(db, sql: Self.sqlite(MasterKeySQL.usersUnder), arguments: [KeyRecordTag.marker(masterKeyID)]) ?? 0)
            if let refusal = MasterKeySQL.retirement(state: state, dataKeys: dataKeys, secrets: secrets, records: records) { return refusal }
            try db.execute(sql: Self.sqlite(MasterKeySQL.retire), arguments: [masterKeyID, time])
            return .retired
        }
    }
}
