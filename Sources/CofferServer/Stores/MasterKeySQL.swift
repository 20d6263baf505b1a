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
    /// Secrets after key id $2 whose stored form does not start with the marker $1, at most $3.
    static let secretsToRewrap = """
        SELECT key_id, secret FROM coffer_keys
        WHERE secret IS NOT NULL AND substr(secret, 1, \(markerLength)) <> $1 AND key_id > $2 ORDER BY key_id LIMIT $3
        """
    static let rewrapSecret = "UPDATE coffer_keys SET secret = $1 WHERE key_id = $2 AND secret = $3 AND \(isWrapping("$4"))"

    static let state = "SELECT state FROM coffer_master_keyring WHERE key_id = $1"
    static let dataKeysUnder = "SELECT COUNT(*) FROM coffer_data_keys WHERE master_key_id = $1"
    static let secretsUnder = "SELECT COUNT(*) FROM coffer_keys WHERE substr(secret, 1, \(markerLength)) = $1"
    static let retire = "UPDATE coffer_master_keyring SET state = 'retired', changed_at = $2 WHERE key_id = $1 AND state <> 'wrapping'"

    /// The condition that the key named by `parameter` is the keyring's wrapping key.
    static func isWrapping(_ parameter: String) -> String {
        "EXISTS (SELECT 1 FROM coffer_master_keyring WHERE key_id = \(parameter) AND state = 'wrapping')"
    }

    /// What retiring a key found: its state now and the rows still under it.
    static func retirement(state: String?, dataKeys: Int, secrets: Int) -> MasterKeyRetirement? {
        switch state {
        case nil: .unknown
        case "wrapping": .wrapping
        case "retired": .alreadyRetired
        default: dataKeys + secrets > 0 ? .stillWraps(dataKeys: dataKeys, secrets: secrets) : nil
        }
    }
}
