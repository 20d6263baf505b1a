import Benchmark
import CofferCrypto
import CofferHTTPSignatures
import Foundation
import HTTPTypes

/// A replay cache that remembers nothing and accepts everything: the verifier still computes each
/// signature's replay record and awaits the cache, so its own share of replay protection is measured
/// without a store's.
struct AcceptingReplayCache: HTTPSignatureReplayCache {
    func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool { true }
}

/// The request bench/wrk/register_user.lua sends: POST /register_user with a JSON body, signed with
/// HMAC-SHA256 over @method, @target-uri, content-digest and content-type, with created, nonce, alg
/// and keyid.
func signedRegisterUserRequest(key: MACKey, keyID: String, created: Int64) throws -> (HTTPRequest, [UInt8]) {
    let body = Array(#"{"email": "user-run-1-1@example.com", "name": "Ada Lovelace"}"#.utf8)
    var request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:8080", path: "/register_user")
    request.headerFields[.contentType] = "application/json"
    var signer = HTTPMessageSigner(key: .hmacSHA256(secret: key), keyID: keyID)
    signer.components = [.method, .targetURI, .field("content-digest"), .field("content-type")]
    _ = try signer.sign(&request, body: body, now: created)
    return (request, body)
}

func signedRequestBenchmarks() {
    guard let key = try? MACKey.generate() else { return }
    let keyID = "4Vh0mJc6Pq1pQy3o8F2sXw"
    let created: Int64 = 1_790_000_000
    guard let (request, body) = try? signedRegisterUserRequest(key: key, keyID: keyID, created: created) else { return }
    let keys = HTTPStaticKeys([keyID: .hmacSHA256(secret: key)])
    let bare = HTTPMessageVerifier(keys: keys, replayCache: nil)
    let replaying = HTTPMessageVerifier(keys: keys, replayCache: AcceptingReplayCache())

    Benchmark("RFC 9421 verify HMAC-SHA256 POST /register_user, no replay cache") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? await bare.verify(request, body: body, now: created))
        }
    }
    Benchmark("RFC 9421 verify HMAC-SHA256 POST /register_user, replay record to a cache that accepts") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? await replaying.verify(request, body: body, now: created))
        }
    }
    Benchmark("RFC 9421 parse Signature-Input and Signature") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? HTTPSignatureFields.signatures(in: request.headerFields))
        }
    }
    guard let digest = request.headerFields[.contentDigest] else { return }
    Benchmark("Content-Digest check sha-256, 62 B body") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? ContentDigest.check(digest, body: body))
        }
    }
    guard let signature = try? HTTPSignatureFields.signatures(in: request.headerFields).first else { return }
    Benchmark("RFC 9421 signature base of POST /register_user") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? HTTPSignatureBase.make(for: request, covering: signature.components, parameters: signature.parameters))
        }
    }
    let verificationKey = HTTPVerificationKey.hmacSHA256(secret: key)
    guard let base = try? HTTPSignatureBase.make(for: request, covering: signature.components, parameters: signature.parameters) else { return }
    Benchmark("HMAC-SHA256 check of that base") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(verificationKey.isValidSignature(signature.signature, for: base))
        }
    }
}
