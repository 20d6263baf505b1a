import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// `coffer http sign` and `coffer http verify` on keys OpenSSL made, over raw HTTP/1.1 requests.
@Suite("coffer http", .enabled(if: haveOpenSSL, "needs the openssl CLI"))
struct HTTPCommandTests {
    static func rawRequest(fields: String, body: String) -> [UInt8] {
        let head = "POST /register_user?x=1 HTTP/1.1\r\nHost: api.example\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        let signed = fields.split(separator: "\n").map { $0 + "\r\n" }.joined()
        return Array((head + signed + "\r\n" + body).utf8)
    }

    @Test(arguments: [("ed25519", [String]()), ("ec", ["-pkeyopt", "ec_paramgen_curve:P-256"]), ("rsa", ["-pkeyopt", "rsa_keygen_bits:2048"])])
    func signHereVerifyThere(type: String, options: [String]) async throws {
        let folder = try TemporaryDirectory()
        #expect(try await tool("openssl", ["genpkey", "-algorithm", type] + options + ["-out", "app.key"], in: folder).status == 0)
        #expect(try await tool("openssl", ["pkey", "-in", "app.key", "-pubout", "-out", "app.pub"], in: folder).status == 0)
        let body = #"{"email": "ada@example.com", "name": "Ada"}"#
        _ = try folder.write(Array(body.utf8), to: "body.json")
        let alg = type == "rsa" ? ["--alg", "rsa-pss-sha512"] : []
        let signed = try await coffer(["http", "sign", "-k", "app.key", "--keyid", "app", "--method", "POST", "--url", "https://api.example/register_user?x=1",
                                 "-H", "Content-Type: application/json", "--body", "body.json"] + alg, in: folder)
        #expect(signed.status == 0, "\(signed.standardError)")
        #expect(signed.lines.count == 3)
        #expect(signed.lines.first?.hasPrefix("Content-Digest: sha-256=:") == true)

        let good = Self.rawRequest(fields: signed.output, body: body)
        let verified = try await coffer(["http", "verify", "-p", "app.pub"] + alg, input: good, in: folder)
        #expect(verified.status == 0, "\(verified.standardError)")
        #expect(verified.output.hasPrefix("verified: signature 'sig1' by key 'app'"))
        // --json names the covered components as they are, without the signature base's quotes
        // (issue 43: "covered":["\"@method\"", …]).
        let report = try await coffer(["http", "verify", "-p", "app.pub", "--json"] + alg, input: good, in: folder)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.output.utf8)) as? [String: Any], "\(report.output)")
        #expect(object["covered"] as? [String] == ["@method", "@target-uri", "content-digest", "content-type"], "\(report.output)")

        let tampered = Self.rawRequest(fields: signed.output, body: body.replacingOccurrences(of: "Ada", with: "Eve"))
        let refused = try await coffer(["http", "verify", "-p", "app.pub"] + alg, input: tampered, in: folder)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("digest-mismatch"))

        let wrongKeyID = try await coffer(["http", "verify", "-p", "app.pub", "--keyid", "other"] + alg, input: good, in: folder)
        #expect(wrongKeyID.status == 1)
        #expect(wrongKeyID.standardError.contains("unknown-key"))
    }

    /// A raw request does not carry its scheme: one signed for http:// fails under the default https,
    /// and the failure names --scheme (and the tampered one is not excused by it).
    @Test func aRequestSignedForTheOtherSchemeNamesTheFlag() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await tool("openssl", ["genpkey", "-algorithm", "ed25519", "-out", "app.key"], in: folder).status == 0)
        #expect(try await tool("openssl", ["pkey", "-in", "app.key", "-pubout", "-out", "app.pub"], in: folder).status == 0)
        let body = #"{"name": "Ada"}"#
        _ = try folder.write(Array(body.utf8), to: "body.json")
        let signed = try await coffer(["http", "sign", "-k", "app.key", "--keyid", "app", "--method", "POST", "--url", "http://api.example/register_user?x=1",
                                 "-H", "Content-Type: application/json", "--body", "body.json"], in: folder)
        #expect(signed.status == 0, "\(signed.standardError)")
        let request = Self.rawRequest(fields: signed.output, body: body)
        let refused = try await coffer(["http", "verify", "-p", "app.pub", "--ignore-time"], input: request, in: folder)
        #expect(refused.status == 1 && refused.standardError.contains("pass --scheme http"), "\(refused.standardError)")
        let verified = try await coffer(["http", "verify", "-p", "app.pub", "--ignore-time", "--scheme", "http"], input: request, in: folder)
        #expect(verified.status == 0, "\(verified.standardError)")
        let tampered = Self.rawRequest(fields: signed.output, body: body.replacingOccurrences(of: "Ada", with: "Eve"))
        let stillRefused = try await coffer(["http", "verify", "-p", "app.pub", "--ignore-time"], input: tampered, in: folder)
        #expect(stillRefused.status == 1 && !stillRefused.standardError.contains("--scheme"), "\(stillRefused.standardError)")
    }

    /// The RFC 9421 B.4 request, as printed, checked with the RFC's Ed25519 key.
    @Test func theRFCsTransformedRequestVerifies() async throws {
        let folder = try TemporaryDirectory()
        let key = try Data(contentsOf: TestVectors.url("rfc9421/keys/test-key-ed25519.pub.pem"))
        _ = try folder.write(Array(key), to: "rfc.pub")
        let request = """
            GET /demo?name1=Value1&Name2=value2 HTTP/1.1
            Host: example.org
            Date: Fri, 15 Jul 2022 14:24:55 GMT
            Accept: application/json
            Accept: */*
            Signature-Input: transform=("@method" "@path" "@authority" "accept");created=1618884473;keyid="test-key-ed25519"
            Signature: transform=:ZT1kooQsEHpZ0I1IjCqtQppOmIqlJPeo7DHR3SoMn0s5JZ1eRGS0A+vyYP9t/LXlh5QMFFQ6cpLt2m0pmj3NDA==:


            """
        let result = try await coffer(["http", "verify", "-p", "rfc.pub", "--ignore-time", "--require", "@method", "--require", "@authority", "--print-base"], input: Array(request.utf8), in: folder)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("\"accept\": application/json, */*"))
        // Without --ignore-time the 2021 signature is far too old.
        let old = try await coffer(["http", "verify", "-p", "rfc.pub", "--require", "@method"], input: Array(request.utf8), in: folder)
        #expect(old.status == 1)
        #expect(old.standardError.contains("expired"))
        // Malformed input is a usage error (2), not a failed check.
        let garbage = try await coffer(["http", "verify", "-p", "rfc.pub"], input: Array("not http".utf8), in: folder)
        #expect(garbage.status == 2)
    }

    @Test func hmacSecretsAndUsageErrors() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write(Array("Jc1OnNnqbFNWq4UcIKe8q3lmt4ZuVCFd5Er/cO6t7I8=\n".utf8), to: "secret.b64")
        let signed = try await coffer(["http", "sign", "-k", "secret.b64", "--alg", "hmac-sha256", "--keyid", "h_1", "--url", "https://api.example/items?id=7",
                                 "--cover", "@method", "--cover", "@path", "--cover", "@query-param;name=\"id\"", "--no-nonce"], in: folder)
        #expect(signed.status == 0, "\(signed.standardError)")
        #expect(signed.lines.first?.hasPrefix(#"Signature-Input: sig1=("@method" "@path" "@query-param";name="id");created="#) == true)
        let request = "GET /items?id=7 HTTP/1.1\nHost: api.example\n" + signed.output + "\n"
        let verified = try await coffer(["http", "verify", "-p", "secret.b64", "--alg", "hmac-sha256", "--require", "@method"], input: Array(request.utf8), in: folder)
        #expect(verified.status == 0, "\(verified.standardError)")

        #expect(try await coffer("http", "sign", "-k", "secret.b64", "--url", "https://x/", in: folder).status == 2) // no --keyid
        #expect(try await coffer("http", "sign", "-k", "secret.b64", "--keyid", "a", "--alg", "md5", "--url", "https://x/", in: folder).status == 2)
        #expect(try await coffer("http", "sign", "-k", "secret.b64", "--keyid", "a", "--alg", "hmac-sha256", "--url", "ftp://x/", in: folder).status == 2)
        #expect(try await coffer("http", "sign", "-k", "secret.b64", "--keyid", "a", "--alg", "hmac-sha256", "--url", "https://x/", "--cover", "\"unterminated", in: folder).status == 2)
    }
}
