/// The master keyring's statements, which both stores run (`$1`… as PostgreSQL spells them; SQLite
/// reads them as `?1`…). docs/SERVER.md, "The master keyring".
enum MasterKeySQL {
    static let keyring = "SELECT key_id, state, changed_at FROM coffer_master_keyring ORDER BY changed_at, key_id"
    static let wrapping = "SELECT key_id FROM coffer_master_keyring WHERE state = 'wrapping'"
    /// The wrapping key steps down to previous before another takes its place (at most one is wrapping).
    static let demoteWrapping = "UPDATE coffer_master_keyring SET state = 'previous', changed_at = $2 WHERE state = 'wrapping' AND key_id <> $1"
    static let setState = """
        INSERT INTO coffer_master_keyring (key_id, state, changed_at) VALUES ($1, $2, $3)
        ON CONFLICT (key_id) DO UPDATE SET state = excluded.state, changed_at = excluded.changed_at
        """
    static let dataKeyUsage = "SELECT master_key_id, COUNT(*), MAX(created_at) FROM coffer_data_keys GROUP BY master_key_id"
    /// Secrets by the master key id their stored form names ('' for those in clear).
    static let secretUsage = """
        SELECT CASE WHEN substr(secret, 1, \(WrappedSecret.prefix.count)) = '\(WrappedSecret.prefix)'
                    THEN substr(secret, \(WrappedSecret.prefix.count + 1), \(WrappedSecret.masterKeyIDLength)) ELSE '' END,
               COUNT(*)
        FROM coffer_keys WHERE secret IS NOT NULL GROUP BY 1
        """

    /// Key records by the master key id their tag names ('' for those without a tag).
    static let recordUsage = """
        SELECT CASE WHEN substr(record_tag, 1, \(KeyRecordTag.prefix.count)) = '\(KeyRecordTag.prefix)'
                    THEN substr(record_tag, \(KeyRecordTag.prefix.count + 1), \(WrappedSecret.masterKeyIDLength)) ELSE '' END,
               COUNT(*)
        FROM coffer_keys GROUP BY 1
        """

    /// User records by the master key id their tag names ('' for those without a tag).
    static let userRecordUsage = """
        SELECT CASE WHEN substr(record_tag, 1, \(KeyRecordTag.prefix.count)) = '\(KeyRecordTag.prefix)'
                    THEN substr(record_tag, \(KeyRecordTag.prefix.count + 1), \(WrappedSecret.masterKeyIDLength)) ELSE '' END,
               COUNT(*)
        FROM coffer_users GROUP BY 1
        """
    /// Users numbered above $2 not tagged under the tag marker $1, at most $3.
    static let usersToRewrite = """
        SELECT \(RegistrationSQL.userColumns) FROM coffer_users
        WHERE id > $2 AND (record_tag IS NULL OR substr(record_tag, 1, \(tagMarkerLength)) <> $1) ORDER BY id LIMIT $3
        """
    /// A user record tagged anew ($1; its fields written back, $2–$5) when its tag ($7) is still as read
    /// and $8 is still the wrapping key.
    static let rewriteUser = """
        UPDATE coffer_users SET record_tag = $1, email = $2, name = $3, key_id = $4, created_at = $5
        WHERE id = $6 AND (record_tag = $7 OR (record_tag IS NULL AND $7 IS NULL)) AND \(isWrapping("$8"))
        """
    static let usersUnder = "SELECT COUNT(*) FROM coffer_users WHERE substr(record_tag, 1, \(tagMarkerLength)) = $1"

    /// Rows after ($2, $3) in key order not wrapped under $1, at most $4.
    static let dataKeysToRewrap = """
        SELECT \(RegistrationSQL.dataKeyColumns) FROM coffer_data_keys
        WHERE master_key_id <> $1 AND (owner > $2 OR (owner = $2 AND version > $3)) ORDER BY owner, version LIMIT $4
        """
    /// Wrapped anew under $2 when the row is still as read and $2 is still the wrapping key.
    static let rewrapDataKey = """
        UPDATE coffer_data_keys SET wrapped = $1, master_key_id = $2
        WHERE owner = $3 AND version = $4 AND wrapped = $5 AND master_key_id = $6 AND \(isWrapping("$2"))
        """
    /// The length of ``WrappedSecret/marker(_:)``: what a secret under one key starts with.
    static let markerLength = WrappedSecret.prefix.count + WrappedSecret.masterKeyIDLength + 1
    /// The length of ``KeyRecordTag/marker(_:)``: what a tag under one key starts with.
    static let tagMarkerLength = KeyRecordTag.prefix.count + WrappedSecret.masterKeyIDLength + 1
    /// Key records after key id $3 not tagged under the tag marker $1, or whose secret does not start
    /// with the secret marker $2, at most $4.
    static let keyRecordsToRewrite = """
        SELECT \(RegistrationSQL.keyColumns) FROM coffer_keys
        WHERE key_id > $3 AND (record_tag IS NULL OR substr(record_tag, 1, \(tagMarkerLength)) <> $1
                               OR (secret IS NOT NULL AND substr(secret, 1, \(markerLength)) <> $2))
        ORDER BY key_id LIMIT $4
        """
    /// A record rewritten (secret $1, tag $2, and every field the tag covers written back, $3–$7 and
    /// $12) when its secret ($9) and tag ($10) are still as read and $11 is still the wrapping key.
    static let rewriteKeyRecord = """
        UPDATE coffer_keys SET secret = $1, record_tag = $2, algorithm = $3, public_key = $4, encryption_key = $5, user_id = $6, state = $7,
            user_binding = $12
        WHERE key_id = $8 AND (secret = $9 OR (secret IS NULL AND $9 IS NULL)) AND (record_tag = $10 OR (record_tag IS NULL AND $10 IS NULL))
          AND \(isWrapping("$11"))
        """

    static let state = "SELECT state FROM coffer_master_keyring WHERE key_id = $1"
    static let dataKeysUnder = "SELECT COUNT(*) FROM coffer_data_keys WHERE master_key_id = $1"
    static let secretsUnder = "SELECT COUNT(*) FROM coffer_keys WHERE substr(secret, 1, \(markerLength)) = $1"
    static let recordsUnder = "SELECT COUNT(*) FROM coffer_keys WHERE substr(record_tag, 1, \(tagMarkerLength)) = $1"
    static let retire = "UPDATE coffer_master_keyring SET state = 'retired', changed_at = $2 WHERE key_id = $1 AND state <> 'wrapping'"

    /// The condition that the key named by `parameter` is the keyring's wrapping key.
    static func isWrapping(_ parameter: String) -> String {
        "EXISTS (SELECT 1 FROM coffer_master_keyring WHERE key_id = \(parameter) AND state = 'wrapping')"
    }

    /// What retiring a key found: its state now and the rows still under it.
    static func retirement(state: String?, dataKeys: Int, secrets: Int, records: Int) -> MasterKeyRetirement? {
        switch state {
        case nil: .unknown
        case "wrapping": .wrapping
        case "retired": .alreadyRetired
        default: dataKeys + secrets + records > 0 ? .stillWraps(dataKeys: dataKeys, secrets: secrets, records: records) : nil
        }
    }
}
