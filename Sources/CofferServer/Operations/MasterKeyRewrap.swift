// One file on purpose: the rewrap's passes over data keys, users and key records share one summary, one
// batch loop and the same checks of tags and bindings, which change together; the user look-ups the
// bindings need are in RewrapUserBindings.swift.

import CofferCore
import Foundation

/// What `rewrap` and retirement need from a store beyond ``RegistrationStore`` (docs/SERVER.md, "The
/// master keyring"); Coffer's SQLite and PostgreSQL stores have it. Every change is a compare-and-set:
/// it lands only on a row still as it was read, and only while the key it wraps under is the one the
/// keyring records as wrapping, so it is safe beside live instances and beside another `rewrap`.
public protocol MasterKeyRewrapStore: RegistrationStore {
    /// Data-key versions not wrapped under `masterKeyID`, in (owner, version) order after `position`'s
    /// (from the first when nil), at most `limit`.
    func dataKeys(notWrappedUnder masterKeyID: String, after position: StoredDataKey?, limit: Int) async throws -> [StoredDataKey]
    /// Replaces the wrapping of each row still as read, under `masterKeyID` while it is the wrapping
    /// key, in one transaction; how many rows changed.
    func rewrapDataKeys(_ changes: [MasterKeyRewrite<StoredDataKey>], under masterKeyID: String) async throws -> Int
    /// Key records not tagged under `masterKeyID` (without a tag, or tagged under another key), or
    /// whose secret is not wrapped under it, in key-id order after `keyID` (from the first when nil), at
    /// most `limit`.
    func keyRecords(notTaggedUnder masterKeyID: String, after keyID: String?, limit: Int) async throws -> [RegisteredKey]
    /// Replaces each record still as read (its secret and its tag unchanged) with its rewrite, every
    /// field its tag covers written from the rewrite, while `masterKeyID` is the wrapping key, in one
    /// transaction; how many rows changed.
    func rewriteKeyRecords(_ changes: [KeyRecordRewrite], under masterKeyID: String) async throws -> Int
    /// User records not tagged under `masterKeyID`, by number after `id` (from the first when nil), at
    /// most `limit`.
    func users(notTaggedUnder masterKeyID: String, after id: Int64?, limit: Int) async throws -> [RegisteredUser]
    /// Replaces each user record whose tag is still as read with its rewrite (its fields written from
    /// the rewrite), while `masterKeyID` is the wrapping key, in one transaction; how many rows changed.
    func rewriteUsers(_ changes: [UserRecordRewrite], under masterKeyID: String) async throws -> Int
    /// Marks `masterKeyID` retired when no row is wrapped under it and it is not the wrapping key (one
    /// transaction, serialized with every keyring change).
    func retireMasterKey(_ masterKeyID: String, at time: Int64) async throws -> MasterKeyRetirement
}

/// A record as read and what replaces it, tagged under the wrapping key (a key record's secret wrapped
/// under it too).
public struct RecordRewrite<Record: Sendable & Hashable>: Sendable, Hashable {
    /// The record as read.
    public let before: Record
    /// The record to write.
    public let after: Record

    /// A rewrite.
    /// - Parameters:
    ///   - before: the record as read.
    ///   - after: the record to write.
    public init(before: Record, after: Record) {
        self.before = before
        self.after = after
    }
}

/// A key record's rewrite.
public typealias KeyRecordRewrite = RecordRewrite<RegisteredKey>
/// A user record's rewrite.
public typealias UserRecordRewrite = RecordRewrite<RegisteredUser>

/// A stored row and what replaces its wrapped value.
public struct MasterKeyRewrite<Row: Sendable & Hashable>: Sendable, Hashable {
    /// The row as read.
    public let row: Row
    /// Its value wrapped under the new key.
    public let replacement: String

    /// A rewrite.
    /// - Parameters:
    ///   - row: the row as read.
    ///   - replacement: its value wrapped under the new key.
    public init(row: Row, replacement: String) {
        self.row = row
        self.replacement = replacement
    }
}

/// What retiring a master key did.
public enum MasterKeyRetirement: Sendable, Hashable {
    /// It is retired now: instances may stop holding it.
    case retired
    /// It was already retired.
    case alreadyRetired
    /// The keyring does not record it.
    case unknown
    /// It is the wrapping key: promote another first.
    case wrapping
    /// Rows are still wrapped or tagged under it: run `rewrap` first.
    case stillWraps(dataKeys: Int, secrets: Int, records: Int)
}

/// Re-wraps every stored data key and HMAC secret under the keyring's wrapping key, and tags every key
/// record under it (docs/SERVER.md, "Rotating the master key", "Authenticated key records"): in batches,
/// each committed on its own, so an interrupted run loses nothing and a second run continues where the
/// first stopped; beside live instances, whose new rows are already under the wrapping key, and whose
/// rows written behind the scan are found by the next pass. A data key keeps its bytes (devices notice
/// nothing); a secret in clear gets wrapped. A key record is tagged anew only once its tag has been
/// checked; a record without a tag is tagged only when asked (``run(dryRun:kinds:taggingUntagged:progress:)``).
public struct MasterKeyRewrap: Sendable {
    /// Which rows a batch held.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Versions of data keys (`coffer_data_keys`).
        case dataKeys = "data keys"
        /// Key records (`coffer_keys`): their tags, and their HMAC secrets.
        case keyRecords = "key records"
        /// User records (`coffer_users`): their tags.
        case users = "users"
    }

    /// The work done so far, reported after each committed batch.
    public struct Progress: Sendable, Hashable {
        /// The rows of the batch just done.
        public let kind: Kind
        /// Rows of this kind re-wrapped (or tagged anew) so far in this run (counted, not written, in a
        /// dry run).
        public let rewrapped: Int
        /// Rows of this kind seen in this pass that this keyring cannot open, or whose tag does not match.
        public let unopenable: Int
        /// Which pass over the tables this is, from 1.
        public let pass: Int
    }

    /// What a run did.
    public struct Summary: Sendable, Hashable {
        /// The key every row was re-wrapped under: the keyring's recorded wrapping key.
        public let wrappingKeyID: String
        /// Whether nothing was written (the counts say what would have been).
        public let dryRun: Bool
        /// Data-key versions re-wrapped.
        public var dataKeys = 0
        /// HMAC secrets re-wrapped, those stored in clear before included.
        public var secrets = 0
        /// Of ``secrets``, those that were in clear.
        public var secretsFromClear = 0
        /// Key and user records tagged under the wrapping key (a key's secret, if any, re-wrapped:
        /// ``secrets``).
        public var records = 0
        /// Of ``records``, those that had no tag (written by an earlier release), tagged because the
        /// run was asked to.
        public var recordsFromUntagged = 0
        /// Those records in order, as key ids (`<key id> linked to user <number> (…)` for a key whose
        /// link was bound to the user's record, `user <number> (<address>, signed up by <key id>)` for
        /// users): what the operator accepted as it was (in a dry run, what would be), to compare with
        /// what they expect.
        public var untaggedRecordIDs: [String] = []
        /// Key records without a tag that were left so (the run was not asked to tag them): they are
        /// refused until they are.
        public var untagged = 0
        /// Versions of users' data keys bound to no user record (an earlier release made them) that were
        /// bound to the user's record as it is now, because the run was asked to (``run(dryRun:kinds:taggingUntagged:progress:)``),
        /// each as `data key <id> version <n> of user <number> (<address>, signed up by <key id>)`: what
        /// the operator accepted (in a dry run, would).
        public var boundDataKeys: [String] = []
        /// Versions of users' data keys bound to no user record left so: they are refused until bound.
        public var unboundDataKeys = 0
        /// Rows this keyring cannot open, by the master key id they are wrapped or tagged under: rows
        /// under a key it lacks, rows that do not open with the key they name, key records that do not
        /// match their tag (all changed in the database).
        public var unopenable: [String: Int] = [:]
        /// What is left under other keys after the run (in a dry run: before it), and secrets in clear.
        /// A key with no rows here and not wrapping can be retired.
        public var remaining = MasterKeyUsage()
    }

    private let store: any MasterKeyRewrapStore
    private let keyring: ServerMasterKeyring
    /// Rows read, re-wrapped and committed at a time.
    public let batchSize: Int

    /// A rewrap of `store`'s rows with `keyring`'s keys.
    /// - Parameters:
    ///   - store: the database, one of Coffer's stores (or a custom store that is a
    ///     ``MasterKeyRewrapStore``).
    ///   - keyring: the keys rows are wrapped under now, and the wrapping key.
    ///   - batchSize: rows per committed batch (1 to 10,000).
    /// - Throws: ``ServerConfigurationError`` `.invalidDatabaseLocation` for a store that cannot rewrap.
    public init(store: any RegistrationStore, keyring: ServerMasterKeyring, batchSize: Int = 500) throws(ServerConfigurationError) {
        guard let store = store as? any MasterKeyRewrapStore else {
            throw ServerConfigurationError(.invalidDatabaseLocation, "this store cannot rewrap its rows: expected one of Coffer's stores (SQLite or PostgreSQL)")
        }
        self.store = store
        self.keyring = keyring
        self.batchSize = min(max(batchSize, 1), 10_000)
    }

    /// Re-wraps every row not under the wrapping key, pass after pass until a pass finds nothing more
    /// to do. The database must record a wrapping key this keyring holds (a database that records no
    /// keyring records one first, as a starting instance does; a dry run then assumes the first key).
    /// - Parameters:
    ///   - dryRun: count what would be done, write nothing.
    ///   - kinds: the rows to visit (all by default).
    ///   - taggingUntagged: tag key records that carry no tag (or one under a master key the keyring
    ///     records abandoned, which can never be checked again), as they are, and bind versions of
    ///     users' data keys that an earlier release made to the user's record as it is now. Only for records an
    ///     earlier release wrote, or after a new keyring was started: a record without a tag in a
    ///     database that records a keyring is otherwise one written outside Coffer, and tagging it makes
    ///     the server trust it.
    ///   - progress: called after each batch is committed; an error it throws stops the run there
    ///     (the batches committed stay done).
    /// - Throws: ``ServerConfigurationError`` `.masterKeyringMismatch` when the keyring lacks the
    ///   wrapping key, or the wrapping key changes during the run; the store's and `progress`'s errors.
    public func run(
        dryRun: Bool = false, kinds: Set<Kind> = Set(Kind.allCases), taggingUntagged: Bool = false, progress: (Progress) throws -> Void = { _ in }
    ) async throws -> Summary {
        let wrapping = try await wrappingKey(dryRun: dryRun)
        let abandoned = taggingUntagged ? Set(try await store.masterKeyring().filter { $0.state == .abandoned }.map(\.keyID)) : []
        var summary = Summary(wrappingKeyID: wrapping.keyID, dryRun: dryRun)
        var pass = 0
        while pass < 16 {
            pass += 1
            summary.unopenable = [:]
            summary.untagged = 0
            summary.unboundDataKeys = 0
            let before = summary.dataKeys + summary.records
            let (id, size) = (wrapping.keyID, batchSize)
            // Binding visits every version, those already under the wrapping key included.
            if kinds.contains(.dataKeys) {
                // Users this pass has yet to tag are bound to in the next (a dry run tags none, and
                // binds to each user as the run would tag it).
                let users = UserBindings(store: store, keyring: keyring, acceptingUntagged: dryRun && taggingUntagged)
                let visited = taggingUntagged ? Self.noMasterKeyID : id
                try await rewrapBatches(
                    .dataKeys, pass: pass, under: wrapping, into: &summary, progress: progress,
                    read: { try await store.dataKeys(notWrappedUnder: visited, after: $0, limit: size) },
                    rewrap: { try await rewrap(dataKey: $0, under: wrapping, binding: taggingUntagged, users: users) },
                    write: { try await store.rewrapDataKeys($0, under: id) }
                )
            }
            if kinds.contains(.users) {
                try await rewrapBatches(
                    .users, pass: pass, under: wrapping, into: &summary, progress: progress,
                    read: { try await store.users(notTaggedUnder: id, after: $0?.id, limit: size) },
                    rewrap: { try rewrite(user: $0, under: wrapping, taggingUntagged: taggingUntagged, abandoned: abandoned) },
                    write: { try await store.rewriteUsers($0, under: id) }
                )
            }
            if kinds.contains(.keyRecords) {
                // The users as this pass left them, which links are bound to.
                let users = UserBindings(store: store, keyring: keyring, acceptingUntagged: dryRun && taggingUntagged)
                try await rewrapBatches(
                    .keyRecords, pass: pass, under: wrapping, into: &summary, progress: progress,
                    read: { try await store.keyRecords(notTaggedUnder: id, after: $0?.keyID, limit: size) },
                    rewrap: { try await rewrite(record: $0, under: wrapping, taggingUntagged: taggingUntagged, abandoned: abandoned, users: users) },
                    write: { try await store.rewriteKeyRecords($0, under: id) }
                )
            }
            // A dry run writes nothing, so another pass would find the same rows.
            if dryRun || summary.dataKeys + summary.records == before { break }
        }
        let usage = try await store.masterKeyUsage()
        summary.remaining = MasterKeyUsage(
            rows: usage.rows.filter { $0.key != wrapping.keyID }, secretsInClear: usage.secretsInClear, untaggedRecords: usage.untaggedRecords
        )
        return summary
    }

    private func wrappingKey(dryRun: Bool) async throws -> ServerMasterKey {
        let recorded = try await store.masterKeyring()
        let id: String?
        if dryRun {
            id = recorded.first { $0.state == .wrapping }?.keyID ?? keyring.keys[0].keyID
        } else {
            id = try await ServerMasterKeyring.check(keyring, against: store).wrappingKeyID
        }
        guard let id, let key = keyring.key(id: id) else { throw ServerMasterKeyring.mismatch(keyring, recorded: recorded) }
        return key
    }

    /// What re-wrapping one stored row gives: its replacement (with what it was before), the label it
    /// is counted under as unopenable (a master key id, or a description in parentheses), or nothing
    /// to do (a record without a tag, or a user's data key bound to no record, left so; a row already
    /// as it should be).
    private enum Rewrapped<Change> {
        case replacement(Change, Marks)
        case unopenable(String)
        case leftUntagged
        case unchanged
    }

    /// What a replacement changed beside the row's own value, for the summary.
    private struct Marks {
        /// An HMAC secret was re-wrapped.
        var secret = false
        /// The secret was in clear.
        var fromClear = false
        /// The record had no tag (or the user's data key no binding): its key id or description.
        var fromUntagged: String?
    }

    /// One pass over one kind of row: batches read after the previous batch's last row, each re-wrapped
    /// and written (counted only, in a dry run), then reported.
    private func rewrapBatches<Row: Sendable & Hashable, Change: Sendable>(
        _ kind: Kind, pass: Int, under wrapping: ServerMasterKey, into summary: inout Summary, progress: (Progress) throws -> Void,
        read: (Row?) async throws -> [Row], rewrap: (Row) async throws -> Rewrapped<Change>, write: ([Change]) async throws -> Int
    ) async throws {
        var after: Row?
        var unopenable = 0
        while true {
            let rows = try await read(after)
            guard let last = rows.last else { return }
            after = last
            var changes: [Change] = []
            var (secrets, fromClear) = (0, 0)
            var fromUntagged: [String] = []
            for row in rows {
                switch try await rewrap(row) {
                case .replacement(let change, let marks):
                    changes.append(change)
                    if marks.secret { secrets += 1 }
                    if marks.fromClear { fromClear += 1 }
                    if let keyID = marks.fromUntagged { fromUntagged.append(keyID) }
                case .unopenable(let label):
                    summary.unopenable[label, default: 0] += 1
                    unopenable += 1
                case .leftUntagged:
                    if kind == .dataKeys { summary.unboundDataKeys += 1 } else { summary.untagged += 1 }
                case .unchanged:
                    break
                }
            }
            let written = summary.dryRun ? changes.count : try await write(changes)
            try await confirm(written, of: changes.count, under: wrapping)
            // A row another run changed first was counted there; this run's are those it wrote.
            let whole = written == changes.count
            let total: Int
            switch kind {
            case .dataKeys:
                summary.dataKeys += written
                if whole { summary.boundDataKeys += fromUntagged }
                total = summary.dataKeys
            case .keyRecords, .users:
                summary.records += written
                summary.secrets += whole ? secrets : 0
                if whole {
                    summary.recordsFromUntagged += fromUntagged.count
                    summary.untaggedRecordIDs += fromUntagged
                }
                summary.secretsFromClear += whole ? fromClear : 0
                total = summary.records
            }
            try progress(Progress(kind: kind, rewrapped: total, unopenable: unopenable, pass: pass))
        }
    }

    /// What no master key id is: data keys "not wrapped under" it are all of them.
    static let noMasterKeyID = ""

    /// A data-key version opened with the master key it names and wrapped under the wrapping key, bound
    /// as before. A version of a user's key bound to no record (an earlier release made it) opens under
    /// the unbound context; when `binding`, it is bound to the user's record as the database holds it
    /// now (checked against its tag) and named in the summary, else it moves unbound (and stays refused).
    private func rewrap(dataKey row: StoredDataKey, under wrapping: ServerMasterKey, binding: Bool, users: UserBindings) async throws -> Rewrapped<MasterKeyRewrite<StoredDataKey>> {
        guard let holder = keyring.key(id: row.masterKeyID) else { return .unopenable(row.masterKeyID) }
        let moved = row.masterKeyID != wrapping.keyID
        let unbound = DataKeyRoutes.wrapContext(owner: row.owner, version: row.version, dataKeyID: row.dataKeyID, binding: nil)
        guard let userID = DataKeyRoutes.userNumber(ofOwner: row.owner) else {
            guard moved else { return .unchanged }
            guard var bytes = holder.unwrap(row.wrapped, context: unbound) else { return .unopenable(row.masterKeyID) }
            defer { SecretBytes.wipe(&bytes) }
            return .replacement(MasterKeyRewrite(row: row, replacement: try wrapping.wrap(bytes, context: unbound)), Marks())
        }
        let user = try await users.user(userID)
        // The context under the user's record as it is now, when it can be checked.
        var bound: [UInt8]?
        if case .checked(let record) = user {
            bound = DataKeyRoutes.wrapContext(owner: row.owner, version: row.version, dataKeyID: row.dataKeyID, binding: KeyRecordTag.binding(of: record))
        }
        if let bound {
            if var bytes = holder.unwrap(row.wrapped, context: bound) {
                defer { SecretBytes.wipe(&bytes) }
                guard moved else { return .unchanged }
                return .replacement(MasterKeyRewrite(row: row, replacement: try wrapping.wrap(bytes, context: bound)), Marks())
            }
        }
        guard var bytes = holder.unwrap(row.wrapped, context: unbound) else {
            switch user {
            case .checked: return .unopenable("(bound to another user record)")
            case .refused(let why): return .unopenable(why)
            }
        }
        defer { SecretBytes.wipe(&bytes) }
        if binding, let bound, case .checked(let record) = user {
            let named = "data key \(row.dataKeyID) version \(row.version) of \(Self.describe(record))"
            return .replacement(MasterKeyRewrite(row: row, replacement: try wrapping.wrap(bytes, context: bound)), Marks(fromUntagged: named))
        }
        guard moved else { return .leftUntagged }
        return .replacement(MasterKeyRewrite(row: row, replacement: try wrapping.wrap(bytes, context: unbound)), Marks())
    }

    /// A user as the operator can compare it: number, address and the key that signed it up.
    static func describe(_ user: RegisteredUser) -> String {
        "user \(user.id) (\(user.email.clipped(toUTF8: 254)), signed up by \(user.keyID.clipped(toUTF8: 80)))"
    }

    /// A key record checked against its tag (or, without one, taken as it is when asked to), its secret
    /// wrapped under the wrapping key, and tagged under it.
    private func rewrite(
        record: RegisteredKey, under wrapping: ServerMasterKey, taggingUntagged: Bool, abandoned: Set<String>, users: UserBindings
    ) async throws -> Rewrapped<KeyRecordRewrite> {
        let lost = record.tag.flatMap { try? KeyRecordTag.parts(of: $0, keyID: record.keyID).masterKeyID }.map(abandoned.contains) ?? false
        if let tag = record.tag, !lost {
            do {
                try KeyRecordTag.check(record, keyring: keyring)
            } catch {
                return .unopenable((try? KeyRecordTag.parts(of: tag, keyID: record.keyID).masterKeyID).flatMap { keyring.key(id: $0) == nil ? $0 : nil } ?? "(tag does not match)")
            }
        } else if !taggingUntagged {
            return .leftUntagged
        }
        var secret = record.secret
        var marks = Marks(fromUntagged: record.tag == nil || lost ? record.keyID : nil)
        if let stored = record.secret, !stored.hasPrefix(WrappedSecret.marker(wrapping.keyID)) {
            marks.secret = true
            marks.fromClear = !stored.hasPrefix(WrappedSecret.prefix)
            guard var bytes = try? WrappedSecret.open(stored, keyID: record.keyID, keyring: keyring) else {
                return .unopenable((try? WrappedSecret.masterKeyID(of: stored)) ?? (marks.fromClear ? "(in clear, not base64)" : "(unparsable)"))
            }
            defer { SecretBytes.wipe(&bytes) }
            secret = try WrappedSecret.seal(bytes, keyID: record.keyID, under: wrapping)
        }
        var rewritten = record.replacing(secret: secret)
        // A link an earlier release made, taken as it is: it names the user's record as it is now.
        if marks.fromUntagged != nil, let userID = record.userID, record.userBinding == nil, case .checked(let user) = try await users.user(userID) {
            rewritten = rewritten.linked(toUser: userID, binding: KeyRecordTag.binding(of: user))
            marks.fromUntagged = "\(record.keyID) linked to \(Self.describe(user))"
        }
        let after = KeyRecordTagging(keyring: keyring, key: wrapping).tagged(rewritten)
        return .replacement(KeyRecordRewrite(before: record, after: after), marks)
    }

    /// A user record checked against its tag (or, without one, taken as it is when asked to), and
    /// tagged under the wrapping key.
    private func rewrite(user: RegisteredUser, under wrapping: ServerMasterKey, taggingUntagged: Bool, abandoned: Set<String>) throws -> Rewrapped<UserRecordRewrite> {
        let name = "user \(user.id)"
        let lost = user.tag.flatMap { try? KeyRecordTag.parts(of: $0, name: name).masterKeyID }.map(abandoned.contains) ?? false
        if let tag = user.tag, !lost {
            do {
                try KeyRecordTag.check(user, keyring: keyring)
            } catch {
                return .unopenable((try? KeyRecordTag.parts(of: tag, name: name).masterKeyID).flatMap { keyring.key(id: $0) == nil ? $0 : nil } ?? "(tag does not match)")
            }
        } else if !taggingUntagged {
            return .leftUntagged
        }
        let after = KeyRecordTagging(keyring: keyring, key: wrapping).tagged(user)
        // Named with what the operator can compare: the address and the key that signed it up.
        let named = Self.describe(user)
        return .replacement(UserRecordRewrite(before: user, after: after), Marks(fromUntagged: user.tag == nil || lost ? named : nil))
    }

    /// Fewer rows changed than asked: another run moved them first (fine), or the wrapping key changed
    /// under this run (it stops: its key is no longer the fleet's).
    private func confirm(_ written: Int, of asked: Int, under wrapping: ServerMasterKey) async throws {
        guard written < asked else { return }
        let recorded = try await store.masterKeyring()
        guard recorded.contains(where: { $0.keyID == wrapping.keyID && $0.state == .wrapping }) else {
            let now = recorded.first { $0.state == .wrapping }?.keyID ?? "none"
            throw ServerConfigurationError(
                .masterKeyringMismatch, "the wrapping master key changed from \(wrapping.keyID) to \(now) during the rewrap; run it again with that key",
                hint: "the batches committed so far stay done"
            )
        }
    }
}

extension ServerMasterKeyring {
    /// Retires `keyID` (docs/SERVER.md, "Rotating the master key"): once `rewrap` has left no row under
    /// it and another key wraps, the keyring records it retired, and instances can stop holding it. An
    /// instance that holds only retired keys then refuses to start: it lacks the wrapping key.
    /// - Throws: ``ServerConfigurationError`` `.invalidDatabaseLocation` for a store that cannot retire
    ///   keys; the store's errors.
    public static func retire(_ keyID: String, in store: any RegistrationStore, now: Int64? = nil) async throws -> MasterKeyRetirement {
        guard let store = store as? any MasterKeyRewrapStore else {
            throw ServerConfigurationError(.invalidDatabaseLocation, "this store cannot retire master keys: expected one of Coffer's stores (SQLite or PostgreSQL)")
        }
        return try await store.retireMasterKey(keyID, at: now ?? ServerMasterKeyring.currentTime())
    }
}
