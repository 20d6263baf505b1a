import Benchmark
import CofferHTTPSignatures
import SignedRequestFixture

/// Verifying the request bench/wrk/register_user.lua sends, whole and step by step (allocations
/// counted; verify-cost times the same steps in CPU time).
func signedRequestBenchmarks() {
    guard let fixture = try? SignedRegisterUser() else { return }
    let (request, body, created) = (fixture.request, fixture.body, fixture.created)
    let bare = HTTPMessageVerifier(keys: fixture.keys, replayCache: nil)
    let replaying = HTTPMessageVerifier(keys: fixture.keys, replayCache: AcceptingReplayCache())

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
    guard let signature = try? HTTPSignatureFields.signatures(in: request.headerFields).first,
          let base = try? HTTPSignatureBase.make(for: request, covering: signature.components, parameters: signature.parameters) else { return }
    Benchmark("RFC 9421 signature base of POST /register_user") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? HTTPSignatureBase.make(for: request, covering: signature.components, parameters: signature.parameters))
        }
    }
    Benchmark("HMAC-SHA256 check of that base") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(fixture.key.isValidSignature(signature.signature, for: base))
        }
    }
}
