import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Issue 43, item 6: `coffer request` takes a body and prints a response as curl does, and a signed
/// request covers what Coffer's own server asks for, a GET's empty body included.
@Suite("coffer request as curl")
struct RequestCurlTests {
    @Test func bodiesAreReadAsCurlReadsThem() async throws {
        let folder = try TemporaryDirectory()
        let server = try await LoopbackHTTPServer { _ in .init(status: 200) }
        defer { Task { try? await server.shutdown() } }
        let url = "http://127.0.0.1:\(server.port)/orders"
        let file = "{\r\n  \"order\": 7\n}\n"
        _ = try folder.write(file, to: "order.json")

        let forms: [(flags: [String], sent: String)] = [
            (["-d", "@order.json"], "{  \"order\": 7}"),
            (["--data-binary", "@order.json"], file),
            (["--data-file", "order.json"], file),
            (["--data-raw", "@order.json"], "@order.json"),
            (["-d", "plain text"], "plain text"),
        ]
        for (flags, _) in forms {
            let result = try await coffer(["request"] + flags + [url], in: folder)
            #expect(result.status == 0, "\(flags): \(result.standardError)")
        }
        let bodies = server.received.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies == forms.map(\.sent))
        #expect(server.received.allSatisfy { $0.method == "POST" })

        let fromInput = try await coffer(["request", "-d", "@-", url], input: Array("a\nb\n".utf8), in: folder)
        #expect(fromInput.status == 0 && server.received.last?.body == Array("ab".utf8), "\(fromInput.standardError)")
        // Repeated, the pieces are joined with '&' as curl joins them (the last one alone was sent).
        let joined = try await coffer(["request", "-d", "a=1", "-d", "@order.json", "--", url], in: folder)
        #expect(joined.status == 0 && server.received.last?.body == Array("a=1&{  \"order\": 7}".utf8), "\(joined.standardError)")
        let twoFiles = try await coffer(["request", "--data-file", "order.json", "--data-file", "order.json", url], in: folder)
        #expect(twoFiles.status == 2, "\(twoFiles.standardError)")
        let two = try await coffer(["request", "-d", "x", "--data-raw", "y", url], in: folder)
        #expect(two.status == 2 && two.standardError.contains("-d and --data-raw"), "\(two.standardError)")
        let missing = try await coffer(["request", "-d", "@nowhere.json", url], in: folder)
        #expect(missing.status != 0 && missing.standardError.contains("nowhere.json"), "\(missing.standardError)")
        #expect(server.received.count == forms.count + 2, "nothing is sent when the body cannot be read")

        // A signed request's body is always covered: --cover without content-digest is refused when
        // there is a body (the outside attack on this change sent one its signature did not cover).
        #expect(try await coffer(["key", "generate", "-o", "device.key"], in: folder).status == 0)
        let uncovered = try await coffer(["request", "-k", "device.key", "--keyid", "d", "--cover", "@method", "--cover", "@target-uri", "-d", "secret", url], in: folder)
        #expect(uncovered.status == 2 && uncovered.standardError.contains("--cover content-digest"), "\(uncovered.standardError)")
        #expect(server.received.count == forms.count + 2)
    }

    @Test func includePrintsTheHeadOnStandardOutputBeforeTheBody() async throws {
        let server = try await LoopbackHTTPServer { _ in .init(status: 201, fields: [.init("X-Answer", "yes")], body: Array("made".utf8)) }
        defer { Task { try? await server.shutdown() } }
        let result = try await coffer("request", "-i", "http://127.0.0.1:\(server.port)/things")
        #expect(result.status == 0, "\(result.standardError)")
        let output = result.output
        #expect(output.hasPrefix("HTTP/1.1 201 Created\r\n"), "\(output.debugDescription)")
        #expect(output.contains("X-Answer: yes\r\n") && output.hasSuffix("\r\n\r\nmade"), "\(output.debugDescription)")
        #expect(!result.standardError.contains("201"), "the status line is printed once, with the head: \(result.standardError)")

        let plain = try await coffer("request", "http://127.0.0.1:\(server.port)/things")
        #expect(plain.output == "made" && plain.standardError.contains("HTTP 201 Created"), "\(plain.output)\(plain.standardError)")
    }

    /// A server cannot drive the user's terminal through `-i`: a control character in a field it sends
    /// is never printed as it is (the HTTP parser refuses it, or it is shown as `\xHH`).
    @Test func aFieldsControlCharactersAreNotPrinted() async throws {
        let server = try await LoopbackHTTPServer { _ in .init(status: 200, fields: [.init("X-Note", "a\u{1B}]0;owned\u{07}b")], body: []) }
        defer { Task { try? await server.shutdown() } }
        let result = try await coffer("request", "-i", "http://127.0.0.1:\(server.port)/")
        #expect(!result.output.contains("\u{1B}") && !result.output.contains("\u{07}"), "\(result.output.debugDescription)")
        if result.status == 0 { #expect(result.output.contains("X-Note: a\\x1B]0;owned\\x07b\r\n"), "\(result.output.debugDescription)") }
    }

    /// A signed GET to `coffer serve`'s admin API is answered without `--cover` (it was refused: the
    /// server requires the Content-Digest of the empty body, which a GET did not carry).
    @Test func aSignedGetToTheAdminAPIIsAnswered() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["key", "generate", "-t", "ed25519", "-o", "admin.key", "--public", "admin.pub"], in: folder).status == 0)
        let shown = try await coffer(["key", "show", "--json", "admin.pub"], in: folder)
        let keyID = try #require((try JSONSerialization.jsonObject(with: Data(shown.standardOutput)) as? [String: Any])?["keyID"] as? String)
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(),
            ["serve", "--port", "0", "--database", "sqlite:" + folder.path("server.sqlite"), "--admin-key", "admin.pub"],
            pipeInput: false, currentDirectory: folder.path
        )
        defer { server.stop() }
        let log = try #require(await server.waitForError(containing: "listening on"))
        let port = try #require(log.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: ":").last.map(String.init))

        let listed = try await coffer(["request", "-k", "admin.key", "--keyid", keyID, "http://127.0.0.1:\(port)/admin/keys"], in: folder)
        #expect(listed.status == 0 && listed.output.contains(#""keys""#), "\(listed.output)\(listed.standardError)")
    }
}
