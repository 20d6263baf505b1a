public import CofferKeychain

/// A keychain of its own for one test: a real encrypted SQLite file in a ``TemporaryDirectory``, created
/// with a password and unlocked, removed with its folder when the value is released.
///
/// Its password is stretched with a low scrypt cost (2^10) so that tests stay fast; never use that cost
/// outside tests.
///
/// ```swift
/// let temporary = try TemporaryKeychain()
/// try temporary.keychain.add(.genericPassword(service: "com.example", account: "ada"), secret: Array("s3cret".utf8))
/// ```
public final class TemporaryKeychain: @unchecked Sendable {
    /// The keychain, unlocked.
    public let keychain: Keychain
    /// The keychain file's path.
    public let path: String
    /// The password it was created with.
    public let password: String
    private let folder: TemporaryDirectory

    /// Creates, opens and unlocks the keychain.
    /// - Throws: `KeychainError` if the file cannot be made; errors from making the folder.
    public init(password: String = "test-password") throws {
        folder = try TemporaryDirectory(prefix: "coffer-keychain")
        path = folder.path("keychain.db")
        self.password = password
        keychain = try Keychain.open(at: path, create: true)
        try keychain.create(password: password, kdf: .scrypt(logN: 10, r: 8, p: 1))
        try keychain.unlock(password: password)
    }
}
