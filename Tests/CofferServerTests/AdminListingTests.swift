import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
@testable import CofferServer
import CofferServerWire
import CofferTestSupport
import CofferTesting
import Foundation
import Logging
import Testing

/// The admin API's key and user listings come a page at a time, each page bounded in records and in
/// bytes (a user listing of 10,000 users with the largest names allowed was 640 MB built per call): the
/// pages follow one another by `next` and `after`, hold every record once and in order, and the client
/// reads them all.
@Suite(.serialized)
struct AdminListingTests {
    typealias Server = RegistrationServerTests
    typealias AllowList = AllowListTests

    @Test(arguments: KeyRecordTagTests.Backend.allCases)
    func listingsComeInPagesBoundedInBytes(backend: KeyRecordTagTests.Backend) async throws {
        try await KeyRecordTagTests.withDatabase(backend) { location, tamper in
            let store = try await location.openForTest()
            let admin = try SigningKey.generate(.ed25519)
            var keyIDs: [String] = []
            for index in 0..<7 {
                let key = try SigningKey.generate(.ed25519)
                let keyID = RegistrationProofTests.registeredKeyID(key)
                // Two share a creation time: the page's position is the time and the id.
                let record = RegisteredKey(keyID: keyID, algorithm: .ed25519, publicKey: Base64.encode(key.verifyingKey.derRepresentation), secret: nil, createdAt: Int64(index / 2))
                _ = try await store.registerKey(record, spending: nil)
                keyIDs.append(keyID)
            }
            let name = String(repeating: "n", count: 700)
            for index in 0..<11 {
                _ = try await store.insertUser(email: "u\(index)@example.com", name: name, keyID: keyIDs[0], createdAt: Int64(index))
            }
            var options = AllowList.options(admin: admin)
            options.adminPage = (records: 4, bytes: 3_000)
            try await Server.withServer(store: store, options: options) { base in
                // Users: about 780 bytes each, so three to a page of 3,000 bytes.
                var seen: [Int64] = []
                var after: String?
                var pages = 0
                repeat {
                    let reply = try await AllowList.admin(.get, base, "/admin/users" + (after.map { "?after=\($0)" } ?? ""), as: admin)
                    #expect(reply.status == 200 && reply.text.utf8.count <= 3_200, "\(reply.status) \(reply.text.utf8.count) bytes")
                    let page = try reply.decoded(AdminUserList.self)
                    #expect(page.users.count <= 3)
                    seen += page.users.map(\.id)
                    after = page.next
                    pages += 1
                } while after != nil && pages < 20
                #expect(seen == (try await store.users(email: nil, limit: 100)).map(\.id) && pages == 4, "\(seen) in \(pages) pages")

                let client = try AdminClient(server: base, key: admin)
                #expect(try await client.users().map(\.id) == seen)
                #expect(try await client.users(email: "U3@example.com").map(\.email) == ["u3@example.com"])
                // Keys: four to a page by count.
                #expect(try await client.keys().map(\.keyId) == (try await store.keys(limit: 100)).map(\.keyID))
                let first = try await AllowList.admin(.get, base, "/admin/keys", as: admin).decoded(AdminKeyList.self)
                #expect(first.keys.count == 4 && first.next != nil)

                for bad in [
                    "/admin/users?after=x", "/admin/users?after=%2B1", "/admin/users?after=-1", "/admin/users?email=a%00@example.com",
                    "/admin/keys?after=nodot", "/admin/keys?after=1.", "/admin/keys?after=1.k%00x", "/admin/keys?after=1.k%20x", "/admin/keys?after=.k_1",
                ] {
                    let refused = try await AllowList.admin(.get, base, bad, as: admin)
                    #expect(refused.status == 400 && refused.problem?.reason == "invalid-request", "\(bad): \(refused.text)")
                }

                // A record larger than a page, which only a database writer can store, builds no page.
                try await tamper("UPDATE coffer_users SET name = '\(String(repeating: "x", count: 5_000))' WHERE id = (SELECT MAX(id) FROM coffer_users)")
                let tooLarge = try await AllowList.admin(.get, base, "/admin/users?after=\(seen[seen.count - 2])", as: admin)
                #expect(tooLarge.status == 503, "\(tooLarge.status) \(tooLarge.text.utf8.count) bytes")
            }
            try await store.close()
        }
    }
}
