import CofferHTTPSignatures
import Foundation
import Hummingbird
import Metrics

/// What the registration server counts (swift-metrics; `coffer serve --metrics-port` exposes them for
/// Prometheus on a separate port, docs/SERVER.md "Operations"):
///
/// - `coffer_requests_total{route, status}` — every answer, by route pattern and status;
/// - `coffer_signature_refusals_total{reason}` — refused signatures, by reason (`replayed`, `key-revoked`…),
///   counted by the signature middleware and by `POST /register`'s proof check;
/// - `coffer_rate_limited_total{limit}` — `429` answers (`registration`, `signature-failures`);
/// - `coffer_store_seconds{operation}` — store latency, a timer per operation;
/// - `coffer_data_keys_issued_total{kind}` — data keys handed out (`fetched`, `created`, `rotated`).
///
/// Each counter and timer is made once, on first use, and kept (as Hummingbird's `MetricsMiddleware`
/// keeps its own): a request finds its counter in a dictionary instead of asking the factory for a new
/// one. The labels and dimensions come from the server's own routes and reasons, so the cache is bounded.
final class ServerMetrics: @unchecked Sendable {
    /// What each of the server's metrics counts, for the `# HELP` line a Prometheus exposition gives it.
    static let help: [String: String] = [
        "coffer_requests_total": "Answers given, by route pattern and status.",
        "coffer_request_duration_seconds": "Time from a request's head to its answer, by route pattern.",
        "coffer_signature_refusals_total": "Requests whose signature was refused, by reason.",
        "coffer_rate_limited_total": "Requests answered 429, by limit.",
        "coffer_store_seconds": "Time each database call took, by operation.",
        "coffer_data_keys_issued_total": "Data keys handed out, by kind (fetched, created, rotated).",
        "coffer_database_up": "1 while the database answers, 0 once a call found it down (until one succeeds).",
        "coffer_database_calls_in_flight": "Database calls under way: each holds one of the pooled connections.",
        "coffer_database_connections_max": "The most connections the pool holds to PostgreSQL.",
    ]

    let factory: any MetricsFactory
    private let lock = NSLock()
    private var counters: [MetricKey: Metrics.Counter] = [:]
    private var timers: [MetricKey: Metrics.Timer] = [:]

    /// A metric's label and its one dimension.
    private struct MetricKey: Hashable {
        let label: String
        let dimensions: [String]
    }

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// The counter `label{dimensions}`, made the first time it is asked for.
    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Metrics.Counter {
        let key = MetricKey(label: label, dimensions: dimensions.flatMap { [$0.0, $0.1] })
        return lock.withLock {
            if let counter = counters[key] { return counter }
            let counter = Metrics.Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = counter
            return counter
        }
    }

    func request(route: String, status: Int, duration: Duration) {
        counter("coffer_requests_total", [("route", route), ("status", String(status))]).increment()
        let elapsed = duration.components
        timer("coffer_request_duration_seconds", route: route).recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
    }

    func rateLimited(_ limit: String) {
        counter("coffer_rate_limited_total", [("limit", limit)]).increment()
    }

    func dataKeyIssued(_ kind: String) {
        counter("coffer_data_keys_issued_total", [("kind", kind)]).increment()
    }

    func signatureRefused(_ reason: String) {
        counter("coffer_signature_refusals_total", [("reason", reason)]).increment()
    }

    /// Makes the series a scrape should find from the start, at zero: each route's duration, each
    /// refusal reason, each limit, each kind of data key handed out, and the database's gauges.
    func prepare(routes: [String], maximumConnections: Int) {
        for route in routes { _ = timer("coffer_request_duration_seconds", route: route) }
        for reason in Self.refusalReasons { _ = counter("coffer_signature_refusals_total", [("reason", reason)]) }
        for limit in ["registration", "signature-failures", "data-key-rotations"] { _ = counter("coffer_rate_limited_total", [("limit", limit)]) }
        for kind in ["fetched", "created", "rotated"] { _ = counter("coffer_data_keys_issued_total", [("kind", kind)]) }
        Metrics.Gauge(label: "coffer_database_connections_max", factory: factory).record(maximumConnections)
        callsInFlight.record(0)
    }

    /// The reasons a signature is refused for (``HTTPSignatureError``'s codes, and the server's own).
    static let refusalReasons = [
        "missing-component", "invalid-component", "duplicate-component", "invalid-parameter", "missing-signature", "malformed-signature",
        "unknown-key", "key-revoked", "algorithm-mismatch", "expired", "created-in-future", "replayed", "component-not-covered",
        "tag-mismatch", "digest-mismatch", "bad-signature", "unavailable", "malformed-message", "unsupported-algorithm", "body-too-large",
    ]

    /// `coffer_database_calls_in_flight`: database calls under way.
    var callsInFlight: Metrics.Gauge { Metrics.Gauge(label: "coffer_database_calls_in_flight", factory: factory) }

    /// `coffer_database_up`: 1 while the database answers, 0 while it is found down.
    var databaseUp: Metrics.Gauge { Metrics.Gauge(label: "coffer_database_up", factory: factory) }

    func storeTimer(_ operation: String) -> Metrics.Timer { timer("coffer_store_seconds", ("operation", operation)) }

    /// The timer `label{dimension}`, made the first time it is asked for.
    private func timer(_ label: String, _ dimension: (String, String)) -> Metrics.Timer {
        let key = MetricKey(label: label, dimensions: [dimension.0, dimension.1])
        return lock.withLock {
            if let timer = timers[key] { return timer }
            let timer = Metrics.Timer(label: label, dimensions: [dimension], preferredDisplayUnit: .seconds, factory: factory)
            timers[key] = timer
            return timer
        }
    }

    private func timer(_ label: String, route: String) -> Metrics.Timer { timer(label, ("route", route)) }
}

/// A ``RegistrationStore`` that times each call (`coffer_store_seconds{operation}`) and bounds it
/// through the ``DatabaseGate`` (a call over its bound, or while the database is down, fails as
/// ``StoreFailure``).
final class MeasuredStore: RegistrationStore {
    let store: any RegistrationStore
    let metrics: ServerMetrics
    let gate: DatabaseGate

    init(_ store: any RegistrationStore, metrics: ServerMetrics, gate: DatabaseGate) {
        self.store = store
        self.metrics = metrics
        self.gate = gate
    }

    private func timed<T: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        defer {
            let elapsed = start.duration(to: .now).components
            metrics.storeTimer(operation).recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
        }
        return try await gate.run(body)
    }

    func migrate() async throws { try await store.migrate() }
    func applyMigrations() async throws -> [Int] { try await store.applyMigrations() }
    func registerKey(_ key: RegisteredKey, spending token: TokenUse?) async throws -> KeyRegistration {
        try await timed("register_key") { [store] in try await store.registerKey(key, spending: token) }
    }
    func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64) async throws -> EncryptionKeyChange? {
        try await timed("set_encryption_key") { [store] in try await store.setEncryptionKey(encryptionKey, ofKey: keyID, at: time) }
    }
    func setEncryptionKey(_ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?) async throws -> EncryptionKeyChangeOutcome {
        try await timed("set_encryption_key") { [store] in try await store.setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: limit) }
    }
    func setEncryptionKey(
        _ encryptionKey: String, ofKey keyID: String, at time: Int64, changesPerHour limit: Int?, tagging: KeyRecordTagging?
    ) async throws -> EncryptionKeyChangeOutcome {
        try await timed("set_encryption_key") { [store] in
            try await store.setEncryptionKey(encryptionKey, ofKey: keyID, at: time, changesPerHour: limit, tagging: tagging)
        }
    }
    func users(email: String?, limit: Int) async throws -> [RegisteredUser] { try await timed("users") { [store] in try await store.users(email: email, limit: limit) } }
    func events(ofKey keyID: String, limit: Int) async throws -> [KeyEvent] { try await timed("events") { [store] in try await store.events(ofKey: keyID, limit: limit) } }
    func recentEvents(ofKey keyID: String, kind: KeyEvent.Kind, since time: Int64) async throws -> RecentActivity {
        try await timed("recent_events") { [store] in try await store.recentEvents(ofKey: keyID, kind: kind, since: time) }
    }
    func recentDataKeys(owner: String, since time: Int64) async throws -> RecentActivity {
        try await timed("recent_data_keys") { [store] in try await store.recentDataKeys(owner: owner, since: time) }
    }
    func key(id: String) async throws -> RegisteredKey? { try await timed("key") { [store] in try await store.key(id: id) } }
    func insertUser(email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord) async throws -> UserInsertion {
        try await timed("insert_user") { [store] in try await store.insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay) }
    }
    func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?
    ) async throws -> UserInsertion {
        try await timed("insert_user") { [store] in
            try await store.insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit)
        }
    }
    func insertUser(
        email: String, name: String, keyID: String, createdAt: Int64, recordingFirstUse replay: HTTPReplayRecord?, signUpsPerKey limit: Int?,
        tagging: KeyRecordTagging?
    ) async throws -> UserInsertion {
        try await timed("insert_user") { [store] in
            try await store.insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit, tagging: tagging)
        }
    }
    func user(id: Int64) async throws -> RegisteredUser? { try await timed("user") { [store] in try await store.user(id: id) } }
    func insertUser(email: String, name: String, keyID: String, createdAt: Int64) async throws -> RegisteredUser? {
        try await timed("insert_user") { [store] in try await store.insertUser(email: email, name: name, keyID: keyID, createdAt: createdAt) }
    }
    func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await timed("link_key") { [store] in try await store.linkKey(keyID, toUser: userID, actor: actor, at: time) }
    }
    func linkKey(_ keyID: String, toUser userID: Int64, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try await timed("link_key") { [store] in try await store.linkKey(keyID, toUser: userID, actor: actor, at: time, tagging: tagging) }
    }
    func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64, tagging: KeyRecordTagging?) async throws -> RegisteredKey? {
        try await timed("set_state") { [store] in try await store.setState(state, ofKey: keyID, actor: actor, at: time, tagging: tagging) }
    }
    func keys(after position: KeyListPosition?, limit: Int) async throws -> [RegisteredKey] {
        try await timed("keys") { [store] in try await store.keys(after: position, limit: limit) }
    }
    func users(after id: Int64?, limit: Int) async throws -> [RegisteredUser] {
        try await timed("users") { [store] in try await store.users(after: id, limit: limit) }
    }
    func keys(limit: Int) async throws -> [RegisteredKey] { try await timed("keys") { [store] in try await store.keys(limit: limit) } }
    func setState(_ state: RegisteredKey.State, ofKey keyID: String, actor: String, at time: Int64) async throws -> RegisteredKey? {
        try await timed("set_state") { [store] in try await store.setState(state, ofKey: keyID, actor: actor, at: time) }
    }
    func recordUse(ofKey keyID: String, at time: Int64) async throws { try await timed("record_use") { [store] in try await store.recordUse(ofKey: keyID, at: time) } }
    func insertToken(_ token: RegistrationToken, secretHash: String) async throws {
        try await timed("insert_token") { [store] in try await store.insertToken(token, secretHash: secretHash) }
    }
    func consumeToken(secretHash: String, platform: String?, now: Int64) async throws -> RegistrationToken? {
        try await timed("consume_token") { [store] in try await store.consumeToken(secretHash: secretHash, platform: platform, now: now) }
    }
    func tokens(limit: Int) async throws -> [RegistrationToken] { try await timed("tokens") { [store] in try await store.tokens(limit: limit) } }
    func revokeToken(id tokenID: String) async throws -> Bool { try await timed("revoke_token") { [store] in try await store.revokeToken(id: tokenID) } }
    func dataKey(owner: String, version: Int64?) async throws -> StoredDataKey? {
        try await timed("data_key") { [store] in try await store.dataKey(owner: owner, version: version) }
    }
    func insertDataKey(_ key: StoredDataKey) async throws -> StoredDataKey? { try await timed("insert_data_key") { [store] in try await store.insertDataKey(key) } }
    func masterKeyring() async throws -> [MasterKeyRecord] { try await timed("master_keyring") { [store] in try await store.masterKeyring() } }
    func changeMasterKeyring(wrapping keyID: String, replacing expected: String?, setting states: [String: MasterKeyRecord.State], at time: Int64) async throws -> Bool {
        try await timed("change_master_keyring") { [store] in try await store.changeMasterKeyring(wrapping: keyID, replacing: expected, setting: states, at: time) }
    }
    func masterKeyUsage() async throws -> MasterKeyUsage { try await timed("master_key_usage") { [store] in try await store.masterKeyUsage() } }
    func minimumDataKeyVersion(owner: String) async throws -> Int64 {
        try await timed("minimum_data_key_version") { [store] in try await store.minimumDataKeyVersion(owner: owner) }
    }
    func lookUpDataKey(owner: String, version: Int64?) async throws -> DataKeyLookup {
        try await timed("look_up_data_key") { [store] in try await store.lookUpDataKey(owner: owner, version: version) }
    }
    func setMinimumDataKeyVersion(_ version: Int64, owner: String) async throws {
        try await timed("set_minimum_data_key_version") { [store] in try await store.setMinimumDataKeyVersion(version, owner: owner) }
    }
    func schemaVersion() async throws -> Int { try await timed("schema_version") { [store] in try await store.schemaVersion() } }
    func ping() async throws { try await timed("ping") { [store] in try await store.ping() } }
    func close() async throws { try await store.close() }
    func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool {
        try await timed("record_first_use") { [store] in try await store.recordFirstUse(of: identifier, expiringAt: expiry, now: now) }
    }
}
