import CofferCore
import Foundation

/// The master keys one instance holds, by id (docs/SERVER.md, "The master keyring"). Holding a key is
/// not enough to write with it: new rows are wrapped under the one key the database records as
/// wrapping, which every instance of the fleet must hold; the others open rows written before a
/// rotation until `rewrap` has moved them.
public struct ServerMasterKeyring: Sendable {
    /// The keys, each id once, in the order given. The first is the one this instance records on a
    /// database that records none (a new fleet), and the one it starts a new keyring with.
    public let keys: [ServerMasterKey]

    /// A keyring of `keys` (the same key given twice counts once).
    /// - Throws: ``ServerConfigurationError`` `.invalidMasterKey` for no key at all.
    public init(_ keys: [ServerMasterKey]) throws(ServerConfigurationError) {
        var seen = Set<String>()
        let unique = keys.filter { seen.insert($0.keyID).inserted }
        guard !unique.isEmpty else { throw ServerConfigurationError(.invalidMasterKey, "a master keyring needs a key; found none") }
        self.keys = unique
    }

    /// The time a keyring change records, UNIX seconds.
    static func currentTime() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// A keyring of one key.
    init(holding key: ServerMasterKey) {
        keys = [key]
    }

    /// The ids of the keys held, in order.
    public var keyIDs: [String] { keys.map(\.keyID) }

    /// The key held under `id`, nil when this keyring lacks it.
    public func key(id: String) -> ServerMasterKey? { keys.first { $0.keyID == id } }
}

/// One master key id as the database records it, with what the fleet does with it.
public struct MasterKeyRecord: Sendable, Hashable {
    /// What the fleet does with a recorded master key.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// New rows are wrapped under it. Exactly one key is in this state once a keyed instance has
        /// started; an instance that lacks it refuses to start and to write.
        case wrapping
        /// It wrapped rows before a newer key was promoted: rows may still be wrapped under it until
        /// `rewrap` moves them.
        case previous
        /// No row is wrapped under it any more: instances may drop it.
        case retired
        /// Given up when an instance started a new keyring without it: rows still wrapped under it
        /// never open again.
        case abandoned
    }

    /// The key's id (``ServerMasterKey/keyID``).
    public let keyID: String
    /// What the fleet does with it.
    public let state: State
    /// When it entered that state, UNIX seconds.
    public let changedAt: Int64

    /// A record.
    /// - Parameters:
    ///   - keyID: the master key's id.
    ///   - state: what the fleet does with it.
    ///   - changedAt: when it entered that state, UNIX seconds.
    public init(keyID: String, state: State, changedAt: Int64) {
        self.keyID = keyID
        self.state = state
        self.changedAt = changedAt
    }

    /// The state a stored value names.
    /// - Throws: ``ServerConfigurationError`` `.invalidRecord` for a value this release does not know
    ///   (a refusal: an instance never acts on a keyring it cannot read).
    static func state(_ text: String, of keyID: String) throws(ServerConfigurationError) -> State {
        guard let state = State(rawValue: text) else {
            let known = State.allCases.map(\.rawValue).joined(separator: ", ")
            throw ServerConfigurationError(.invalidRecord, "the master keyring records '\(keyID.clipped(toUTF8: 40))' as '\(text.clipped(toUTF8: 40))'; expected one of \(known)")
        }
        return state
    }
}

/// How many stored rows each master key wraps: what `rewrap` has left to do, and whether a key can be
/// retired.
public struct MasterKeyUsage: Sendable, Hashable {
    /// The rows one master key wraps.
    public struct Rows: Sendable, Hashable {
        /// Data-key versions wrapped under it.
        public var dataKeys: Int
        /// HMAC secrets wrapped under it.
        public var secrets: Int
        /// Key records tagged under it.
        public var records: Int
        /// When the newest of its data keys was made, UNIX seconds; nil for none.
        public var newestDataKeyAt: Int64?

        /// A count.
        /// - Parameters:
        ///   - dataKeys: data-key versions wrapped under the key.
        ///   - secrets: HMAC secrets wrapped under it.
        ///   - newestDataKeyAt: when its newest data key was made.
        ///   - records: key records tagged under it.
        public init(dataKeys: Int = 0, secrets: Int = 0, newestDataKeyAt: Int64? = nil, records: Int = 0) {
            self.dataKeys = dataKeys
            self.secrets = secrets
            self.records = records
            self.newestDataKeyAt = newestDataKeyAt
        }
    }

    /// Rows by the id of the master key they are wrapped under.
    public var rows: [String: Rows]
    /// HMAC secrets stored in clear (by earlier releases, or by instances without a master key).
    public var secretsInClear: Int
    /// Key records without a tag (written by earlier releases, or by instances without a master key).
    public var untaggedRecords: Int

    /// A count.
    /// - Parameters:
    ///   - rows: rows by master key id.
    ///   - secretsInClear: HMAC secrets stored in clear.
    ///   - untaggedRecords: key records without a tag.
    public init(rows: [String: Rows] = [:], secretsInClear: Int = 0, untaggedRecords: Int = 0) {
        self.rows = rows
        self.secretsInClear = secretsInClear
        self.untaggedRecords = untaggedRecords
    }
}

/// What checking an instance's master keys against its database found (``ServerMasterKeyring/check(_:against:abandoningRecordedKeyring:now:)``).
public struct MasterKeyringCheck: Sendable, Hashable {
    /// The key new rows are wrapped under, which the instance holds; nil when the instance holds no
    /// master key and the database records none.
    public let wrappingKeyID: String?
    /// The keyring as the database records it after the check.
    public let recorded: [MasterKeyRecord]
    /// Whether this check wrote the keyring: recorded a new fleet's first key, adopted the keys of a
    /// database written by an earlier release, or started a new keyring.
    public let changedKeyring: Bool
    /// What the operator should know (a recorded key this instance lacks, a retired key it still
    /// holds, a key not yet promoted), one sentence each, without a secret.
    public let notes: [String]
}

extension ServerMasterKeyring {
    /// Checks the master keys an instance holds against the keyring its database records, before the
    /// instance serves anything, and records the keyring where the database has none:
    ///
    /// - a database that records no keyring and wraps nothing records `keyring`'s first key (a new
    ///   fleet); one written by an earlier release records the keys its rows are wrapped under, the
    ///   newest row's key that `keyring` holds becoming the wrapping key;
    /// - a database that records a keyring needs `keyring` to hold its wrapping key;
    /// - an instance without master keys (`keyring` nil) passes only where no keyring is recorded.
    ///
    /// - Parameters:
    ///   - keyring: the keys the instance holds; nil for none.
    ///   - store: the database.
    ///   - abandoningRecordedKeyring: when `keyring` lacks the recorded keys, start a new keyring with
    ///     its first key instead of refusing: every row wrapped under the recorded keys is then lost
    ///     for good (they are marked abandoned). Only for a fleet whose keys are lost.
    ///   - now: the time recorded with a change (UNIX seconds); nil for now.
    /// - Throws: ``ServerConfigurationError`` `.masterKeyringMismatch` naming the ids the instance holds
    ///   and the ids the database records when `keyring` lacks the wrapping key (or holds none of the
    ///   keys an earlier release's rows are wrapped under); `.masterKeyGivenUp` when a new keyring
    ///   would start with a key the database records retired or abandoned; the store's errors.
    public static func check(
        _ keyring: ServerMasterKeyring?, against store: any RegistrationStore, abandoningRecordedKeyring: Bool = false,
        now: Int64? = nil
    ) async throws -> MasterKeyringCheck {
        let now = now ?? currentTime()
        // Two instances may record at once: the one whose change lands first wins, the other checks
        // again against what it wrote.
        for _ in 0..<3 {
            let recorded = try await store.masterKeyring()
            if let outcome = try await check(keyring, recorded: recorded, store: store, abandoning: abandoningRecordedKeyring, now: now) {
                return outcome
            }
        }
        throw ServerConfigurationError(.masterKeyringMismatch, "the database's master keyring kept changing while this instance checked it; start it again")
    }

    /// One round of ``check(_:against:abandoningRecordedKeyring:now:)``; nil when another writer
    /// changed the keyring between the read and this round's change.
    private static func check(
        _ keyring: ServerMasterKeyring?, recorded: [MasterKeyRecord], store: any RegistrationStore, abandoning: Bool, now: Int64
    ) async throws -> MasterKeyringCheck? {
        guard let wrapping = recorded.first(where: { $0.state == .wrapping })?.keyID else {
            guard let keyring else { return MasterKeyringCheck(wrappingKeyID: nil, recorded: recorded, changedKeyring: false, notes: []) }
            return try await adopt(keyring, recorded: recorded, store: store, abandoning: abandoning, now: now)
        }
        guard let keyring else {
            throw ServerConfigurationError(
                .masterKeyringMismatch,
                "this instance holds no master key; the database wraps data keys and HMAC secrets under \(describe(recorded))",
                hint: "give it the master key whose id is \(wrapping)"
            )
        }
        if keyring.key(id: wrapping) != nil {
            return MasterKeyringCheck(wrappingKeyID: wrapping, recorded: recorded, changedKeyring: false, notes: operatorNotes(keyring, recorded: recorded))
        }
        guard abandoning else { throw mismatch(keyring, recorded: recorded) }
        let newWrapping = keyring.keys[0].keyID
        if let given = recorded.first(where: { $0.keyID == newWrapping && ($0.state == .retired || $0.state == .abandoned) }) {
            throw ServerConfigurationError(
                .masterKeyGivenUp, "cannot start a new master keyring with \(newWrapping): the keyring records it \(given.state.rawValue), and that is final",
                hint: "make a new master key for the new keyring"
            )
        }
        var states: [String: MasterKeyRecord.State] = [:]
        for record in recorded where record.state != .retired {
            states[record.keyID] = keyring.key(id: record.keyID) == nil ? .abandoned : .previous
        }
        return try await change(keyring, wrapping: newWrapping, replacing: wrapping, states: states, store: store, now: now)
    }

    /// Records the keyring of a database that records none.
    private static func adopt(
        _ keyring: ServerMasterKeyring, recorded: [MasterKeyRecord], store: any RegistrationStore, abandoning: Bool, now: Int64
    ) async throws -> MasterKeyringCheck? {
        let usage = try await store.masterKeyUsage().rows
        let held = usage.filter { keyring.key(id: $0.key) != nil }
        var states: [String: MasterKeyRecord.State] = [:]
        let wrapping: String
        if usage.isEmpty {
            wrapping = keyring.keys[0].keyID
        } else if let newest = held.max(by: { ($0.value.newestDataKeyAt ?? 0, $0.key) < ($1.value.newestDataKeyAt ?? 0, $1.key) }) {
            wrapping = newest.key
            for id in usage.keys where id != wrapping { states[id] = .previous }
        } else if abandoning {
            wrapping = keyring.keys[0].keyID
            for id in usage.keys { states[id] = .abandoned }
        } else {
            let found = usage.sorted { $0.key < $1.key }.map { "\($0.key) (\(rowCount($0.value)))" }.joined(separator: ", ")
            throw ServerConfigurationError(
                .masterKeyringMismatch,
                "this instance holds master key\(keyring.keys.count == 1 ? "" : "s") \(keyring.keyIDs.joined(separator: ", ")); the database records no keyring, and its rows are wrapped under \(found)",
                hint: hint(for: usage.keys.sorted())
            )
        }
        return try await change(keyring, wrapping: wrapping, replacing: nil, states: states, store: store, now: now)
    }

    private static func change(
        _ keyring: ServerMasterKeyring, wrapping: String, replacing expected: String?, states: [String: MasterKeyRecord.State], store: any RegistrationStore,
        now: Int64
    ) async throws -> MasterKeyringCheck? {
        guard try await store.changeMasterKeyring(wrapping: wrapping, replacing: expected, setting: states, at: now) else { return nil }
        let recorded = try await store.masterKeyring()
        var notes = operatorNotes(keyring, recorded: recorded)
        let abandoned = states.filter { $0.value == .abandoned }.keys.sorted()
        if !abandoned.isEmpty {
            notes.insert("started a new master keyring with \(wrapping): rows wrapped under \(abandoned.joined(separator: ", ")) can no longer be opened", at: 0)
        }
        return MasterKeyringCheck(wrappingKeyID: wrapping, recorded: recorded, changedKeyring: true, notes: notes)
    }

    /// The keyring's state the operator should know of, for a keyring that holds the wrapping key.
    private static func operatorNotes(_ keyring: ServerMasterKeyring, recorded: [MasterKeyRecord]) -> [String] {
        var notes: [String] = []
        for record in recorded where record.state == .previous && keyring.key(id: record.keyID) == nil {
            notes.append("this instance lacks the previous master key \(record.keyID): rows still wrapped under it answer 503 here until they are rewrapped")
        }
        for record in recorded where record.state == .retired && keyring.key(id: record.keyID) != nil {
            notes.append("the master key \(record.keyID) is retired (no row is wrapped under it): this instance can stop holding it")
        }
        for key in keyring.keys where !recorded.contains(where: { $0.keyID == key.keyID }) {
            notes.append("the master key \(key.keyID) is held but not recorded: it wraps nothing until it is promoted")
        }
        return notes
    }

    /// The refusal of an instance that lacks the recorded wrapping key: the ids on both sides.
    static func mismatch(_ keyring: ServerMasterKeyring, recorded: [MasterKeyRecord]) -> ServerConfigurationError {
        let wrapping = recorded.first { $0.state == .wrapping }?.keyID ?? "none"
        return ServerConfigurationError(
            .masterKeyringMismatch,
            "this instance holds master key\(keyring.keys.count == 1 ? "" : "s") \(keyring.keyIDs.joined(separator: ", ")); the database wraps with \(describe(recorded))",
            hint: hint(for: [wrapping])
        )
    }

    private static func hint(for ids: [String]) -> String {
        "give this instance the master key whose id is \(ids.joined(separator: " or ")); only if that key is lost for good, start a new keyring, which loses every data key and HMAC secret wrapped under the database's keys"
    }

    /// "W (and records P previous, R retired)": the recorded keyring in one phrase.
    static func describe(_ recorded: [MasterKeyRecord]) -> String {
        let wrapping = recorded.first { $0.state == .wrapping }?.keyID ?? "no key"
        let others = recorded.filter { $0.state != .wrapping }.map { "\($0.keyID) \($0.state.rawValue)" }
        return others.isEmpty ? wrapping : "\(wrapping) (and records \(others.joined(separator: ", ")))"
    }

    private static func rowCount(_ rows: MasterKeyUsage.Rows) -> String {
        let total = rows.dataKeys + rows.secrets
        return "\(total) row\(total == 1 ? "" : "s")"
    }
}

extension ServerMasterKeyring {
    /// Makes `keyID`, a key this keyring holds, the one the fleet wraps new rows with; the key that
    /// wrapped until now becomes previous (rows under it still open with it). The operator's step of
    /// a rotation, taken once every instance holds the new key: from then on an instance that lacks
    /// it refuses to write and to start.
    /// - Returns: the keyring as recorded afterwards.
    /// - Throws: ``ServerConfigurationError`` `.masterKeyringMismatch` when this keyring does not hold
    ///   `keyID` or the wrapping key recorded now (the check of
    ///   ``check(_:against:abandoningRecordedKeyring:now:)``) or when another change landed first;
    ///   `.masterKeyGivenUp` when the keyring records `keyID` retired or abandoned (final: a key given
    ///   up never wraps again).
    public func promote(_ keyID: String, in store: any RegistrationStore, now: Int64? = nil) async throws -> [MasterKeyRecord] {
        guard key(id: keyID) != nil else {
            throw ServerConfigurationError(
                .masterKeyringMismatch, "cannot promote \(keyID.clipped(toUTF8: 40)): it is not one of the keys given (\(keyIDs.joined(separator: ", ")))",
                hint: "give the new master key too, so that its id is proven"
            )
        }
        let now = now ?? Self.currentTime()
        let check = try await Self.check(self, against: store, now: now)
        if let recorded = check.recorded.first(where: { $0.keyID == keyID }), recorded.state == .retired || recorded.state == .abandoned {
            throw ServerConfigurationError(
                .masterKeyGivenUp, "cannot promote \(keyID): the keyring records it \(recorded.state.rawValue), and that is final",
                hint: "make a new master key and promote that one"
            )
        }
        guard let current = check.wrappingKeyID, current != keyID else { return check.recorded }
        guard try await store.changeMasterKeyring(wrapping: keyID, replacing: current, setting: [current: .previous], at: now) else {
            throw ServerConfigurationError(.masterKeyringMismatch, "the database's master keyring changed while promoting \(keyID); check it and run again")
        }
        return try await store.masterKeyring()
    }
}
