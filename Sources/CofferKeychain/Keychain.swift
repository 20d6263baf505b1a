public import CofferCore
public import CofferCrypto
import Crypto
import Foundation

/// A keychain: small secrets (passwords, tokens, keys, certificates) stored as items with Keychain
/// Services semantics, each secret encrypted under a master key that only the keychain password unwraps.
///
/// ```swift
/// let keychain = try Keychain.open()                 // the default file: DataLocation, then coffer/keychain.db
/// try keychain.unlock(password: "keychain password")
/// try keychain.add(.genericPassword(service: "com.example.app", account: "ada@example.com"), secret: Array("token".utf8))
/// let token = try keychain.secret(matching: .genericPassword(service: "com.example.app", account: "ada@example.com"))
/// ```
///
/// One instance is safe to use from many threads; several processes may open the same file. Locking is
/// per instance: ``lock()`` forgets the master key and the `whenUnlocked` class keys but keeps the
/// `afterFirstUnlock` ones until the instance is released.
public final class Keychain: KeychainBackend, @unchecked Sendable {
    let storage: any ItemStorage
    /// Where the keychain lives, or nil for an in-memory one.
    public let path: String?
    private let state = NSLock()
    private var header: KeychainCrypto.Header?
    private var masterKey: SymmetricKey?
    private var classKeys: [Accessibility: SymmetricKey] = [:]
    private var presencePromptStorage: (@Sendable (String) -> String?)?
    private var passwordLimitsStorage = PasswordKDFLimits()

    /// The most key-derivation work the keychain password may ask for, read from the file's header
    /// before anything is derived (the defaults: the memory and work of scrypt N=2^19, r=8, p=1; a
    /// header asking more is `.badParameter`, whatever the password). Raise them to open a keychain
    /// made with a higher cost by an earlier release; ``create(password:kdf:)`` and
    /// ``changePassword(from:to:kdf:)`` refuse a cost above them too.
    public var passwordLimits: PasswordKDFLimits {
        get { state.withLock { passwordLimitsStorage } }
        set { state.withLock { passwordLimitsStorage = newValue } }
    }

    /// Asked for the keychain password when an item that requires user presence is read; gets the
    /// operation prompt and returns the password, or nil if the user declined. On Linux this is what
    /// "user presence" means (there is no biometry); without a prompt such items are unreadable.
    public var presencePrompt: (@Sendable (String) -> String?)? {
        get { state.withLock { presencePromptStorage } }
        set { state.withLock { presencePromptStorage = newValue } }
    }

    init(storage: any ItemStorage, path: String?) {
        self.storage = storage
        self.path = path
    }


    /// The default file: `keychain.db` in Coffer's data folder (`DataLocation/cofferFolder(environment:)`:
    /// `$XDG_DATA_HOME/coffer` or `~/.local/share/coffer` on Linux, Application Support on Apple platforms).
    /// - Throws: ``KeychainError`` `.noSuchKeychain` when the platform names no data folder (no absolute
    ///   `XDG_DATA_HOME` or `HOME`), with the `CofferCoreError` as its underlying error.
    public static func defaultPath(environment: [String: String] = DataLocation.currentEnvironment) throws(KeychainError) -> String {
        do {
            return try DataLocation.cofferFolder(environment: environment) + "/keychain.db"
        } catch {
            throw KeychainError(.noSuchKeychain, "there is no default keychain file: \(error.reason); pass a path", underlying: error)
        }
    }

    /// Opens the keychain file at `path` (the default location when nil).
    /// - Parameters:
    ///   - path: the keychain file; ``defaultPath(environment:)`` when nil.
    ///   - create: create the file (0600, in a 0700 folder) when missing; ``create(password:kdf:)``
    ///     then sets its password.
    /// - Throws: ``KeychainError`` `.noSuchKeychain` when the file is missing and `create` is false.
    public static func open(at path: String? = nil, create: Bool = false) throws(KeychainError) -> Keychain {
        let path = if let path { path } else { try defaultPath() }
        return Keychain(storage: try SQLiteStorage(path: path, create: create), path: path)
    }

    /// A keychain that lives in memory only, with the same semantics: for tests and previews.
    public static func inMemory() -> Keychain {
        Keychain(storage: MemoryStorage(), path: nil)
    }

    // MARK: Password and lock state

    /// Whether the keychain has a password yet.
    public var isCreated: Bool {
        get throws(KeychainError) { try currentHeader() != nil }
    }

    /// Whether the master key is in memory (``unlock(password:)`` was called and ``lock()`` was not).
    public var isLocked: Bool { state.withLock { masterKey == nil } }

    /// Sets up a new keychain: a random master key wrapped under `password`, stretched with `kdf`. The
    /// keychain is unlocked afterwards.
    /// - Parameters:
    ///   - password: The keychain password; not empty.
    ///   - kdf: scrypt, N=2^17, r=8, p=1 by default; the header records scrypt with log2 N 10–22, r 1–32
    ///     and p 1–16.
    /// - Throws: `.duplicateKeychain` when it already has a password; `.badParameter` for an empty
    ///   password or a `kdf` the header cannot record or above ``passwordLimits``.
    public func create(password: String, kdf: PasswordKDF = .default) throws(KeychainError) {
        guard !password.isEmpty else { throw KeychainError(.badParameter, "the keychain password cannot be empty") }
        let (header, master) = try KeychainCrypto.newHeader(password: Array(password.utf8), kdf: kdf, limits: passwordLimits)
        try storage.createHeader(header)
        install(header: header, master: master)
    }

    /// Unwraps the master key with the keychain password. Costs one scrypt and nothing else, within
    /// ``passwordLimits``.
    /// - Throws: `.authenticationFailed` for a wrong password; `.noSuchKeychain` before ``create(password:kdf:)``;
    ///   `.badParameter` when the file's header asks for more work than ``passwordLimits`` admit.
    public func unlock(password: String) throws(KeychainError) {
        let header = try requireHeader()
        let master = try KeychainCrypto.unwrap(password: Array(password.utf8), header: header, limits: passwordLimits)
        install(header: header, master: master)
    }

    /// Forgets the master key and the `whenUnlocked` class keys; `afterFirstUnlock` items stay readable.
    public func lock() {
        state.withLock {
            masterKey = nil
            classKeys = classKeys.filter { $0.key.survivesLock }
        }
    }

    /// Changes the keychain password, and with it the master key: a new random master key, wrapped under
    /// `new`, re-seals every item in one transaction (either every item moves or none does), and the old
    /// wrapped key is overwritten in the file. So a copy of the keychain taken before the change, with
    /// the old password, opens only what that copy itself holds — never an item added or changed since,
    /// even if its old header is written back into today's file (docs/KEYCHAIN.md, "Password change").
    /// - Parameters:
    ///   - old: the current password.
    ///   - new: the new password; not empty.
    ///   - kdf: how the new password is stretched (as for ``create(password:kdf:)``); the current
    ///     parameters when nil.
    /// - Throws: `.authenticationFailed` for a wrong `old`; `.badParameter` for an empty `new` or a `kdf`
    ///   the header cannot record.
    public func changePassword(from old: String, to new: String, kdf: PasswordKDF? = nil) throws(KeychainError) {
        guard !new.isEmpty else { throw KeychainError(.badParameter, "the keychain password cannot be empty") }
        if let kdf { _ = try KeychainCrypto.checkedScrypt(kdf) }
        try rekey(password: old, newPassword: new, kdf: kdf)
    }

    /// Replaces the master key with a new random one and re-seals every item under it, in one
    /// transaction: either every item moves to the new key or none does. The password stays.
    /// Application-password layers are kept as they are (they do not depend on the master key).
    /// - Throws: `.authenticationFailed` for a wrong password.
    public func rotateMasterKey(password: String) throws(KeychainError) {
        try rekey(password: password, newPassword: password, kdf: nil)
    }

    /// A new master key wrapped under `newPassword`, every item re-sealed under it, the old header gone.
    private func rekey(password: String, newPassword: String, kdf: PasswordKDF?) throws(KeychainError) {
        let oldHeader = try requireHeader()
        let limits = passwordLimits
        let oldMaster = try KeychainCrypto.unwrap(password: Array(password.utf8), header: oldHeader, limits: limits)
        var (newHeader, newMaster) = try KeychainCrypto.newHeader(password: Array(newPassword.utf8), kdf: kdf ?? oldHeader.kdf, limits: limits)
        // The keychain id stays: it names the keychain, and exports refer to it.
        newHeader.keychainID = oldHeader.keychainID
        newHeader.wrappedMasterKey = try KeychainCrypto.wrap(newMaster, password: Array(newPassword.utf8), header: newHeader, limits: limits)
        try storage.rewrite(header: newHeader) { row throws(KeychainError) in
            let ad = KeychainCrypto.itemAD(keychainID: oldHeader.keychainID, item: row.item)
            var inner = try KeychainCrypto.open(
                row.sealed, key: KeychainCrypto.classKey(master: oldMaster, keychainID: oldHeader.keychainID, accessibility: row.item.accessibility), ad: ad
            )
            defer { SecretBytes.wipe(&inner) }
            return try KeychainCrypto.seal(
                inner, key: KeychainCrypto.classKey(master: newMaster, keychainID: newHeader.keychainID, accessibility: row.item.accessibility), ad: ad
            )
        }
        state.withLock { classKeys = [:] }
        install(header: newHeader, master: newMaster)
    }

    /// The keychain's identity: a random id fixed when it was created (32 hex digits), the same however
    /// its path is spelled and across password changes and rotations. Copies of the file share it.
    /// - Throws: `.noSuchKeychain` before ``create(password:kdf:)``.
    public var identifier: String {
        get throws(KeychainError) { Hex.encode(try requireHeader().keychainID) }
    }

    private func install(header: KeychainCrypto.Header, master: SymmetricKey) {
        state.withLock {
            self.header = header
            self.masterKey = master
            for accessibility in Accessibility.allCases {
                classKeys[accessibility] = KeychainCrypto.classKey(master: master, keychainID: header.keychainID, accessibility: accessibility)
            }
        }
    }

    private func currentHeader() throws(KeychainError) -> KeychainCrypto.Header? {
        if let header = state.withLock({ header }) { return header }
        let loaded = try storage.loadHeader()
        state.withLock { header = loaded }
        return loaded
    }

    func requireHeader() throws(KeychainError) -> KeychainCrypto.Header {
        guard let header = try currentHeader() else {
            throw KeychainError(.noSuchKeychain, "the keychain has no password yet; create it with one first")
        }
        return header
    }

    func classKey(for accessibility: Accessibility) throws(KeychainError) -> SymmetricKey {
        guard let key = state.withLock({ classKeys[accessibility] }) else {
            throw KeychainError(.interactionNotAllowed, "the keychain is locked; unlock it to use \(accessibility.description) items")
        }
        return key
    }

    /// The unlocked state for ``KeychainSession`` (the kernel keyring): SHA-256 of the stored header
    /// followed by the master key. Bound to the header, so a cache made before a password change or a
    /// key rotation, or for another keychain, is refused.
    func sessionKeyBytes() throws(KeychainError) -> [UInt8] {
        let header = try requireHeader()
        guard let master = state.withLock({ masterKey }) else { throw KeychainError(.interactionNotAllowed, "the keychain is locked") }
        return Array(SHA256.hash(data: header.encoded)) + master.withUnsafeBytes { Array($0) }
    }

    /// Unlocks from ``sessionKeyBytes()``.
    func unlock(sessionKey bytes: [UInt8]) throws(KeychainError) {
        let header = try requireHeader()
        guard bytes.count == 64, ConstantTime.equals(bytes[0..<32], Array(SHA256.hash(data: header.encoded))) else {
            throw KeychainError(.authenticationFailed, "the cached unlock belongs to another keychain or to its old password; unlock again")
        }
        install(header: header, master: SymmetricKey(data: bytes[32...]))
    }

    // MARK: Items

    /// Adds an item (`SecItemAdd`).
    /// - Parameters:
    ///   - item: the class and attributes; the identifying ones must be set (see ``ItemClass``).
    ///   - secret: the bytes to protect (at most 1 MiB).
    ///   - accessControl: an application password and/or user presence for reading it.
    /// - Throws: `.duplicateItem`, `.badParameter`, `.interactionNotAllowed` while locked (for an
    ///   accessibility whose key is not in memory).
    public func add(_ item: KeychainItem, secret: [UInt8], accessControl: AccessControl = .none) throws(KeychainError) {
        let (stored, sealed) = try prepare(item, secret: secret, accessControl: accessControl, header: try requireHeader(), now: Self.now())
        try storage.insert(stored, sealed: sealed)
    }

    /// Adds many items in one transaction: all of them, or none if any is invalid or clashes (with the
    /// keychain or with another in the list). Much faster than one ``add(_:secret:accessControl:)`` each,
    /// since the disk is flushed once; for imports and migrations.
    public func add(contentsOf items: [(item: KeychainItem, secret: [UInt8])]) throws(KeychainError) {
        let header = try requireHeader()
        let now = Self.now()
        var rows: [(KeychainItem, [UInt8])] = []
        rows.reserveCapacity(items.count)
        for (item, secret) in items {
            rows.append(try prepare(item, secret: secret, accessControl: .none, header: header, now: now))
        }
        try storage.insertAll(rows, skippingExisting: false)
    }

    /// The current time as every store keeps it (seconds since 1970 in a Double), so that an item's
    /// dates compare equal however it was stored, exported or imported.
    static func now() -> Date {
        Date(timeIntervalSince1970: Date().timeIntervalSince1970)
    }

    /// Checks an item to add, stamps its dates and access-control flags, and seals its secret.
    private func prepare(
        _ item: KeychainItem, secret: [UInt8], accessControl: AccessControl, header: KeychainCrypto.Header, now: Date
    ) throws(KeychainError) -> (KeychainItem, [UInt8]) {
        try item.validate()
        guard secret.count <= 1 << 20 else { throw KeychainError(.badParameter, "an item's secret is at most 1 MiB, found \(secret.count) bytes") }
        var stored = item
        stored.creationDate = now
        stored.modificationDate = now
        stored.hasApplicationPassword = accessControl.applicationPassword != nil
        stored.requiresUserPresence = accessControl.requiresUserPresence
        return (stored, try seal(secret, item: stored, applicationPassword: accessControl.applicationPassword, header: header))
    }

    private func seal(_ secret: [UInt8], item: KeychainItem, applicationPassword: String?, header: KeychainCrypto.Header) throws(KeychainError) -> [UInt8] {
        let key = try classKey(for: item.accessibility)
        var inner = secret
        if let applicationPassword {
            guard !applicationPassword.isEmpty else { throw KeychainError(.badParameter, "an application password cannot be empty") }
            inner = try KeychainCrypto.sealWithApplicationPassword(secret, password: applicationPassword, identity: item.identity)
        }
        return try KeychainCrypto.seal(inner, key: key, ad: KeychainCrypto.itemAD(keychainID: header.keychainID, item: item))
    }

    private func open(_ row: ItemRow, query: KeychainQuery, header: KeychainCrypto.Header) throws(KeychainError) -> [UInt8] {
        let key = try classKey(for: row.item.accessibility)
        if row.item.requiresUserPresence {
            let prompt = presencePrompt
            let reason = query.operationPrompt ?? "read \(row.item.label ?? row.item.account ?? "a keychain item")"
            guard let prompt, let password = prompt(reason) else {
                throw KeychainError(.authenticationFailed, "this item requires user presence: confirm with the keychain password")
            }
            _ = try KeychainCrypto.unwrap(password: Array(password.utf8), header: header, limits: passwordLimits)
        }
        var inner = try KeychainCrypto.open(row.sealed, key: key, ad: KeychainCrypto.itemAD(keychainID: header.keychainID, item: row.item))
        guard row.item.hasApplicationPassword else { return inner }
        defer { SecretBytes.wipe(&inner) }
        guard let applicationPassword = query.applicationPassword else {
            throw KeychainError(.authenticationFailed, "this item has an application password; supply it to read the item")
        }
        return try KeychainCrypto.openWithApplicationPassword(inner, password: applicationPassword, identity: row.item.identity)
    }

    /// Finds items (`SecItemCopyMatching`): their attributes always, their secrets when `returningSecrets`.
    /// Attributes are readable while locked; secrets follow their accessibility.
    /// - Throws: `.itemNotFound` when nothing matches; for secrets, `.interactionNotAllowed` while locked,
    ///   `.authenticationFailed` for a missing or wrong application password, `.dataCorrupted` when a
    ///   row was altered outside Coffer (no secret is returned then).
    public func copyMatching(_ query: KeychainQuery, returningSecrets: Bool = false) throws(KeychainError) -> [KeychainMatch] {
        let rows = try storage.find(query, limit: query.matchLimit == .one ? 1 : nil)
        guard !rows.isEmpty else { throw KeychainError(.itemNotFound, "no \(query.itemClass.description) item matches") }
        guard returningSecrets else { return rows.map { KeychainMatch(item: $0.item, secret: nil) } }
        let header = try requireHeader()
        var matches: [KeychainMatch] = []
        matches.reserveCapacity(rows.count)
        for row in rows {
            matches.append(KeychainMatch(item: row.item, secret: try open(row, query: query, header: header)))
        }
        return matches
    }

    /// The attributes of every item matching `query` (match limit all), without secrets; an empty list
    /// when nothing matches. Works while locked.
    public func items(matching query: KeychainQuery) throws(KeychainError) -> [KeychainItem] {
        try storage.find(query, limit: nil).map(\.item)
    }

    /// Changes every item matching `query` (`SecItemUpdate`), atomically: all or none.
    /// - Throws: `.itemNotFound`; `.duplicateItem` when a rename collides; the read errors of
    ///   ``copyMatching(_:returningSecrets:)`` when a secret must be re-sealed.
    @discardableResult
    public func update(matching query: KeychainQuery, with changes: KeychainChanges) throws(KeychainError) -> Int {
        let header = try requireHeader()
        let changed = try storage.update(query) { row throws(KeychainError) in
            var item = row.item
            if let label = changes.label { item.label = label }
            if let comment = changes.comment { item.comment = comment }
            if let account = changes.account { item.account = account }
            if let service = changes.service { item.service = service }
            if let accessibility = changes.accessibility { item.accessibility = accessibility }
            item.modificationDate = Self.now()
            try item.validate()
            var copy = row
            copy.item = item
            let resealNeeded = changes.secret != nil || item.identity != row.item.identity || item.accessibility != row.item.accessibility
            if resealNeeded {
                var secret: [UInt8]
                if let new = changes.secret { secret = new } else { secret = try self.open(row, query: query, header: header) }
                defer { SecretBytes.wipe(&secret) }
                copy.sealed = try self.seal(secret, item: item, applicationPassword: item.hasApplicationPassword ? query.applicationPassword : nil, header: header)
            }
            return copy
        }
        guard changed > 0 else { throw KeychainError(.itemNotFound, "no \(query.itemClass.description) item matches") }
        return changed
    }

    /// Deletes every item matching `query` (`SecItemDelete`); returns how many.
    /// - Throws: `.itemNotFound` when nothing matched.
    @discardableResult
    public func delete(matching query: KeychainQuery) throws(KeychainError) -> Int {
        let count = try storage.delete(query)
        guard count > 0 else { throw KeychainError(.itemNotFound, "no \(query.itemClass.description) item matches") }
        return count
    }
}
