// A request signed with HMAC-SHA512 over a canonical string with a timestamp, as the classic tutorials
// build it — with the two checks they often leave out: a constant-time comparison and a freshness window.
import CofferCore
import CofferCrypto
import Foundation

let secret = try MACKey.generate(byteCount: 64)          // shared once, over TLS, at registration

// The client: method, path, timestamp and the body's digest, one per line; the tag goes in a header.
let body = Array(#"{"amount": 42}"#.utf8)
let timestamp = Int(Date().timeIntervalSince1970)
let canonical = "POST\n/v1/payments\n\(timestamp)\n\(DigestAlgorithm.sha256.hash(body).hex)"
let tag = try MACAlgorithm.hmacSHA512.authenticationCode(for: canonical, using: secret)

// The server: rebuild the same string from what arrived, refuse stale requests, compare in constant time.
let now = Int(Date().timeIntervalSince1970)
guard abs(now - timestamp) <= 300 else { print("stale request"); exit(1) }
let received = Array(canonical.utf8)
guard try MACAlgorithm.hmacSHA512.isValidAuthenticationCode(tag.bytes, for: received, using: secret) else {
    print("forged request"); exit(1)
}
print("request authenticated:", tag.hex.prefix(16), "…")

// What this recipe still lacks — a replay inside the window passes — is what RFC 9421 signatures with a
// replay cache add: see HTTPMessageSigner with HTTPSigningKey.hmacSHA256(secret:) and HTTPMessageVerifier.
