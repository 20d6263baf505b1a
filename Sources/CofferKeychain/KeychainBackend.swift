/// Where items live, with Keychain Services semantics: the four `SecItem…` operations over Coffer's
/// items and queries.
///
/// Three backends implement it: ``Keychain`` (Coffer's encrypted SQLite file, or memory), and, on Apple
/// platforms, `SystemKeychain` (the Security framework's data-protection keychain). Code that only adds,
/// finds, changes and deletes items takes `any KeychainBackend` and runs on each. What only Coffer's own
/// store can do — a password, ``Keychain/lock()``, re-keying, export — lives on ``Keychain`` alone, so
/// the types say what the system keychain cannot do instead of a call failing at run time.
///
/// The rules every backend keeps (Coffer's semantic test suite holds each to them):
/// - ``add(_:secret:accessControl:)`` refuses an item whose identifying attributes another item of its
///   class has (``KeychainError/Code/duplicateItem``);
/// - ``copyMatching(_:returningSecrets:)``, ``update(matching:with:)`` and ``delete(matching:)`` throw
///   ``KeychainError/Code/itemNotFound`` when nothing matches;
/// - a secret sealed under an application password does not open without it.
public protocol KeychainBackend: Sendable {
    /// Adds an item and its secret (`SecItemAdd`).
    /// - Throws: ``KeychainError``: `.duplicateItem`, `.badParameter` for missing identifying attributes.
    func add(_ item: KeychainItem, secret: [UInt8], accessControl: AccessControl) throws(KeychainError)

    /// Finds items (`SecItemCopyMatching`): attributes always, secrets when `returningSecrets`.
    /// - Throws: ``KeychainError`` `.itemNotFound` when nothing matches, and the errors of reading a secret.
    func copyMatching(_ query: KeychainQuery, returningSecrets: Bool) throws(KeychainError) -> [KeychainMatch]

    /// Changes every item matching `query` (`SecItemUpdate`) and returns how many.
    /// - Throws: ``KeychainError`` `.itemNotFound`; `.duplicateItem` when a rename collides.
    @discardableResult
    func update(matching query: KeychainQuery, with changes: KeychainChanges) throws(KeychainError) -> Int

    /// Deletes every item matching `query` (`SecItemDelete`) and returns how many.
    /// - Throws: ``KeychainError`` `.itemNotFound` when nothing matched.
    @discardableResult
    func delete(matching query: KeychainQuery) throws(KeychainError) -> Int

    /// The attributes of every item matching `query`, without secrets; an empty list when nothing
    /// matches. A default reads them through ``copyMatching(_:returningSecrets:)``; Coffer's keychain
    /// reads its rows directly.
    func items(matching query: KeychainQuery) throws(KeychainError) -> [KeychainItem]

    /// The format private keys are stored in by ``add(_:tag:label:accessibility:accessControl:)-(SigningKey,_,_,_,_)``:
    /// PKCS#8 DER in Coffer's store, Apple's external representation in the system keychain (what
    /// `SecKeyCreateWithData` reads).
    var privateKeyStorageFormat: PrivateKeyStorageFormat { get }
}

/// How a backend stores a private key's bytes.
public enum PrivateKeyStorageFormat: Sendable, Hashable {
    /// PKCS#8 DER: every key type Coffer has.
    case pkcs8
    /// Apple's external representation: RSA and EC keys only.
    case appleExternal
}

extension KeychainBackend {
    /// PKCS#8, unless the backend says otherwise.
    public var privateKeyStorageFormat: PrivateKeyStorageFormat { .pkcs8 }

    /// Adds an item with no access control beyond its accessibility.
    public func add(_ item: KeychainItem, secret: [UInt8]) throws(KeychainError) {
        try add(item, secret: secret, accessControl: .none)
    }

    /// The secret of the one item matching `query` (the first, if several match).
    /// - Throws: ``KeychainError`` `.itemNotFound`, and the errors of reading a secret.
    public func secret(matching query: KeychainQuery) throws(KeychainError) -> [UInt8] {
        var one = query
        one.matchLimit = .one
        guard let secret = try copyMatching(one, returningSecrets: true).first?.secret else {
            throw KeychainError(.itemNotFound, "no \(query.itemClass.description) item matches")
        }
        return secret
    }

    /// The attributes of every item matching `query`, without secrets; an empty list when nothing matches.
    public func items(matching query: KeychainQuery) throws(KeychainError) -> [KeychainItem] {
        var all = query
        all.matchLimit = .all
        do {
            return try copyMatching(all, returningSecrets: false).map(\.item)
        } catch {
            guard error.code == .itemNotFound else { throw error }
            return []
        }
    }
}
