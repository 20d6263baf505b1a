import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer serve` killed without warning: every request it answered `201` is in its database when it
/// starts again (an answer is given only once the write is committed), and the replay records of those
/// requests survived with them. Cut off from its log reader, it goes on serving.
@Suite("coffer serve under SIGKILL and a closed log pipe")
struct ServeFaultTests {
    /// Starts `coffer serve` on a free port over `database`; its base URL.
    static func serve(_ database: String, in folder: TemporaryDirectory) async throws -> (RunningCommand, String) {
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(), ["serve", "--port", "0", "--database", "sqlite:" + database, "--sign-up-limit", "0"],
            pipeInput: false, currentDirectory: folder.path
        )
        let log = try #require(await server.waitForError(containing: "listening on"))
        let port = try #require(log.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: ":").last.map(String.init))
        return (server, "http://127.0.0.1:\(port)")
    }

    @Test func whatWasAnswered201SurvivesASIGKILL() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["key", "generate", "-o", "device.key", "--public", "device.pub"], in: folder).status == 0)
        let database = folder.path("server.sqlite")
        var (server, base) = try await Self.serve(database, in: folder)
        let registered = try await coffer(["server", "register", "--server", base, "-k", "device.key", "--json"], in: folder)
        #expect(registered.status == 0, "\(registered.standardError)")
        let keyID = try #require((try JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)
        func signUp(_ email: String) async throws -> CommandResult {
            try await coffer(["request", "-k", "device.key", "--keyid", keyID, "-X", "POST", base + "/register_user", "-d", #"{"email": "\#(email)", "name": "Ada"}"#], in: folder)
        }
        let emails = (0..<8).map { "user\($0)@example.com" }
        for email in emails {
            let answer = try await signUp(email)
            #expect(answer.status == 0 && answer.standardError.contains("HTTP 201"), "\(email): \(answer.standardError)")
        }
        server.signal(SIGKILL)
        _ = try? await server.wait()

        (server, base) = try await Self.serve(database, in: folder)
        defer { server.stop() }
        for email in emails {
            // A new signature for the same address: the user is there.
            let again = try await signUp(email)
            #expect(again.status == 1 && again.output.contains("email-exists"), "\(email): \(again.output)\(again.standardError)")
        }
        let fresh = try await signUp("after@example.com")
        #expect(fresh.status == 0 && fresh.standardError.contains("HTTP 201"), "\(fresh.standardError)")
    }

    /// A log reader that has gone away (a pipeline's reader quit, a log shipper restarting) must not
    /// take the server down: a log line it cannot write is dropped, and the server keeps answering.
    /// Standard error is such a pipe from the start, so the first lines (written before SwiftNIO is
    /// running) meet it too.
    @Test func aLogReaderThatWentAwayDoesNotStopTheServer() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["key", "generate", "-o", "device.key", "--public", "device.pub"], in: folder).status == 0)
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(), ["serve", "--port", "0", "--database", "sqlite:" + folder.path("server.sqlite")],
            pipeInput: false, standardOutput: .pipe, standardError: .closedPipe, currentDirectory: folder.path
        )
        defer { server.stop(SIGKILL) }
        guard let ready = try await server.waitForOutput(containing: "listening on") else {
            let ended = try await server.wait()
            Issue.record("the server ended (status \(ended.status)) before it listened")
            return
        }
        let port = try #require(ready.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: ":").last.map(String.init))
        let base = "http://127.0.0.1:\(port)"
        // Registering a key writes an info line.
        let registered = try await coffer(["server", "register", "--server", base, "-k", "device.key"], in: folder)
        #expect(registered.status == 0, "\(registered.standardError)")
        let health = try await coffer(["request", base + "/health"], in: folder)
        #expect(health.status == 0 && health.standardError.contains("HTTP 200"), "\(health.standardError)")
        server.signal(SIGTERM)
        let ended = try await server.wait()
        #expect(ended.status == 0, "the server ended with status \(ended.status)")
    }
}
