import CofferCore
public import CofferFormats

/// 256-bit symmetric keys (`EncryptionKey`, the encrypted format's key mode) kept as key items and found
/// by application tag: a data key fetched from a server (`DataKeyClient`) is cached here so that the
/// app can decrypt its local data without asking the server again.
///
/// ```swift
/// try keychain.add(dataKey.key, tag: "com.example.app.data-key.v\(dataKey.version)")
/// let key = try keychain.encryptionKey(tag: "com.example.app.data-key.v1")
/// ```
///
/// The item: class key, key class symmetric, key type `aes-256`, 256 bits, application label = the
/// key's id (`EncryptionKey.keyID`), and the 32 key bytes as the sealed secret. By default it never
/// leaves this device and is readable after the first unlock, as a data key that background work
/// needs should be.
extension KeychainBackend {
    /// Stores `key` under `tag`.
    /// - Parameters:
    ///   - key: the key.
    ///   - tag: the application tag to find it by.
    ///   - label: a name for people.
    ///   - accessibility: `afterFirstUnlockThisDeviceOnly` by default.
    ///   - accessControl: a user-presence requirement, if any.
    /// - Throws: `.duplicateItem` when a symmetric key with this tag exists; the errors of
    ///   ``add(_:secret:accessControl:)``.
    public func add(
        _ key: EncryptionKey, tag: String, label: String? = nil, accessibility: Accessibility = .afterFirstUnlockThisDeviceOnly,
        accessControl: AccessControl = .none
    ) throws(KeychainError) {
        let item = KeychainItem.key(
            tag: tag, keyClass: .symmetric, keyType: "aes-256", keySizeInBits: 256, applicationLabel: key.keyID, label: label, accessibility: accessibility
        )
        var bytes = key.withUnsafeKeyBytes { Array($0) }
        defer { SecretBytes.wipe(&bytes) }
        try add(item, secret: bytes, accessControl: accessControl)
    }

    /// The symmetric key stored under `tag`.
    /// - Parameters:
    ///   - tag: the application tag it was stored under.
    ///   - applicationPassword: for a key stored with one.
    /// - Throws: `.itemNotFound`; `.dataCorrupted` when the stored secret is not a 32-byte key.
    public func encryptionKey(tag: String, applicationPassword: String? = nil) throws(KeychainError) -> EncryptionKey {
        var query = KeychainQuery.key(applicationTag: Array(tag.utf8), keyClass: .symmetric)
        query.applicationPassword = applicationPassword
        var bytes = try secret(matching: query)
        defer { SecretBytes.wipe(&bytes) }
        do {
            return try EncryptionKey(bytes: bytes)
        } catch {
            throw KeychainError(.dataCorrupted, "the key item tagged '\(tag)' does not hold a 32-byte key", underlying: error)
        }
    }
}
