import AsyncHTTPClient
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServer
import CofferTestSupport
import CofferTesting
import GRDB
import Logging
import Testing

/// The registration server's writes when the disk under its SQLite database fills up: every request it
/// could not store is answered `503` and leaves nothing behind (it can be sent again once there is
/// room), every `201` it gave is in the database, and it serves again as soon as space comes back.
@Suite("Registration server on a full disk", .enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root"))
struct ServerFaultTests {
    @Test func aFullDiskIs503AndLosesNothing() async throws {
        let disk = try SmallDisk(size: "2m")
        let path = disk.path + "/server.sqlite"
        let store = try await DatabaseLocation.sqlite(path: path).openForTest("test")
        let key = try SigningKey.generate(.ed25519)
        let (accepted, refused) = try await RegistrationServerTests.withServer(store: store) { base in
            let keyID = try #require(try await RegistrationServerTests.register(key, at: base).registration?.keyId)
            let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
            disk.fill()
            // The database may still have room in pages it holds; send until three are refused.
            var accepted: [String] = []
            var refused: [(email: String, request: HTTPClientRequest)] = []
            for index in 0..<500 where refused.count < 3 {
                let email = "user\(index)@example.com"
                let request = try RegistrationServerTests.signedUserRequest(base, signer: signer, email: email)
                let reply = try await RegistrationServerTests.send(request)
                switch reply.status {
                case 201: accepted.append(email)
                case 503: refused.append((email, request))
                default: Issue.record("\(email): \(reply.status) \(reply.text)")
                }
            }
            #expect(refused.count == 3, "a full disk refused no write")
            #expect(try await RegistrationServerTests.send(HTTPClientRequest(url: base + "/health")).status == 200, "reads still work")

            disk.free()
            // The same signed requests, sent again: nothing of them was kept, so they are not replays.
            for (email, request) in refused {
                let reply = try await RegistrationServerTests.send(request)
                #expect(reply.status == 201, "\(email): \(reply.text)")
                accepted.append(email)
            }
            return (accepted, refused.map(\.email))
        }
        try await store.close()
        // What was answered 201 is in the file, once each.
        let queue = try DatabaseQueue(path: path)
        let stored = try await queue.read { try String.fetchAll($0, sql: "SELECT email FROM coffer_users ORDER BY id") }
        #expect(Set(stored) == Set(accepted) && stored.count == accepted.count, "refused then accepted: \(refused)")
        try queue.close()
    }
}
