import CofferCore
@testable import CofferKeychain
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// A password change re-keys the keychain (issue 20): what a stolen old copy and the old password can
/// still open, and what they cannot (docs/KEYCHAIN.md).
@Suite("Keychain re-keying")
struct KeychainRekeyTests {
    static let before = KeychainQuery.genericPassword(service: "s", account: "before")
    static let after = KeychainQuery.genericPassword(service: "s", account: "after")

    /// The attack of issue 20: keep a copy of the file and the old password, wait for the owner to
    /// change the password and add secrets, then write the copy's header back into today's file. Before
    /// the fix `passwd` only re-wrapped the master key, so the old header unwrapped the same key and
    /// opened everything; now every item was re-sealed under a new master key.
    @Test(arguments: StoreKind.allCases)
    func anOldHeaderWrittenBackOpensNothingOfTodaysFile(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        let keychain = fixture.keychain
        try keychain.add(.genericPassword(service: "s", account: "before"), secret: bytes("added before"))
        let stolen = try #require(try keychain.storage.loadHeader())

        try keychain.changePassword(from: Fixture.password, to: "new password")
        try keychain.add(.genericPassword(service: "s", account: "after"), secret: bytes("added after"))
        #expect(try keychain.secret(matching: Self.after) == bytes("added after"))

        try keychain.storage.rewrite(header: stolen, nil)
        let attacked = kind == .sqlite ? try fixture.reopen() : Keychain(storage: keychain.storage, path: nil)
        try attacked.unlock(password: Fixture.password)  // the old header still unwraps the OLD master key
        for query in [Self.after, Self.before] {
            #expect(throws: KeychainError.dataCorrupted) { try attacked.secret(matching: query) }
        }
    }

    /// The owner's view: the new password opens everything, the old one nothing, and the keychain's
    /// identity is unchanged.
    @Test(arguments: StoreKind.allCases)
    func aPasswordChangeKeepsEveryItemAndTheIdentity(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        try fixture.keychain.add(.genericPassword(service: "s", account: "before"), secret: bytes("one"))
        let identifier = try fixture.keychain.identifier
        try fixture.keychain.changePassword(from: Fixture.password, to: "new password", kdf: .scrypt(logN: 11, r: 8, p: 1))
        let reopened = kind == .sqlite ? try fixture.reopen() : fixture.keychain
        #expect(throws: KeychainError.self) { try reopened.unlock(password: Fixture.password) }
        try reopened.unlock(password: "new password")
        #expect(try reopened.secret(matching: Self.before) == bytes("one"))
        #expect(try reopened.identifier == identifier)
        #expect(try reopened.requireHeader().scryptLogN == 11)
    }

    /// After a change or a rotation, neither the database nor its log still holds the old wrapped
    /// master key or an old sealed secret (secure_delete and a truncating checkpoint). Before the fix,
    /// the main file kept the old pages until SQLite's next automatic checkpoint.
    @Test func theOldHeaderAndSecretsAreGoneFromTheFiles() throws {
        let fixture = try Fixture(.sqlite)
        let keychain = fixture.keychain
        try keychain.add(.genericPassword(service: "s", account: "before"), secret: bytes("one"))
        let oldHeader = try #require(try keychain.storage.loadHeader())
        let oldSealed = try #require(try keychain.storage.find(Self.before, limit: 1).first).sealed
        try keychain.rotateMasterKey(password: Fixture.password)
        try keychain.changePassword(from: Fixture.password, to: "new password")
        let path = fixture.folder.path("data/coffer/keychain.db")
        var stored: [UInt8] = []
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            stored += try Fixtures.contents(ofFile: file)
        }
        // Bools: Swift Testing would print the whole database for a failed expectation on the arrays.
        let headerGone = !Self.contains(stored, oldHeader.wrappedMasterKey)
        let secretGone = !Self.contains(stored, oldSealed)
        #expect(headerGone, "the old wrapped master key is gone")
        #expect(secretGone, "the old sealed secret is gone")
        #expect(try fixture.reopen().secret(matching: Self.before, password: "new password") == bytes("one"))
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var index = 0
        while let found = haystack[index...].firstIndex(of: first), found + needle.count <= haystack.count {
            if haystack[found..<(found + needle.count)].elementsEqual(needle) { return true }
            index = found + 1
        }
        return false
    }
}

extension Keychain {
    fileprivate func secret(matching query: KeychainQuery, password: String) throws -> [UInt8] {
        try unlock(password: password)
        return try secret(matching: query)
    }
}
