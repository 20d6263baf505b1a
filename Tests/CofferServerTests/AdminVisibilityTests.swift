import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import CofferServer
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import Testing

/// Only an admin learns that the admin API exists (issue 42): every request under `/admin/` that is not
/// verified as an admin's is answered exactly as a path the server does not have, byte for byte,
/// whether the server has an admin API or not.
@Suite("The admin API shows itself to admins only")
struct AdminVisibilityTests {
    typealias Server = RegistrationServerTests
    typealias AllowList = AllowListTests

    struct Answer: Equatable, CustomStringConvertible {
        let status: Int
        let contentType: String?
        let body: String
        var description: String { "\(status) \(contentType ?? "-") \(body)" }
    }

    static func answer(_ request: HTTPClientRequest) async throws -> Answer {
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), contentType: response.headers.first(name: "content-type"), body: String(buffer: body))
    }

    static func request(_ method: HTTPMethod, _ url: String, body: String? = nil) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        return request
    }

    /// Open registration, `admin` the admin key, and a failure limit of 3 a minute on a clock held still
    /// (so the limit holds however slowly the test runs).
    static func options(admin: SigningKey) -> RegistrationServer.Options {
        var options = AllowList.options(admin: admin, registration: .open)
        options.signatureFailuresPerMinute = 3
        options.clock.monotonicSeconds = { 0 }
        return options
    }

    @Test func everyoneButAnAdminIsAnsweredAsForAPathThatDoesNotExist() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let admin = try SigningKey.generate(.ed25519)
        let withAdmin = Self.options(admin: admin)
        try await Server.withServer(store: store, options: withAdmin) { base in
            let nowhere = try await Self.answer(Self.request(.GET, base + "/nothing/here"))
            #expect(nowhere.status == 404)

            let device = try SigningKey.generate(.ed25519)
            let deviceID = RegistrationProofTests.registeredKeyID(device)
            #expect(try await RegistrationProofTests.register(device, at: base).status == 201)
            let stranger = try SigningKey.generate(.ed25519)

            var attempts: [(String, HTTPClientRequest)] = [
                ("unsigned GET", Self.request(.GET, base + "/admin/keys")),
                ("unsigned POST", Self.request(.POST, base + "/admin/tokens", body: "{}")),
                ("wrong method", Self.request(.DELETE, base + "/admin/keys")),
                ("unknown admin path", Self.request(.GET, base + "/admin/nothing")),
                ("a registered device's key", try AllowList.signed(.get, base, "/admin/keys", key: device, keyID: deviceID)),
                ("a device's key under an admin's id", try AllowList.signed(.get, base, "/admin/keys", key: stranger, keyID: admin.verifyingKey.fingerprint.keyID)),
                ("an unknown key", try AllowList.signed(.post, base, "/admin/keys/\(deviceID)/revoke", key: stranger, keyID: "k_stranger")),
            ]
            // Past the address's failure limit, too.
            attempts += try (0..<4).map { _ in ("past the failure limit", try AllowList.signed(.get, base, "/admin/tokens", key: stranger, keyID: "k_x")) }
            for (what, request) in attempts {
                let seen = try await Self.answer(request)
                #expect(seen == nowhere, "\(what): \(seen)")
            }
            #expect(try await store.key(id: deviceID)?.state == .active, "the unknown key's revocation did nothing")
        }

        // A server without an admin API answers the same.
        var plain = AllowList.options(admin: admin, registration: .open)
        plain.adminKeys = []
        try await Server.withServer(store: store, options: plain) { base in
            let nowhere = try await Self.answer(Self.request(.GET, base + "/nothing/here"))
            #expect(try await Self.answer(Self.request(.GET, base + "/admin/keys")) == nowhere)
            #expect(try await Self.answer(AllowList.signed(.get, base, "/admin/keys", key: admin, keyID: admin.verifyingKey.fingerprint.keyID)) == nowhere)
        }

        // An admin sees the API (from an address that has not failed).
        try await Server.withServer(store: store, options: withAdmin) { base in
            let listed = try await Self.answer(AllowList.signed(.get, base, "/admin/keys", key: admin, keyID: admin.verifyingKey.fingerprint.keyID))
            #expect(listed.status == 200, "\(listed)")
        }
        try await store.close()
    }

    /// Refused admin requests and unknown paths count the same toward the failure limit: three requests
    /// to `/admin/keys` from one address, then a device's signed request from it, is `429` whether or
    /// not the server has an admin API (without one, the three were unknown paths and counted nothing,
    /// so the device's request passed and told an outsider that no admin key was configured).
    /// Bodies over the admin API's 16 KiB count the same way (a refused admin request answered as an
    /// unknown path; their 413 went uncounted).
    @Test(arguments: ["small", "oversized"])
    func refusedAdminRequestsAndUnknownPathsCountTheSame(bodies: String) async throws {
        var statuses: [Int] = []
        for withAdminAPI in [true, false] {
            let folder = try TemporaryDirectory()
            let store = try await Server.sqliteStore(folder)
            var options = Self.options(admin: try SigningKey.generate(.ed25519))
            if !withAdminAPI { options.adminKeys = [] }
            let configured = options
            let status = try await Server.withServer(store: store, options: configured) { base in
                let device = try SigningKey.generate(.ed25519)
                let deviceID = RegistrationProofTests.registeredKeyID(device)
                #expect(try await RegistrationProofTests.register(device, at: base).status == 201)
                for _ in 0..<3 {
                    let request = bodies == "small"
                        ? Self.request(.GET, base + "/admin/keys")
                        : Self.request(.POST, base + "/admin/tokens", body: #"{"a": ""# + String(repeating: "x", count: 20_000) + #""}"#)
                    #expect(try await Self.answer(request).status == 404)
                }
                let signer = HTTPMessageSigner(key: try HTTPSigningKey(device), keyID: deviceID)
                return try await Server.send(Server.signedUserRequest(base, signer: signer, email: "a\(UUID().uuidString.prefix(8))@example.com")).status
            }
            statuses.append(status)
            try await store.close()
        }
        #expect(statuses == [429, 429])
    }
}
