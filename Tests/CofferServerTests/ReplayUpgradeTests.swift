import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import CofferServer
import CofferTestSupport
import CofferTesting
import Foundation
import Logging
import Testing

/// Coffer 1.0.0 stored a signature's replay record under its digest alone; this version puts the
/// signature's anchor first (docs/HTTP-SIGNATURES.md, "Replay protection"). A request accepted just
/// before an upgrade must still be a replay after it: the database stores look for a live record of
/// either form, in the same atomic step as the insert, for both of their replay writes.
@Suite("Replay records across the 1.0.0 upgrade")
struct ReplayUpgradeTests {
    static let postgresURL = ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"]

    @Test func sqliteFindsRecordsOfTheEarlierForm() async throws {
        let folder = try TemporaryDirectory()
        let store = try await DatabaseLocation.sqlite(path: folder.path("store.sqlite")).openForTest("test")
        try await Self.check(store)
        try await store.close()
    }

    @Test(.enabled(if: postgresURL != nil, "set COFFER_TEST_POSTGRES_URL=postgres://… to run against a real PostgreSQL (.ci/run does)"))
    func postgreSQLFindsRecordsOfTheEarlierForm() async throws {
        let store = try await DatabaseLocation(Self.postgresURL).openForTest("test")
        try await Self.check(store)
        try await store.close()
    }

    static func check(_ store: any RegistrationStore) async throws {
        let now: Int64 = 1_800_000_000
        let keyID = "k_upgrade_" + Hex.encode(try SecureRandom.bytes(count: 8))
        _ = try await store.registerKey(RegisteredKey(keyID: keyID, algorithm: .hmacSHA256, publicKey: nil, secret: "AAAA", createdAt: now), spending: nil)
        // A fresh digest per run: PostgreSQL's tables outlive the test.
        let digest = Hex.encode(try SecureRandom.bytes(count: 32))
        let identifier = "800000006b49d1f0" + digest
        #expect(HTTPReplayRecord.earlierIdentifier(of: identifier) == digest)

        // Coffer 1.0.0 accepted the request and wrote its record (the digest alone).
        #expect(try await store.recordFirstUse(of: digest, expiringAt: now + 100, now: now))
        // After the upgrade, the same request is a replay, through either write.
        let email = "upgrade-\(digest.prefix(12))@example.com"
        let replayed = try await store.insertUser(
            email: email, name: "Ada", keyID: keyID, createdAt: now, recordingFirstUse: HTTPReplayRecord(identifier: identifier, expiry: now + 100, now: now + 10)
        )
        #expect(replayed == .replayed)
        #expect(try await !store.recordFirstUse(of: identifier, expiringAt: now + 100, now: now + 10))

        // Once the earlier record has expired, the identifier is new: accepted once, then a replay.
        let accepted = try await store.insertUser(
            email: email, name: "Ada", keyID: keyID, createdAt: now, recordingFirstUse: HTTPReplayRecord(identifier: identifier, expiry: now + 300, now: now + 100)
        )
        guard case .inserted(let user) = accepted else {
            Issue.record("expected the user stored, got \(accepted)")
            return
        }
        #expect(user.email == email, "the replayed write above stored nothing: the address was free")
        #expect(try await !store.recordFirstUse(of: identifier, expiringAt: now + 300, now: now + 200))
        // What the documentation says is not caught: an instance still on 1.0.0 looks for its own form
        // only, so it would take this replay (a mixed fleet during a rolling upgrade).
        #expect(try await store.recordFirstUse(of: digest, expiringAt: now + 300, now: now + 200))

        // An expired record of the same identifier is renewed, and live again.
        #expect(try await store.recordFirstUse(of: identifier, expiringAt: now + 900, now: now + 300))
        #expect(try await !store.recordFirstUse(of: identifier, expiringAt: now + 900, now: now + 899))
    }
}
