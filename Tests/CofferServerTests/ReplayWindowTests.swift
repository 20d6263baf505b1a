import CofferCrypto
import CofferHTTPSignatures
import CofferServer
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// Replay protection has no edge (issue 20): a request is accepted while `now − created ≤ maxAge +
/// skew` (and `now ≤ expires + skew`), so its replay record must outlive that last instant L. Before the
/// fix the record expired at L itself ("expires_at <= now" counts as unused), so every replay sent
/// during L's second passed. Checked with an injected clock at L − 1, L and L + 1, against the
/// in-memory cache, the SQLite store and (when configured) PostgreSQL.
@Suite("Replay window edges")
struct ReplayWindowTests {
    enum Cache: String, CaseIterable, CustomTestStringConvertible {
        case memory, sqlite, postgres
        var testDescription: String { rawValue }
    }

    static let created: Int64 = 1_800_000_000
    static let body = Array(#"{"email":"ada@example.com","name":"Ada"}"#.utf8)

    /// A fresh replay cache of the kind, and a closing action.
    static func cache(_ kind: Cache, in folder: TemporaryDirectory) async throws -> (any HTTPSignatureReplayCache, @Sendable () async -> Void)? {
        switch kind {
        case .memory:
            return (InMemoryReplayCache(), {})
        case .sqlite:
            let store = try await DatabaseLocation.sqlite(path: folder.path("store.sqlite")).openForTest("test")
            return (store, { try? await store.close() })
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"] else { return nil }
            let store = try await DatabaseLocation(url).openForTest("test")
            return (store, { try? await store.close() })
        }
    }

    /// Signs one request, created at ``created``, with a fresh nonce (so each case has its own record).
    static func signedRequest(_ key: HTTPSigningKey, lifetime: Int64? = nil) throws -> HTTPRequest {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register_user")
        var signer = HTTPMessageSigner(key: key, keyID: "app")
        signer.lifetime = lifetime
        try signer.sign(&request, body: body, now: created)
        return request
    }

    static func outcome(_ verifier: HTTPMessageVerifier, _ request: HTTPRequest, at now: Int64) async -> String {
        do {
            _ = try await verifier.verify(request, body: body, now: now)
            return "accepted"
        } catch {
            return error.code.rawValue
        }
    }

    static let postgresURL = ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_URL"]

    @Test(arguments: [Cache.memory, .sqlite])
    func aReplayIsRefusedUpToTheLastInstantOfTheWindow(kind: Cache) async throws {
        try await Self.replayEdge(kind)
    }

    @Test(arguments: [Cache.memory, .sqlite])
    func anExpiresWindowHasNoEdgeEither(kind: Cache) async throws {
        try await Self.expiresEdge(kind)
    }

    @Test(.enabled(if: postgresURL != nil, "set COFFER_TEST_POSTGRES_URL=postgres://… to run against a real PostgreSQL (.ci/run does)"))
    func postgreSQLHasNoEdgeEither() async throws {
        try await Self.replayEdge(.postgres)
        try await Self.expiresEdge(.postgres)
    }

    /// maxAge 5 s and 30 s of skew: L = created + 35. A first use at L − 1 or L, then the replay at the
    /// same instant or the next ones; after L nothing is accepted at all.
    static func replayEdge(_ kind: Cache) async throws {
        let folder = try TemporaryDirectory()
        let (cache, close) = try #require(try await Self.cache(kind, in: folder))
        let signing = try HTTPSigningKey(SigningKey.generate(.ed25519))
        var policy = HTTPSignaturePolicy()
        policy.maximumAge = 5
        let verifier = HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys(["app": signing.verificationKey]), replayCache: cache)
        let last = Self.created + 5 + policy.clockSkew

        for (first, replays) in [(last - 1, [last - 1, last]), (last, [last])] {
            let request = try Self.signedRequest(signing)
            #expect(await Self.outcome(verifier, request, at: first) == "accepted", "first use at L\(first - last)")
            for replay in replays {
                #expect(await Self.outcome(verifier, request, at: replay) == "replayed", "\(kind): first use at L\(first - last), replay at L\(replay - last)")
            }
            #expect(await Self.outcome(verifier, request, at: last + 1) == "expired")
        }
        #expect(await Self.outcome(verifier, try Self.signedRequest(signing), at: last + 1) == "expired", "never accepted after L")
        await close()
    }

    /// The same edge when `expires` bounds the window (no maximum age): L = expires + skew.
    static func expiresEdge(_ kind: Cache) async throws {
        let folder = try TemporaryDirectory()
        let (cache, close) = try #require(try await Self.cache(kind, in: folder))
        let signing = try HTTPSigningKey(SigningKey.generate(.ed25519))
        var policy = HTTPSignaturePolicy()
        policy.maximumAge = nil
        let verifier = HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys(["app": signing.verificationKey]), replayCache: cache)
        let request = try Self.signedRequest(signing, lifetime: 60)
        let last = Self.created + 60 + policy.clockSkew
        #expect(await Self.outcome(verifier, request, at: last) == "accepted")
        #expect(await Self.outcome(verifier, request, at: last) == "replayed")
        #expect(await Self.outcome(verifier, request, at: last + 1) == "expired")
        await close()
    }

    /// A signature whose acceptance never ends (no `created` with a maximum age, no `expires`) could be
    /// replayed as soon as any record of it expired: with a replay cache it is refused.
    @Test func aSignatureWithoutAnEndIsRefusedWhenReplaysAreChecked() async throws {
        let signing = try HTTPSigningKey(SigningKey.generate(.ed25519))
        var policy = HTTPSignaturePolicy()
        policy.maximumAge = nil
        let verifier = HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys(["app": signing.verificationKey]))
        let request = try Self.signedRequest(signing)
        #expect(await Self.outcome(verifier, request, at: Self.created) == "component-not-covered")
        let unprotected = HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys(["app": signing.verificationKey]), replayCache: nil)
        #expect(await Self.outcome(unprotected, request, at: Self.created + 86_400) == "accepted", "replay protection off: the caller's choice")
    }
}
