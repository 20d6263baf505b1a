// The CPU time of verifying the request bench/wrk/register_user.lua sends (HMAC-SHA256 over @method,
// @target-uri, content-digest and content-type, with created, nonce, alg and keyid), whole and step by
// step, in process: no network, no store. Build it as the server you measure is built, to compare the
// two ways a deployment builds Coffer:
//
//   swift run -c release verify-cost                                      # as an app embedding Coffer builds by default
//   swift run -c release -Xswiftc -cross-module-optimization verify-cost  # as README.md recommends
//   swift run -c release verify-cost parse                                # the steps whose names start so
//
// Each line is the median of 5 rounds of 20,000 calls, in CPU time of the process (this runs on one
// thread), so other load on the host changes it less than it changes wall time.
import CofferCrypto
import CofferHTTPSignatures
import Foundation
import SignedRequestFixture

func processCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

@inline(never) func keep<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Prints the median CPU time of `body` per call, unless `only` names other steps.
func measure(_ name: String, only: String?, _ body: () async throws -> Void) async rethrows {
    if let only, !name.hasPrefix(only) { return }
    let rounds = 5, calls = 20_000
    var microseconds: [Double] = []
    for _ in 0..<rounds {
        let start = processCPUNanoseconds()
        for _ in 0..<calls { try await body() }
        microseconds.append(Double(processCPUNanoseconds() - start) / Double(calls) / 1000)
    }
    microseconds.sort()
    print(name.padding(toLength: 36, withPad: " ", startingAt: 0), String(format: "%7.2f µs", microseconds[rounds / 2]))
}

// A function, not top-level code: closures made at top level would belong to the main actor, and each
// call would hop to it and back.
func run(only: String?) async throws {
    let fixture = try SignedRegisterUser()
    let (signed, body, created, key) = (fixture.request, fixture.body, fixture.created, fixture.key)
    let withoutReplay = HTTPMessageVerifier(keys: fixture.keys, replayCache: nil)
    let withReplay = HTTPMessageVerifier(keys: fixture.keys, replayCache: AcceptingReplayCache())
    guard let signature = try HTTPSignatureFields.signatures(in: signed.headerFields).first,
          let digest = signed.headerFields[.contentDigest] else { throw CancellationError() }
    let base = try HTTPSignatureBase.make(for: signed, covering: signature.components, parameters: signature.parameters)

    print("verifying POST /register_user signed with hmac-sha256, CPU per call (median of 5 x 20,000)")
    try await measure("verify, with a replay record", only: only) { keep(try await withReplay.verify(signed, body: body, now: created)) }
    try await measure("verify, no replay cache", only: only) { keep(try await withoutReplay.verify(signed, body: body, now: created)) }
    try await measure("parse Signature-Input and Signature", only: only) { keep(try HTTPSignatureFields.signatures(in: signed.headerFields)) }
    try await measure("check Content-Digest (62 B body)", only: only) { try ContentDigest.check(digest, body: body) }
    try await measure("build the signature base", only: only) {
        keep(try HTTPSignatureBase.make(for: signed, covering: signature.components, parameters: signature.parameters))
    }
    await measure("check the HMAC", only: only) { keep(key.isValidSignature(signature.signature, for: base)) }
    // The primitive the Ed25519-signed route adds instead of the MAC, over the same base, so that the
    // route's own cost can be told from it (docs/PERFORMANCE.md).
    let ed25519 = try SigningKey.generate(.ed25519)
    let ed25519Key = try HTTPVerificationKey(ed25519.verifyingKey)
    let ed25519Signature = try ed25519.signature(for: Array(base.utf8), options: SignatureOptions())
    await measure("check an Ed25519 signature", only: only) { keep(ed25519Key.isValidSignature(ed25519Signature, for: base)) }
}

try await run(only: CommandLine.arguments.dropFirst().first)
