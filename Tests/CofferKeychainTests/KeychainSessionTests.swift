import CofferCore
import CofferKeychain
import CofferTestSupport
import CofferTesting
import Testing

/// `KeychainSession` as library API: it keeps a keychain unlocked for later processes of the session, or
/// refuses, and never unlocks with an entry made for an older password.
@Suite("Keychain session")
struct KeychainSessionTests {
    #if os(Linux)
    @Test func keepsUnlockedOrRefusesAndNeverOutlivesThePassword() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("k.db")
        let keychain = try Keychain.open(at: path, create: true)
        try keychain.create(password: "old", kdf: .scrypt(logN: 10, r: 8, p: 1))
        try keychain.unlock(password: "old")
        defer { KeychainSession.end(keychain, path: path) }
        do {
            let keyring = try KeychainSession.keepUnlocked(keychain, for: 60, allowingUserWideKeyring: false)
            #expect(keyring == .loginSession)
        } catch {
            // A test process without a login-session keyring of its own: refused, never stored user-wide.
            #expect(error.code == .userWideKeyringNotAllowed || error.code == .keyringUnavailable, "\(error)")
            return
        }
        let later = try Keychain.open(at: path)
        #expect(KeychainSession.exists(later))
        #expect(KeychainSession.restore(later), "a later opening is unlocked from the session")
        #expect(!later.isLocked)

        try keychain.changePassword(from: "old", to: "new")
        let afterChange = try Keychain.open(at: path)
        #expect(!KeychainSession.restore(afterChange), "an entry made for the old password does not unlock")
        #expect(KeychainSession.end(keychain, path: path))
        #expect(!KeychainSession.exists(keychain))
    }
    #endif
}
