import CofferServer
import CofferTestSupport
import CofferTesting
import Logging
import Testing

/// The SQLite store's group commit under concurrent writers: every answer exact, failures kept to
/// the job that failed.
@Suite("SQLite store")
struct SQLiteStoreTests {
    @Test func concurrentReplayRecordsAreEachAcceptedExactlyOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try await DatabaseLocation.sqlite(path: directory.path("store.sqlite")).openForTest("test")
        let identifiers = (0..<200).map { "id-\($0)" }
        let firstUses = try await withThrowingTaskGroup(of: Bool.self) { group in
            for identifier in identifiers + identifiers + identifiers {
                group.addTask { try await store.recordFirstUse(of: identifier, expiringAt: 2_000, now: 1_000) }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(firstUses == identifiers.count)
        // Expired records may be used again; live ones may not.
        #expect(try await store.recordFirstUse(of: "id-0", expiringAt: 4_000, now: 3_000))
        #expect(try await !store.recordFirstUse(of: "id-1", expiringAt: 2_500, now: 1_500))
        try await store.close()
    }

    @Test func aFailingWriteFailsAloneInItsBatch() async throws {
        let directory = try TemporaryDirectory()
        let store = try await DatabaseLocation.sqlite(path: directory.path("store.sqlite")).openForTest("test")
        _ = try await store.registerKey(RegisteredKey(keyID: "k1", algorithm: .hmacSHA256, publicKey: nil, secret: "AAAA", createdAt: 1), spending: nil)
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<100 {
                group.addTask {
                    // Every tenth names a key that does not exist: the foreign key refuses it.
                    let keyID = index % 10 == 0 ? "missing" : "k1"
                    let user = try? await store.insertUser(email: "u\(index)@example.com", name: "U", keyID: keyID, createdAt: 1)
                    return (index, user != nil)
                }
            }
            return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
        for (index, inserted) in outcomes {
            #expect(inserted == (index % 10 != 0), "user \(index)")
        }
        #expect(try await store.insertUser(email: "u1@example.com", name: "U", keyID: "k1", createdAt: 1) == nil)
        try await store.close()
    }
}
