import AsyncHTTPClient
import CofferCrypto
@testable import CofferHTTPClient
import CofferHTTPSignatures
import CofferTesting
import HTTPTypes
import NIOCore
import Testing

/// Issue 42, item 7: a signed request stays where it was sent. One loopback server redirects to a
/// second; `HTTPClient.execute(signing:)` returns the 3xx, and the second server never receives the
/// request: not its `Signature`, `Signature-Input` or `Content-Digest`, not its body. (Before, the
/// shared client followed up to 20 redirects to any origin, carrying all of them, with a nonce the
/// real server had not seen yet.)
@Suite("Signed requests and redirects")
struct SignedRedirectTests {
    static let statuses = [301, 302, 303, 307, 308]

    static func signer() throws -> HTTPMessageSigner {
        HTTPMessageSigner(key: try HTTPSigningKey(SigningKey.generate(.ed25519)), keyID: "device")
    }

    /// A server answering `redirect` to every request, and the one it points to, answering `200`.
    static func withRedirect(
        _ status: Int, sameOrigin: Bool = false, _ body: (_ redirecting: LoopbackHTTPServer, _ target: LoopbackHTTPServer) async throws -> Void
    ) async throws {
        let target = try await LoopbackHTTPServer { _ in .init(status: 200, body: Array("took it".utf8)) }
        let redirecting = try await LoopbackHTTPServer { request in
            request.target == "/elsewhere" ? .init(status: 200) : .redirect(status, to: sameOrigin ? "/elsewhere" : "http://127.0.0.1:\(target.port)/orders")
        }
        do {
            try await body(redirecting, target)
        } catch {
            try? await redirecting.shutdown()
            try? await target.shutdown()
            throw error
        }
        try await redirecting.shutdown()
        try await target.shutdown()
    }

    @Test(arguments: statuses)
    func theSharedClientReturnsTheRedirectOfASignedPOST(status: Int) async throws {
        try await Self.withRedirect(status) { redirecting, target in
            let request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(redirecting.port)", path: "/orders")
            let response = try await HTTPClient.shared.execute(signing: request, body: Array(#"{"order":"secret"}"#.utf8), with: try Self.signer())
            #expect(Int(response.status.code) == status)
            #expect(target.received.isEmpty, "the other origin received: \(target.received.map { "\($0.method) \($0.fields.map(\.name))" })")
            #expect(redirecting.received.count == 1)
            #expect(redirecting.received.first?.value(of: "signature") != nil)
        }
    }

    @Test(arguments: statuses)
    func theSharedClientReturnsTheRedirectOfASignedGET(status: Int) async throws {
        try await Self.withRedirect(status) { redirecting, target in
            let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(redirecting.port)", path: "/orders")
            let response = try await HTTPClient.shared.execute(signing: request, with: try Self.signer())
            #expect(Int(response.status.code) == status)
            #expect(target.received.isEmpty, "the other origin received: \(target.received.map { "\($0.method) \($0.fields.map(\.name))" })")
        }
    }

    /// A client made with AsyncHTTPClient's default configuration follows redirects too.
    @Test func aClientOfTheDefaultConfigurationReturnsTheRedirect() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration())
        do {
            try await Self.withRedirect(307) { redirecting, target in
                let request = HTTPRequest(method: .put, scheme: "http", authority: "127.0.0.1:\(redirecting.port)", path: "/orders")
                let response = try await client.execute(signing: request, body: Array("{}".utf8), with: try Self.signer())
                #expect(response.status.code == 307)
                #expect(target.received.isEmpty)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// A redirect to the same origin is not followed either: it would need a new signature for its own
    /// target, which is the caller's to make.
    @Test func aSameOriginRedirectIsReturnedToo() async throws {
        try await Self.withRedirect(302, sameOrigin: true) { redirecting, _ in
            let request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(redirecting.port)", path: "/orders")
            let response = try await HTTPClient.shared.execute(signing: request, body: Array("{}".utf8), with: try Self.signer())
            #expect(response.status.code == 302)
            #expect(redirecting.received.map(\.target) == ["/orders"])
        }
    }

    /// `AdminClient` and `DataKeyClient` turn a redirect into a refusal that names where it pointed.
    @Test func theServerClientsReportTheRedirect() async throws {
        try await Self.withRedirect(307) { redirecting, target in
            let admin = try AdminClient(server: "http://127.0.0.1:\(redirecting.port)", key: try SigningKey.generate(.ed25519))
            let refused = await #expect(throws: ServerClientError.refused) { try await admin.keys() }
            #expect(refused?.status == 307, "\(String(describing: refused))")
            #expect(refused?.reason.contains("http://127.0.0.1:\(target.port)/orders") == true, "\(String(describing: refused?.reason))")
            #expect(target.received.isEmpty)
        }
    }

    /// The reading of a client's redirect setting holds for the AsyncHTTPClient in use: a client that
    /// does not follow redirects sends signed requests itself; one that does (the shared one, the
    /// default configuration) sends them through one redirect-free twin.
    @Test func redirectFreeClientsAreUsedAsTheyAreAndOthersGetATwin() async throws {
        #expect(SignedRequestClients.followsRedirects(.singletonConfiguration))
        #expect(SignedRequestClients.followsRedirects(HTTPClient.Configuration()))
        var disallowing = HTTPClient.Configuration()
        disallowing.redirectConfiguration = .disallow
        #expect(!SignedRequestClients.followsRedirects(disallowing))

        let own = HTTPClient(eventLoopGroupProvider: .singleton, configuration: disallowing)
        #expect(try SignedRequestClients.shared.client(sending: own) === own)
        let twin = try SignedRequestClients.shared.client(sending: .shared)
        #expect(twin !== HTTPClient.shared)
        #expect(try SignedRequestClients.shared.client(sending: .shared) === twin, "one twin per client")
        try await own.shutdown()
    }
}
