import CofferCrypto
import CofferKeychain
import CofferTesting
import Testing

/// The rules every `KeychainBackend` keeps, run against each backend that runs here: Coffer's keychain
/// on a SQLite file and in memory (the system keychain runs only on Apple platforms).
@Suite("Keychain backends")
struct KeychainBackendSemanticTests {
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case sqliteFile, memory
        var description: String { rawValue }
    }

    /// A fresh, unlocked backend of `kind`; the temporary keychain is kept alive with it.
    static func backend(_ kind: Kind) throws -> (any KeychainBackend, AnyObject?) {
        switch kind {
        case .sqliteFile:
            let temporary = try TemporaryKeychain()
            return (temporary.keychain, temporary)
        case .memory:
            let keychain = Keychain.inMemory()
            try keychain.create(password: "pw", kdf: .scrypt(logN: 10, r: 8, p: 1))
            try keychain.unlock(password: "pw")
            return (keychain, nil)
        }
    }

    @Test(arguments: Kind.allCases)
    func addFindUpdateDelete(kind: Kind) throws {
        let (backend, owner) = try Self.backend(kind)
        defer { _ = owner }
        let item = KeychainItem.genericPassword(service: "com.example", account: "ada")
        try backend.add(item, secret: Array("one".utf8))
        #expect(throws: KeychainError.self) { try backend.add(item, secret: Array("two".utf8)) }
        #expect(try backend.secret(matching: .genericPassword(service: "com.example", account: "ada")) == Array("one".utf8))

        var changes = KeychainChanges()
        changes.secret = Array("three".utf8)
        changes.account = "bob"
        #expect(try backend.update(matching: .genericPassword(service: "com.example", account: "ada"), with: changes) == 1)
        #expect(try backend.items(matching: .genericPassword(service: "com.example", account: "ada")).isEmpty)
        #expect(try backend.secret(matching: .genericPassword(service: "com.example", account: "bob")) == Array("three".utf8))

        #expect(try backend.delete(matching: .genericPassword(service: "com.example")) == 1)
        for attempt in [{ _ = try backend.copyMatching(.genericPassword(service: "com.example"), returningSecrets: false) },
                        { _ = try backend.delete(matching: .genericPassword(service: "com.example")) },
                        { _ = try backend.update(matching: .genericPassword(service: "com.example"), with: KeychainChanges()) }] {
            #expect(throws: KeychainError.itemNotFound) { try attempt() }
        }
    }

    @Test(arguments: Kind.allCases)
    func aRenameOntoAnotherItemCollides(kind: Kind) throws {
        let (backend, owner) = try Self.backend(kind)
        defer { _ = owner }
        try backend.add(.genericPassword(service: "s", account: "a"), secret: [1])
        try backend.add(.genericPassword(service: "s", account: "b"), secret: [2])
        var changes = KeychainChanges()
        changes.account = "b"
        #expect(throws: KeychainError.duplicateItem) { try backend.update(matching: .genericPassword(service: "s", account: "a"), with: changes) }
        #expect(try backend.secret(matching: .genericPassword(service: "s", account: "a")) == [1], "nothing changed")
    }

    @Test(arguments: Kind.allCases)
    func anApplicationPasswordIsNeeded(kind: Kind) throws {
        let (backend, owner) = try Self.backend(kind)
        defer { _ = owner }
        try backend.add(.genericPassword(service: "vault", account: "ada"), secret: [42], accessControl: AccessControl(applicationPassword: "app"))
        var query = KeychainQuery.genericPassword(service: "vault", account: "ada")
        #expect(throws: KeychainError.self) { _ = try backend.secret(matching: query) }
        query.applicationPassword = "wrong"
        #expect(throws: KeychainError.self) { _ = try backend.secret(matching: query) }
        query.applicationPassword = "app"
        #expect(try backend.secret(matching: query) == [42])
    }

    /// Signing keys and password items work through the protocol, on every backend.
    @Test(arguments: Kind.allCases)
    func passwordItemsAndSigningKeysWorkOnAnyBackend(kind: Kind) throws {
        let (backend, owner) = try Self.backend(kind)
        defer { _ = owner }
        let item = KeychainPasswordItem(service: "com.example.api", account: "ada", keychain: backend)
        try item.save("t0ken")
        #expect(try item.readPassword() == "t0ken")
        let key = try SigningKey.generate(.p256)
        try backend.add(key, tag: "signing")
        #expect(try backend.signingKey(tag: "signing").verifyingKey == key.verifyingKey)
    }
}
