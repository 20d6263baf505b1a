// The signed request the in-process verification benchmarks share (CofferBenchmarks' signed-request
// benchmarks and verify-cost): the one bench/wrk/register_user.lua sends.
import CofferCrypto
public import CofferHTTPSignatures
public import HTTPTypes

/// A replay cache that remembers nothing and accepts everything: the verifier still makes each
/// signature's replay record and awaits the cache, so its own share of replay protection is measured
/// without a store's.
public struct AcceptingReplayCache: HTTPSignatureReplayCache {
    public init() {}
    public func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool { true }
}

/// POST /register_user with a JSON body, signed with HMAC-SHA256 over @method, @target-uri,
/// content-digest and content-type, with created, nonce, alg and keyid; and the keys that verify it.
public struct SignedRegisterUser: Sendable {
    public let request: HTTPRequest
    public let body: [UInt8]
    /// The signature's `created`: verify with it as `now`.
    public let created: Int64 = 1_790_000_000
    public let keys: HTTPStaticKeys
    public let key: HTTPVerificationKey

    public init() throws {
        let secret = try MACKey.generate()
        let keyID = "4Vh0mJc6Pq1pQy3o8F2sXw"
        body = Array(#"{"email": "user-run-1-1@example.com", "name": "Ada Lovelace"}"#.utf8)
        var request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:8080", path: "/register_user")
        request.headerFields[.contentType] = "application/json"
        var signer = HTTPMessageSigner(key: .hmacSHA256(secret: secret), keyID: keyID)
        signer.components = [.method, .targetURI, .field("content-digest"), .field("content-type")]
        _ = try signer.sign(&request, body: body, now: created)
        self.request = request
        key = .hmacSHA256(secret: secret)
        keys = HTTPStaticKeys([keyID: key])
    }
}
