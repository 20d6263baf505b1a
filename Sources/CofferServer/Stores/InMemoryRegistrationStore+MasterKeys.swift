import CofferCore
import Foundation

extension InMemoryRegistrationStore: MasterKeyRewrapStore {
    /// See ``MasterKeyRewrapStore/dataKeys(notWrappedUnder:after:limit:)``.
    public func dataKeys(notWrappedUnder masterKeyID: String, after position: StoredDataKey?, limit: Int) async throws -> [StoredDataKey] {
        try open()
        let after = (owner: position?.owner ?? "", version: position?.version ?? Int64.min)
        let rows = dataKeyRecords.values.flatMap(\.values).filter { row in
            row.masterKeyID != masterKeyID && (Self.precedes(after.owner, row.owner) || (row.owner == after.owner && row.version > after.version))
        }
        let ordered = rows.sorted { $0.owner != $1.owner ? Self.precedes($0.owner, $1.owner) : $0.version < $1.version }
        return Array(ordered.prefix(max(0, limit)))
    }

    /// See ``MasterKeyRewrapStore/rewrapDataKeys(_:under:)``: each row still as read, while the key is wrapping.
    public func rewrapDataKeys(_ changes: [MasterKeyRewrite<StoredDataKey>], under masterKeyID: String) async throws -> Int {
        try open()
        guard wrappingKeyID == masterKeyID else { return 0 }
        var changed = 0
        for change in changes where dataKeyRecords[change.row.owner]?[change.row.version] == change.row {
            let row = change.row
            dataKeyRecords[row.owner]?[row.version] = StoredDataKey(
                owner: row.owner, version: row.version, dataKeyID: row.dataKeyID, wrapped: change.replacement, masterKeyID: masterKeyID, createdAt: row.createdAt
            )
            changed += 1
        }
        return changed
    }

    /// See ``MasterKeyRewrapStore/keyRecords(notTaggedUnder:after:limit:)``.
    public func keyRecords(notTaggedUnder masterKeyID: String, after keyID: String?, limit: Int) async throws -> [RegisteredKey] {
        try open()
        let (tagMarker, secretMarker) = (KeyRecordTag.marker(masterKeyID), WrappedSecret.marker(masterKeyID))
        let rows = keyRecords.values.filter { key in
            Self.precedes(keyID ?? "", key.keyID)
                && (key.tag?.hasPrefix(tagMarker) != true || key.secret.map { !$0.hasPrefix(secretMarker) } == true)
        }
        return Array(rows.sorted { Self.precedes($0.keyID, $1.keyID) }.prefix(max(0, limit)))
    }

    /// See ``MasterKeyRewrapStore/rewriteKeyRecords(_:under:)``: each record whose secret and tag are
    /// still as read, while the key is wrapping.
    public func rewriteKeyRecords(_ changes: [KeyRecordRewrite], under masterKeyID: String) async throws -> Int {
        try open()
        guard wrappingKeyID == masterKeyID else { return 0 }
        var changed = 0
        for change in changes {
            guard let key = keyRecords[change.before.keyID], Self.same(key.secret, change.before.secret), Self.same(key.tag, change.before.tag) else { continue }
            let after = change.after
            keyRecords[key.keyID] = RegisteredKey(
                keyID: key.keyID, algorithm: after.algorithm, publicKey: after.publicKey, secret: after.secret, createdAt: key.createdAt,
                state: after.state, lastUsedAt: key.lastUsedAt, encryptionKey: after.encryptionKey, userID: after.userID,
                userBinding: after.userBinding, tag: after.tag
            )
            changed += 1
        }
        return changed
    }

    /// See ``MasterKeyRewrapStore/users(notTaggedUnder:after:limit:)``.
    public func users(notTaggedUnder masterKeyID: String, after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        try open()
        let marker = KeyRecordTag.marker(masterKeyID)
        return Array(userRecords.filter { $0.id > (id ?? Int64.min) && $0.tag?.hasPrefix(marker) != true }.prefix(max(0, limit)))
    }

    /// See ``MasterKeyRewrapStore/rewriteUsers(_:under:)``: each record whose tag is still as read.
    public func rewriteUsers(_ changes: [UserRecordRewrite], under masterKeyID: String) async throws -> Int {
        try open()
        guard wrappingKeyID == masterKeyID else { return 0 }
        var changed = 0
        for change in changes {
            guard let index = userRecords.firstIndex(where: { $0.id == change.before.id }), Self.same(userRecords[index].tag, change.before.tag) else { continue }
            userRecords[index] = change.after
            changed += 1
        }
        return changed
    }

    /// See ``MasterKeyRewrapStore/retireMasterKey(_:at:)``.
    public func retireMasterKey(_ masterKeyID: String, at time: Int64) async throws -> MasterKeyRetirement {
        try open()
        let dataKeys = dataKeyRecords.values.flatMap(\.values).filter { $0.masterKeyID == masterKeyID }.count
        let marker = WrappedSecret.marker(masterKeyID)
        let secrets = keyRecords.values.filter { $0.secret?.hasPrefix(marker) == true }.count
        let records = keyRecords.values.filter { $0.tag?.hasPrefix(KeyRecordTag.marker(masterKeyID)) == true }.count
            + userRecords.filter { $0.tag?.hasPrefix(KeyRecordTag.marker(masterKeyID)) == true }.count
        if let refusal = MasterKeySQL.retirement(state: keyring[masterKeyID]?.state.rawValue, dataKeys: dataKeys, secrets: secrets, records: records) {
            return refusal
        }
        keyring[masterKeyID] = MasterKeyRecord(keyID: masterKeyID, state: .retired, changedAt: time)
        return .retired
    }

    /// Whether two stored secrets or tags (either absent) are the same, compared in constant time.
    private static func same(_ first: String?, _ second: String?) -> Bool {
        guard let first, let second else { return first == nil && second == nil }
        return ConstantTime.equals(Array(first.utf8), Array(second.utf8))
    }

    /// Whether `first` sorts before `second` as the databases compare text: by their bytes.
    private static func precedes(_ first: String, _ second: String) -> Bool {
        first.utf8.lexicographicallyPrecedes(second.utf8)
    }
}
