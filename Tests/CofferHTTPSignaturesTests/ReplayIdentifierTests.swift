import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import HTTPTypes
import Testing

/// The replay record's identifier, as docs/HTTP-SIGNATURES.md ("Replay protection") specifies it: the
/// signature's anchor (`created`, or `expires`) in 16 order-preserving hex digits, then the SHA-256 of
/// `keyid ‖ 0 ‖ "nonce:" nonce` (or `"base:" base`). The digits below were computed apart from Coffer
/// (Python's hashlib), and are the ones the specification prints.
@Suite("Replay identifiers")
struct ReplayIdentifierTests {
    /// Remembers the identifiers it is asked to record.
    actor RecordingCache: HTTPSignatureReplayCache {
        var identifiers: [String] = []
        var expiries: [Int64] = []
        func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) -> Bool {
            identifiers.append(identifier)
            expiries.append(expiry)
            return true
        }
    }

    static let secret: MACKey = {
        do { return try MACKey.generate() } catch { preconditionFailure("no random key: \(error)") }
    }()

    /// A request signed with exactly these parameters (the signer would pick a random nonce).
    static func request(_ parameters: HTTPSignatureParameters) throws -> HTTPRequest {
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/items")
        let components: [HTTPSignatureComponent] = [.method, .targetURI]
        let base = try HTTPSignatureBase.make(for: request, covering: components, parameters: parameters)
        let signature = try HTTPSigningKey.hmacSHA256(secret: secret).signature(for: base)
        request.headerFields[.signatureInput] = "sig1=" + (try HTTPSignatureBase.signatureParams(components, parameters))
        request.headerFields[.signature] = "sig1=:" + Base64.encode(signature) + ":"
        return request
    }

    static func identifier(of parameters: HTTPSignatureParameters, policy: HTTPSignaturePolicy = HTTPSignaturePolicy(), now: Int64) async throws -> (String, Int64) {
        let cache = RecordingCache()
        let verifier = HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys(["test-key": .hmacSHA256(secret: secret)]), replayCache: cache)
        _ = try await verifier.verify(try request(parameters), body: nil, now: now)
        let identifiers = await cache.identifiers
        let expiries = await cache.expiries
        try #require(identifiers.count == 1)
        return (identifiers[0], expiries[0])
    }

    @Test func replayIdentitiesFollowTheSpecification() async throws {
        let (withNonce, _) = try await Self.identifier(
            of: HTTPSignatureParameters(created: 1_700_000_000, nonce: "n-1", algorithm: "hmac-sha256", keyID: "test-key"), now: 1_700_000_010
        )
        #expect(withNonce == "800000006553f100" + "a506e3856d15317e92c8c6358626d41f15e1db4bf68042698ead30d6ba643179")
        #expect(HTTPReplayRecord.earlierIdentifier(of: withNonce) == "a506e3856d15317e92c8c6358626d41f15e1db4bf68042698ead30d6ba643179")

        // No created: the anchor is expires (the policy must not require created then).
        var policy = HTTPSignaturePolicy()
        policy.requiresCreated = false
        let (expiresOnly, expiry) = try await Self.identifier(
            of: HTTPSignatureParameters(expires: 1_700_000_300, nonce: "n-1", algorithm: "hmac-sha256", keyID: "test-key"), policy: policy, now: 1_700_000_010
        )
        #expect(expiresOnly.hasPrefix("800000006553f22c"))
        #expect(expiresOnly.dropFirst(16) == withNonce.dropFirst(16), "the digest does not depend on the anchor")
        #expect(expiry == 1_700_000_300 + policy.clockSkew + 1)
    }

    @Test func theAnchorDoesNotDependOnThePolicy() async throws {
        let parameters = HTTPSignatureParameters(created: 1_700_000_000, nonce: "n-2", algorithm: "hmac-sha256", keyID: "test-key")
        var lenient = HTTPSignaturePolicy()
        lenient.maximumAge = 3_600
        let (strict, strictExpiry) = try await Self.identifier(of: parameters, now: 1_700_000_010)
        let (relaxed, relaxedExpiry) = try await Self.identifier(of: parameters, policy: lenient, now: 1_700_000_010)
        #expect(strict == relaxed, "two instances with different policies must see one identity")
        #expect(strictExpiry < relaxedExpiry)
    }

    @Test func identifiersSortAsTheirAnchors() async throws {
        var policy = HTTPSignaturePolicy()
        policy.maximumAge = nil
        policy.requiresCreated = false
        var identifiers: [String] = []
        // created -5 (expires bounds it), 0, 9, 10, 1.7e9, and a last one near Int64's end.
        for created: Int64 in [-5, 0, 9, 10, 1_700_000_000, 999_999_999_999_999] {
            let parameters = HTTPSignatureParameters(created: created, expires: 999_999_999_999_999, nonce: "n-\(created)", algorithm: "hmac-sha256", keyID: "test-key")
            identifiers.append(try await Self.identifier(of: parameters, policy: policy, now: 999_999_999_999_999).0)
        }
        #expect(identifiers[0].hasPrefix("7ffffffffffffffb"))
        #expect(identifiers[1].hasPrefix("8000000000000000"))
        #expect(identifiers == identifiers.sorted(), "byte order (a database's text order) is anchor order")
        #expect(identifiers.allSatisfy { $0.utf8.count == 80 })
    }

    @Test func onlyThisVersionsIdentifiersHaveAnEarlierForm() {
        let digest = String(repeating: "ab", count: 32)
        #expect(HTTPReplayRecord.earlierIdentifier(of: "8000000000000000" + digest) == digest)
        #expect(HTTPReplayRecord.earlierIdentifier(of: digest) == nil, "a 1.0.0 identifier")
        #expect(HTTPReplayRecord.earlierIdentifier(of: "8000000000000000" + digest.uppercased()) == nil)
        #expect(HTTPReplayRecord.earlierIdentifier(of: "800000000000000g" + digest) == nil)
        #expect(HTTPReplayRecord.earlierIdentifier(of: "") == nil)
        #expect(HTTPReplayRecord.earlierIdentifier(of: String(repeating: "é", count: 40)) == nil)
    }
}
