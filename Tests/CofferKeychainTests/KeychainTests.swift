import CofferCore
@testable import CofferKeychain
import CofferTestSupport
import CofferTesting
import Foundation
import GRDB
import Testing

/// The two stores behind one API; every semantic test runs on both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite
    var testDescription: String { rawValue }
}

/// A keychain with a cheap scrypt cost (2^10) so that tests run fast; the cost itself is tested apart.
struct Fixture {
    let keychain: Keychain
    let folder: TemporaryDirectory
    static let password = "keychain password"

    init(_ kind: StoreKind) throws {
        folder = try TemporaryDirectory()
        switch kind {
        case .memory: keychain = Keychain.inMemory()
        case .sqlite: keychain = try Keychain.open(at: folder.path("data/coffer/keychain.db"), create: true)
        }
        try keychain.create(password: Self.password, kdf: .scrypt(logN: 10, r: 8, p: 1))
    }

    func reopen() throws -> Keychain {
        try Keychain.open(at: folder.path("data/coffer/keychain.db"))
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("Keychain item semantics")
struct KeychainSemanticsTests {
    static let app = "com.example.app"

    @Test(arguments: StoreKind.allCases)
    func addThenCopyMatchingGenericPassword(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        var item = KeychainItem.genericPassword(service: Self.app, account: "ada@example.com")
        item.label = "Ada's token"
        try keychain.add(item, secret: bytes("s3cret"))
        let query = KeychainQuery.genericPassword(service: Self.app, account: "ada@example.com")
        #expect(try keychain.secret(matching: query) == bytes("s3cret"))
        let match = try #require(try keychain.copyMatching(query).first)
        #expect(match.secret == nil, "attributes only unless secrets are asked for")
        #expect(match.item.label == "Ada's token")
        #expect(match.item.creationDate != nil && match.item.accessibility == .whenUnlocked)
    }

    @Test(arguments: StoreKind.allCases)
    func duplicateIsRefusedAndMissingIsNotFound(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        let item = KeychainItem.genericPassword(service: Self.app, account: "a")
        try keychain.add(item, secret: bytes("1"))
        let duplicate = try #require(throws: KeychainError.duplicateItem) { try keychain.add(item, secret: bytes("2")) }
        #expect(duplicate.code.osStatus == -25299)
        #expect(try keychain.secret(matching: .genericPassword(service: Self.app, account: "a")) == bytes("1"), "the first stays")
        let missing = try #require(throws: KeychainError.itemNotFound) { try keychain.secret(matching: .genericPassword(service: Self.app, account: "b")) }
        #expect(missing.code.osStatus == -25300)
        #expect(throws: KeychainError.self) { try keychain.delete(matching: .genericPassword(service: "other")) }
        // Same account under another service, or another access group, is a different item.
        try keychain.add(.genericPassword(service: "other", account: "a"), secret: bytes("3"))
        var grouped = item
        grouped.accessGroup = "team.shared"
        try keychain.add(grouped, secret: bytes("4"))
    }

    @Test(arguments: StoreKind.allCases)
    func matchLimitAllAndDelete(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        for account in ["a", "b", "c"] {
            try keychain.add(.genericPassword(service: Self.app, account: account), secret: bytes(account))
        }
        try keychain.add(.genericPassword(service: "elsewhere", account: "a"), secret: bytes("x"))
        let all = try keychain.copyMatching(KeychainQuery.genericPassword(service: Self.app).all(), returningSecrets: true)
        #expect(all.map(\.item.account) == ["a", "b", "c"])
        #expect(all.map(\.secret) == [bytes("a"), bytes("b"), bytes("c")])
        #expect(try keychain.copyMatching(.genericPassword(service: Self.app)).count == 1, "match limit one")
        #expect(try keychain.delete(matching: .genericPassword(service: Self.app)) == 3)
        #expect(try keychain.items(matching: .genericPassword()).map(\.service) == ["elsewhere"])
    }

    @Test(arguments: StoreKind.allCases)
    func updateSecretAttributesAndRename(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        try keychain.add(.genericPassword(service: Self.app, account: "old@example.com"), secret: bytes("v1"))
        try keychain.add(.genericPassword(service: Self.app, account: "taken@example.com"), secret: bytes("t"))
        var changes = KeychainChanges(secret: bytes("v2"))
        changes.label = "renamed"
        try keychain.update(matching: .genericPassword(service: Self.app, account: "old@example.com"), with: changes)
        #expect(try keychain.secret(matching: .genericPassword(service: Self.app, account: "old@example.com")) == bytes("v2"))
        var rename = KeychainChanges()
        rename.account = "new@example.com"
        try keychain.update(matching: .genericPassword(service: Self.app, account: "old@example.com"), with: rename)
        #expect(try keychain.secret(matching: .genericPassword(service: Self.app, account: "new@example.com")) == bytes("v2"))
        let item = try #require(try keychain.copyMatching(.genericPassword(service: Self.app, account: "new@example.com")).first?.item)
        #expect(item.label == "renamed")
        var collide = KeychainChanges()
        collide.account = "taken@example.com"
        #expect(throws: KeychainError.duplicateItem) {
            try keychain.update(matching: .genericPassword(service: Self.app, account: "new@example.com"), with: collide)
        }
        #expect(try keychain.secret(matching: .genericPassword(service: Self.app, account: "new@example.com")) == bytes("v2"), "nothing changed")
        #expect(throws: KeychainError.self) { try keychain.update(matching: .genericPassword(service: "none"), with: KeychainChanges(secret: [])) }
    }

    @Test(arguments: StoreKind.allCases)
    func otherClasses(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        try keychain.add(.internetPassword(server: "api.example.com", account: "ada", port: 443, path: "/v1"), secret: bytes("pw"))
        var internet = KeychainQuery.internetPassword(server: "api.example.com", account: "ada")
        #expect(try keychain.secret(matching: internet) == bytes("pw"))
        internet.port = 8443
        #expect(throws: KeychainError.self) { try keychain.secret(matching: internet) }
        let tag = bytes("com.example.app.signing")
        try keychain.add(.key(applicationTag: tag, keyClass: .privateKey, keyType: "ec-p256", keySizeInBits: 256), secret: bytes("private der"))
        try keychain.add(.key(applicationTag: tag, keyClass: .publicKey, keyType: "ec-p256", keySizeInBits: 256), secret: bytes("public der"))
        #expect(try keychain.secret(matching: .key(applicationTag: tag, keyClass: .privateKey)) == bytes("private der"))
        #expect(try keychain.items(matching: .key(applicationTag: tag)).count == 2)
        try keychain.add(.certificate(issuer: [0x30, 0x00], serialNumber: [0x01]), secret: bytes("cert der"))
        #expect(try keychain.secret(matching: .certificate(issuer: [0x30, 0x00], serialNumber: [0x01])) == bytes("cert der"))
    }

    @Test(arguments: StoreKind.allCases)
    func badParametersAreRefused(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        for item in [
            KeychainItem.genericPassword(service: "", account: "a"), KeychainItem(itemClass: .genericPassword),
            KeychainItem.internetPassword(server: "h", account: "a", port: 70000), KeychainItem(itemClass: .key),
            KeychainItem.certificate(issuer: [], serialNumber: [1]),
        ] {
            #expect(throws: KeychainError.badParameter) { try keychain.add(item, secret: [1]) }
        }
        let big = [UInt8](repeating: 0, count: (1 << 20) + 1)
        #expect(throws: KeychainError.self) { try keychain.add(.genericPassword(service: "s", account: "a"), secret: big) }
    }
}

@Suite("Keychain locking, passwords and access control")
struct KeychainAccessTests {
    @Test(arguments: StoreKind.allCases)
    func lockedKeychainRefusesWhenUnlockedItemsButKeepsAfterFirstUnlock(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        try keychain.add(.genericPassword(service: "s", account: "when"), secret: bytes("w"))
        try keychain.add(.genericPassword(service: "s", account: "after", accessibility: .afterFirstUnlock), secret: bytes("a"))
        keychain.lock()
        #expect(keychain.isLocked)
        let error = try #require(throws: KeychainError.interactionNotAllowed) { try keychain.secret(matching: .genericPassword(service: "s", account: "when")) }
        #expect(error.code.osStatus == -25308)
        #expect(try keychain.secret(matching: .genericPassword(service: "s", account: "after")) == bytes("a"))
        #expect(try keychain.items(matching: .genericPassword(service: "s")).count == 2, "attributes stay listable")
        #expect(throws: KeychainError.self) { try keychain.add(.genericPassword(service: "s", account: "new"), secret: [1]) }
        try keychain.add(.genericPassword(service: "s", account: "new", accessibility: .afterFirstUnlock), secret: [1])
        try keychain.unlock(password: Fixture.password)
        #expect(try keychain.secret(matching: .genericPassword(service: "s", account: "when")) == bytes("w"))
    }

    @Test func afterFirstUnlockNeedsAFirstUnlockInThisProcess() throws {
        let fixture = try Fixture(.sqlite)
        try fixture.keychain.add(.genericPassword(service: "s", account: "after", accessibility: .afterFirstUnlock), secret: bytes("a"))
        let fresh = try fixture.reopen()
        #expect(fresh.isLocked)
        #expect(throws: KeychainError.interactionNotAllowed) { try fresh.secret(matching: .genericPassword(service: "s", account: "after")) }
        try fresh.unlock(password: Fixture.password)
        fresh.lock()
        #expect(try fresh.secret(matching: .genericPassword(service: "s", account: "after")) == bytes("a"))
    }

    @Test(arguments: StoreKind.allCases)
    func wrongKeychainPasswordIsAuthenticationFailed(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        keychain.lock()
        let error = try #require(throws: KeychainError.authenticationFailed) { try keychain.unlock(password: "wrong") }
        #expect(error.code.osStatus == -25293)
        #expect(keychain.isLocked)
    }

    @Test(arguments: StoreKind.allCases)
    func applicationPasswordIsRequiredAndChecked(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        let item = KeychainItem.genericPassword(service: "s", account: "vault")
        try keychain.add(item, secret: bytes("inner"), accessControl: AccessControl(applicationPassword: "app pw"))
        var query = KeychainQuery.genericPassword(service: "s", account: "vault")
        #expect(throws: KeychainError.authenticationFailed) { try keychain.secret(matching: query) }
        query.applicationPassword = "wrong"
        #expect(throws: KeychainError.self) { try keychain.secret(matching: query) }
        query.applicationPassword = "app pw"
        #expect(try keychain.secret(matching: query) == bytes("inner"))
        #expect(try keychain.items(matching: query).first?.hasApplicationPassword == true)
        // Updating the secret keeps the application password.
        try keychain.update(matching: query, with: KeychainChanges(secret: bytes("inner 2")))
        #expect(try keychain.secret(matching: query) == bytes("inner 2"))
    }

    @Test(arguments: StoreKind.allCases)
    func userPresenceAsksForTheKeychainPassword(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        defer { withExtendedLifetime(fixture) {} }
        let keychain = fixture.keychain
        try keychain.add(.genericPassword(service: "s", account: "p"), secret: bytes("x"), accessControl: AccessControl(requiresUserPresence: true))
        let query = KeychainQuery.genericPassword(service: "s", account: "p")
        #expect(throws: KeychainError.self) { try keychain.secret(matching: query) }
        let asked = Counter()
        keychain.presencePrompt = { _ in asked.increment(); return "wrong" }
        #expect(throws: KeychainError.self) { try keychain.secret(matching: query) }
        keychain.presencePrompt = { reason in asked.increment(); return reason.isEmpty ? nil : Fixture.password }
        #expect(try keychain.secret(matching: query) == bytes("x"))
        #expect(asked.value == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func passwordChangeRewrapsAndRotationReseals(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        let keychain = fixture.keychain
        try keychain.add(.genericPassword(service: "s", account: "a"), secret: bytes("one"))
        try keychain.add(.genericPassword(service: "s", account: "b"), secret: bytes("two"), accessControl: AccessControl(applicationPassword: "app"))
        try keychain.changePassword(from: Fixture.password, to: "new password")
        keychain.lock()
        #expect(throws: KeychainError.self) { try keychain.unlock(password: Fixture.password) }
        try keychain.unlock(password: "new password")
        #expect(try keychain.secret(matching: .genericPassword(service: "s", account: "a")) == bytes("one"))
        try keychain.rotateMasterKey(password: "new password")
        var query = KeychainQuery.genericPassword(service: "s", account: "b")
        query.applicationPassword = "app"
        #expect(try keychain.secret(matching: query) == bytes("two"))
        if kind == .sqlite {
            let reopened = try fixture.reopen()
            try reopened.unlock(password: "new password")
            #expect(try reopened.secret(matching: .genericPassword(service: "s", account: "a")) == bytes("one"))
        }
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

@Suite("Keychain batch add")
struct KeychainBatchTests {
    @Test(arguments: StoreKind.allCases)
    func batchIsAllOrNothing(kind: StoreKind) throws {
        let fixture = try Fixture(kind)
        let keychain = fixture.keychain
        let items = (0..<50).map { (item: KeychainItem.genericPassword(service: "batch", account: "a\($0)"), secret: bytes("s\($0)")) }
        try keychain.add(contentsOf: items)
        #expect(try keychain.items(matching: .genericPassword(service: "batch")).count == 50)
        #expect(try keychain.secret(matching: .genericPassword(service: "batch", account: "a49")) == bytes("s49"))
        let clash = [(item: KeychainItem.genericPassword(service: "batch", account: "new"), secret: bytes("n")), items[3]]
        #expect(throws: KeychainError.duplicateItem) { try keychain.add(contentsOf: clash) }
        #expect(try keychain.items(matching: .genericPassword(service: "batch", account: "new")).isEmpty, "nothing of a failed batch is kept")
    }
}
