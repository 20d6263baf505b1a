import CofferHTTPSignatures
import Testing

/// RFC 9530 Content-Digest, with the RFC's own examples.
@Suite("Content-Digest")
struct ContentDigestTests {
    /// RFC 9530 Appendix B.1 and RFC 9421's examples: `{"hello": "world"}`.
    @Test func theRFCExamples() throws {
        let body = Array(#"{"hello": "world"}"#.utf8)
        #expect(ContentDigest.fieldValue(for: body) == "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
        #expect(ContentDigest.fieldValue(for: body, algorithms: [.sha512])
            == "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:")
        #expect(ContentDigest.fieldValue(for: body, algorithms: [.sha256, .sha512, .sha256]).hasPrefix("sha-256=:X48E9q"))
        try ContentDigest.check("sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:", body: body)
    }

    @Test func streamingMatchesOneShotAtEverySplit() throws {
        let body = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let whole = ContentDigest.fieldValue(for: body, algorithms: [.sha256, .sha512])
        for split in [0, 1, 63, 64, 65, 500, 999, 1000] {
            var hasher = ContentDigest.Hasher(algorithms: [.sha256, .sha512])
            hasher.update(body[..<split])
            hasher.update(body[split...])
            #expect(hasher.fieldValue() == whole)
            var checker = try ContentDigest.Checker(fieldValue: whole)
            checker.update(body[..<split])
            checker.update(body[split...])
            try checker.finish()
        }
    }

    @Test func mismatchesAndMalformedFieldsAreRefused() throws {
        let body = Array("abc".utf8)
        let good = ContentDigest.fieldValue(for: body)
        let cases: [(String, HTTPSignatureError.Code)] = [
            (ContentDigest.fieldValue(for: Array("abd".utf8)), .digestMismatch),
            (good + ", " + ContentDigest.fieldValue(for: Array("abd".utf8), algorithms: [.sha512]), .digestMismatch),
            ("md5=:kAFQmDzST7DWlj99KOF/cg==:", .digestMismatch),
            ("sha-256=abc", .malformedSignature),
            ("sha-256=:not base64!:", .malformedSignature),
            ("", .digestMismatch),
            ("((", .malformedSignature),
        ]
        for (field, code) in cases {
            #expect(throws: HTTPSignatureError.matching(code), "\(field)") { try ContentDigest.check(field, body: body) }
        }
        // Unknown algorithms beside a known, matching one are ignored.
        try ContentDigest.check("md5=:kAFQmDzST7DWlj99KOF/cg==:, " + good, body: body)
        // A shorter digest is a mismatch, not a prefix match.
        #expect(throws: HTTPSignatureError.self) { try ContentDigest.check(String(good.dropLast(6)) + "==:", body: body) }
    }
}
