import CofferCrypto
@testable import CofferKeychain
import Foundation
import Testing

@Suite("Password items and sign-in sessions")
struct SignInSessionTests {
    static let fastHasher = PasswordHasher(policy: PasswordHashPolicy(kdf: .scrypt(logN: 10, r: 8, p: 1), minimumScryptLogN: 10))

    @Test(arguments: StoreKind.allCases)
    func passwordItemSaveReadRenameDelete(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        var item = KeychainPasswordItem(service: "com.example.app", account: "ada@example.com", keychain: fixture.keychain)
        #expect(try !item.exists)
        try item.save("first")
        try item.save("second")
        #expect(try item.readPassword() == "second")
        try item.rename(to: "ada@new.example.com")
        #expect(item.account == "ada@new.example.com")
        #expect(try item.readPassword() == "second")
        #expect(throws: KeychainError.self) {
            try KeychainPasswordItem(service: "com.example.app", account: "ada@example.com", keychain: fixture.keychain).readPassword()
        }
        try item.delete()
        #expect(try !item.exists)
    }

    @Test(arguments: StoreKind.allCases)
    func signInStoresAHashAndSignOutDeletesIt(kind: StoreKind) async throws {
        let fixture = try Fixture(kind)
        let session = SignInSession(service: "com.example.app", keychain: fixture.keychain, hasher: Self.fastHasher)
        var states = session.states().makeAsyncIterator()
        #expect(await states.next() == .signedOut)
        try session.signIn(user: "ada@example.com", password: "hunter2")
        #expect(await states.next() == .signedIn(user: "ada@example.com"))
        #expect(try session.isSignedIn && session.currentUser == "ada@example.com")
        let stored = String(decoding: try fixture.keychain.secret(matching: .genericPassword(service: "com.example.app", account: "ada@example.com")), as: UTF8.self)
        #expect(stored.hasPrefix("$scrypt$") && !stored.contains("hunter2"), "a hash is stored, never the password")
        #expect(try session.verify(password: "hunter2"))
        #expect(try !session.verify(password: "hunter3"))
        try session.signOut()
        #expect(await states.next() == .signedOut)
        #expect(try !session.isSignedIn)
        try session.signOut()
    }

    @Test func legacyCredentialIsUpgradedOnTheNextSuccessfulCheck() throws {
        let fixture = try Fixture(.sqlite)
        let session = SignInSession(service: "com.example.app", keychain: fixture.keychain, hasher: Self.fastHasher)
        let legacy = DigestAlgorithm.sha256.hash(Array("hunter2.ada@example.com.s4lt".utf8)).hex
        try session.importStoredCredential(user: "ada@example.com", .insecureLegacySHA256(hexDigest: legacy, email: "ada@example.com", salt: "s4lt"))
        let query = KeychainQuery.genericPassword(service: "com.example.app", account: "ada@example.com")
        #expect(String(decoding: try fixture.keychain.secret(matching: query), as: UTF8.self).hasPrefix("$sha256-legacy$"))
        #expect(try !session.verify(password: "wrong"))
        #expect(String(decoding: try fixture.keychain.secret(matching: query), as: UTF8.self).hasPrefix("$sha256-legacy$"), "no upgrade on failure")
        #expect(try session.verify(password: "hunter2"))
        #expect(String(decoding: try fixture.keychain.secret(matching: query), as: UTF8.self).hasPrefix("$scrypt$ln=10"))
        #expect(try session.verify(password: "hunter2"), "the upgraded hash verifies")
    }
}
