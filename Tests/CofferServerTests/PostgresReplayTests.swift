import CofferCore
import CofferCrypto
import CofferServer
import Foundation
import Testing

/// The replay record's first-use test on PostgreSQL is a prepared statement (issue 45): prepared once on
/// each pooled connection, then bound and executed. Copies of one signature reaching two instances at
/// once, on many connections, must still be accepted exactly once.
@Suite("PostgreSQL's replay records, prepared")
struct PostgresReplayTests {
    static let postgresURL = ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"]

    @Test(.enabled(if: postgresURL != nil, "set COFFER_TEST_POSTGRES_URL=postgres://… to run against a real PostgreSQL (.ci/run does)"))
    func copiesOnTwoInstancesAreAcceptedOnce() async throws {
        let first = try await DatabaseLocation(Self.postgresURL).openForTest("test")
        let second = try await DatabaseLocation(Self.postgresURL).openForTest("test")
        let now: Int64 = 1_800_000_000
        // Fresh identities per run: PostgreSQL's tables outlive the test.
        let identities = try (0..<24).map { _ in "80000000" + Hex.encode(try SecureRandom.bytes(count: 8)) + Hex.encode(try SecureRandom.bytes(count: 32)) }
        let accepted = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for identity in identities {
                for copy in 0..<6 {
                    let store = copy.isMultiple(of: 2) ? first : second
                    group.addTask { (identity, try await store.recordFirstUse(of: identity, expiringAt: now + 300, now: now)) }
                }
            }
            return try await group.reduce(into: [String: Int]()) { counts, outcome in
                counts[outcome.0, default: 0] += outcome.1 ? 1 : 0
            }
        }
        #expect(accepted.count == identities.count)
        #expect(accepted.values.allSatisfy { $0 == 1 }, "\(accepted.filter { $0.value != 1 })")
        // Each is a replay afterwards at either instance, and a new identity is not.
        for identity in identities.prefix(4) {
            #expect(try await !first.recordFirstUse(of: identity, expiringAt: now + 300, now: now + 1))
            #expect(try await !second.recordFirstUse(of: identity, expiringAt: now + 300, now: now + 1))
        }
        let fresh = "80000000" + Hex.encode(try SecureRandom.bytes(count: 40))
        #expect(try await second.recordFirstUse(of: fresh, expiringAt: now + 300, now: now + 1))
        try await first.close()
        try await second.close()
    }
}
