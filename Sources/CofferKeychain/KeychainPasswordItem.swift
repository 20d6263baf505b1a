/// One generic password named by service and account, the way apps usually hold a credential:
///
/// ```swift
/// let item = KeychainPasswordItem(service: "com.example.app", account: "ada@example.com", keychain: keychain)
/// try item.save("s3cret")
/// let password = try item.readPassword()
/// try item.rename(to: "ada@new.example.com")
/// try item.delete()
/// ```
public struct KeychainPasswordItem: Sendable {
    /// The service, usually the app's reverse-DNS name.
    public let service: String
    /// The account, usually the user's email.
    public private(set) var account: String
    /// Readability of the saved secret.
    public var accessibility: Accessibility
    /// The keychain it lives in: Coffer's own, or the system's.
    public let keychain: any KeychainBackend

    /// Names the item; nothing is read or written yet.
    public init(service: String, account: String, accessibility: Accessibility = .whenUnlocked, keychain: any KeychainBackend) {
        self.service = service
        self.account = account
        self.accessibility = accessibility
        self.keychain = keychain
    }

    private var query: KeychainQuery { .genericPassword(service: service, account: account) }

    /// Stores the password, replacing any saved before.
    public func save(_ password: String) throws(KeychainError) {
        try save(bytes: Array(password.utf8))
    }

    /// Stores bytes, replacing any saved before.
    public func save(bytes: [UInt8]) throws(KeychainError) {
        do {
            try keychain.add(.genericPassword(service: service, account: account, accessibility: accessibility), secret: bytes)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            var changes = KeychainChanges(secret: bytes)
            changes.accessibility = accessibility
            try keychain.update(matching: query, with: changes)
        }
    }

    /// The saved password. - Throws: `.itemNotFound` when none was saved; `.dataCorrupted` when it is
    /// not UTF-8.
    public func readPassword() throws(KeychainError) -> String {
        let bytes = try keychain.secret(matching: query)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw KeychainError(.dataCorrupted, "the saved secret is not UTF-8 text; read it as bytes")
        }
        return text
    }

    /// The saved bytes.
    public func readBytes() throws(KeychainError) -> [UInt8] {
        try keychain.secret(matching: query)
    }

    /// Whether a password is saved (reads attributes only; works while locked).
    public var exists: Bool {
        get throws(KeychainError) { try !keychain.items(matching: query).isEmpty }
    }

    /// Renames the account, keeping the secret. - Throws: `.duplicateItem` when the new name is taken.
    public mutating func rename(to newAccount: String) throws(KeychainError) {
        var changes = KeychainChanges()
        changes.account = newAccount
        try keychain.update(matching: query, with: changes)
        account = newAccount
    }

    /// Deletes the saved password. - Throws: `.itemNotFound` when there was none.
    public func delete() throws(KeychainError) {
        try keychain.delete(matching: query)
    }
}
