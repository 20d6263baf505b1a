import CofferCore
import Foundation

/// One stored item: its attributes and its sealed secret.
struct ItemRow: Sendable {
    var id: Int64
    var item: KeychainItem
    var sealed: [UInt8]
}

/// What an insert does with an item whose identity this keychain deleted (docs/KEYCHAIN.md, "Deleted
/// items"): an import must not bring back what was deleted after the export was made.
struct DeletionCheck: Sendable {
    /// When the items being inserted were current (a dated export's time); nil when unknown, and any
    /// deletion counts as later.
    var madeAt: Date?
    /// Leave such an item out (true), or refuse the whole insert (false).
    var skipping: Bool

    /// Whether a deletion at `deletedAt` (UNIX seconds) came after the items were current.
    func isLater(_ deletedAt: Double) -> Bool { madeAt.map { deletedAt > $0.timeIntervalSince1970 } ?? true }

    /// The refusal of an insert that would bring back a deleted item.
    func refusal(_ item: KeychainItem, deletedAt: Double) -> KeychainError {
        let when = Date(timeIntervalSince1970: deletedAt).formatted(.iso8601)
        let names = [item.server ?? item.service, item.account, item.label].compactMap { $0 }.map { $0.clipped(toUTF8: 80) }
        let what = names.isEmpty ? "" : " ('\(names.joined(separator: "', '"))')"
        let made = madeAt.map { "made \($0.formatted(.iso8601))" } ?? "that does not say when it was made"
        return KeychainError(
            .untrustedExport,
            "a \(item.itemClass.rawValue) item\(what) was deleted from this keychain at \(when), and this export, \(made), would bring it back"
        )
    }
}

/// How many rows an insert with a ``DeletionCheck`` added, and how many it left out as deleted.
struct InsertCount: Sendable, Hashable {
    var inserted = 0
    var skippedDeleted = 0
}

/// Where an encrypted keychain keeps its rows: SQLite on disk, or memory for tests. Storage never sees
/// a plaintext secret or a key; it stores and filters rows and runs changes atomically.
protocol ItemStorage: Sendable {
    /// The keychain's header, or nil if none was created.
    func loadHeader() throws(KeychainError) -> KeychainCrypto.Header?
    /// Stores the first header. - Throws: `.duplicateKeychain` if one exists.
    func createHeader(_ header: KeychainCrypto.Header) throws(KeychainError)
    /// Inserts a row. - Throws: `.duplicateItem` when an item has the same identity.
    func insert(_ item: KeychainItem, sealed: [UInt8]) throws(KeychainError)
    /// Inserts rows in one transaction: all, or none when any identity clashes — or, when
    /// `skippingExisting`, all but those whose identity is already stored. Returns how many were inserted.
    @discardableResult
    func insertAll(_ rows: [(KeychainItem, [UInt8])], skippingExisting: Bool) throws(KeychainError) -> Int
    /// Inserts rows as ``insertAll(_:skippingExisting:)`` does, checking each identity against the
    /// keychain's deletions with `deletions` in the same transaction (nil: no check, as an add).
    func insertAll(_ rows: [(KeychainItem, [UInt8])], skippingExisting: Bool, deletions: DeletionCheck?) throws(KeychainError) -> InsertCount
    /// Rows matching the query, oldest first, at most `limit`.
    func find(_ query: KeychainQuery, limit: Int?) throws(KeychainError) -> [ItemRow]
    /// Replaces each matching row by what `transform` returns, all in one transaction: if `transform`
    /// throws for any row, or a new identity collides, nothing changes. Returns how many rows changed.
    func update(_ query: KeychainQuery, _ transform: (ItemRow) throws(KeychainError) -> ItemRow) throws(KeychainError) -> Int
    /// Deletes matching rows, remembering when each identity was deleted (and an update that changes an
    /// identity remembers the old one so); returns how many.
    func delete(_ query: KeychainQuery) throws(KeychainError) -> Int
    /// Replaces the header and, when `reseal` is given, every row's sealed secret by what it returns,
    /// in one transaction (password change, key rotation). The replaced header and secrets are not left
    /// readable in the store afterwards (the SQLite store overwrites freed space and checkpoints its log).
    func rewrite(header: KeychainCrypto.Header, _ reseal: ((ItemRow) throws(KeychainError) -> [UInt8])?) throws(KeychainError)
}

/// Rows in memory, for tests and for apps that want keychain semantics without a file. Same rules as
/// the SQLite store (identity uniqueness, atomic updates).
final class MemoryStorage: ItemStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var header: KeychainCrypto.Header?
    private var rows: [ItemRow] = []
    private var nextID: Int64 = 1
    /// When each deleted identity was deleted, UNIX seconds.
    private var deletions: [[UInt8]: Double] = [:]

    func loadHeader() throws(KeychainError) -> KeychainCrypto.Header? {
        lock.withLock { header }
    }

    func createHeader(_ header: KeychainCrypto.Header) throws(KeychainError) {
        lock.lock()
        defer { lock.unlock() }
        guard self.header == nil else { throw KeychainError(.duplicateKeychain, "this keychain already exists") }
        self.header = header
    }

    func insert(_ item: KeychainItem, sealed: [UInt8]) throws(KeychainError) {
        lock.lock()
        defer { lock.unlock() }
        let identity = item.identity
        guard !rows.contains(where: { $0.item.identity == identity }) else { throw Self.duplicate }
        rows.append(ItemRow(id: nextID, item: item, sealed: sealed))
        deletions[identity] = nil
        nextID += 1
    }

    func insertAll(_ newRows: [(KeychainItem, [UInt8])], skippingExisting: Bool) throws(KeychainError) -> Int {
        try insertAll(newRows, skippingExisting: skippingExisting, deletions: nil).inserted
    }

    func insertAll(_ newRows: [(KeychainItem, [UInt8])], skippingExisting: Bool, deletions check: DeletionCheck?) throws(KeychainError) -> InsertCount {
        lock.lock()
        defer { lock.unlock() }
        let stored = Set(rows.map(\.item.identity))
        var identities = stored
        var accepted: [ItemRow] = []
        var count = InsertCount()
        for (item, sealed) in newRows {
            let identity = item.identity
            if skippingExisting && stored.contains(identity) { continue }
            if let check, let deletedAt = deletions[identity], check.isLater(deletedAt) {
                guard check.skipping else { throw check.refusal(item, deletedAt: deletedAt) }
                count.skippedDeleted += 1
                continue
            }
            guard identities.insert(identity).inserted else { throw Self.duplicate }
            accepted.append(ItemRow(id: nextID + Int64(accepted.count), item: item, sealed: sealed))
        }
        rows += accepted
        for row in accepted { deletions[row.item.identity] = nil }
        nextID += Int64(accepted.count)
        count.inserted = accepted.count
        return count
    }

    static let duplicate = KeychainError(.duplicateItem, "an item with the same identifying attributes already exists; update it instead")

    func find(_ query: KeychainQuery, limit: Int?) throws(KeychainError) -> [ItemRow] {
        lock.lock()
        defer { lock.unlock() }
        var found: [ItemRow] = []
        for row in rows where query.matches(row.item) {
            found.append(row)
            if let limit, found.count == limit { break }
        }
        return found
    }

    func update(_ query: KeychainQuery, _ transform: (ItemRow) throws(KeychainError) -> ItemRow) throws(KeychainError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        var copy = rows
        var changed = 0
        for index in copy.indices where query.matches(copy[index].item) {
            copy[index] = try transform(copy[index])
            changed += 1
        }
        guard Set(copy.map(\.item.identity)).count == copy.count else { throw Self.duplicate }
        let now = Date().timeIntervalSince1970
        let kept = Set(copy.map(\.item.identity))
        for row in rows where !kept.contains(row.item.identity) { deletions[row.item.identity] = now }
        for identity in kept { deletions[identity] = nil }
        rows = copy
        return changed
    }

    func delete(_ query: KeychainQuery) throws(KeychainError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let now = Date().timeIntervalSince1970
        let before = rows.count
        for row in rows where query.matches(row.item) { deletions[row.item.identity] = now }
        rows.removeAll { query.matches($0.item) }
        return before - rows.count
    }

    func rewrite(header: KeychainCrypto.Header, _ reseal: ((ItemRow) throws(KeychainError) -> [UInt8])?) throws(KeychainError) {
        lock.lock()
        defer { lock.unlock() }
        var copy = rows
        if let reseal {
            for index in copy.indices { copy[index].sealed = try reseal(copy[index]) }
        }
        rows = copy
        self.header = header
    }
}
