import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer serve` when its PostgreSQL stops (issue 45): every request is answered within a bound
/// (`503` with `Retry-After` while the database is down, never a hang and never a bare `500`), `/health`
/// stays `200`, the server recovers by itself when the database is back, and SIGTERM during an outage
/// still ends the process within its drain. At start, PostgreSQL's own error is the message.
///
/// The bounds are the client's deadlines (curl's `--max-time`): generous against the server's own
/// (0.5 s to connect, 1 s a statement, 1 s for `/ready`), so that a busy machine does not fail the test,
/// and far below the minute an outage took before.
@Suite("coffer serve during a database outage", .serialized)
struct ServeOutageTests {
    /// The longest any answer may take during the test.
    static let answerBound = 8

    /// One request with curl: its status (0 when curl gave up at the bound) and its `Retry-After`.
    static func ask(_ method: String, _ url: String, body: String? = nil) async throws -> (status: Int, retryAfter: String?) {
        var arguments = ["-s", "-o", "/dev/null", "-D", "-", "-w", "%{http_code}\n", "--max-time", String(answerBound), "-X", method, url]
        if let body { arguments += ["-H", "Content-Type: application/json", "-d", body] }
        let result = try await CommandRunner.run(try CommandRunner.resolve("curl"), arguments)
        // Header lines end in CRLF, which Swift reads as one Character: split on any newline.
        let lines = result.output.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        let retry = lines.first { $0.lowercased().hasPrefix("retry-after:") }.map { String($0.dropFirst("retry-after:".count)).trimmingCharacters(in: .whitespaces) }
        return (Int(lines.last ?? "") ?? 0, retry)
    }

    /// Starts `coffer serve` on `url` with `extra` options; the server and its base URL.
    static func serve(_ url: String, _ extra: [String] = [], in folder: TemporaryDirectory) async throws -> (RunningCommand, String) {
        // The log to a file: under load it outgrows a pipe the test does not read meanwhile.
        var environment = ProcessInfo.processInfo.environment
        environment["COFFER_DATABASE"] = url
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(), ["serve", "--port", "0", "--register-limit", "0", "--log-format", "json"] + extra,
            pipeInput: false, standardOutput: .pipe, standardError: .file(folder.path("serve.log")), environment: environment, currentDirectory: folder.path
        )
        guard let line = try await server.waitForOutput(containing: "listening on") else {
            let ended = try await server.wait()
            Issue.record("the server ended (status \(ended.status)) before it listened: \(String(decoding: (try? Fixtures.contents(ofFile: folder.path("serve.log"))) ?? [], as: UTF8.self))")
            throw CancellationError()
        }
        let base = try #require(line.split(separator: "\n").first { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        return (server, String(base))
    }

    @Test func everyAnswerComesWithinTheBoundAndTheServerRecoversByItself() async throws {
        guard let database = try await ScratchPostgresServer.start() else { return }
        defer { Task { await database.remove() } }
        let folder = try TemporaryDirectory()
        // A busy machine may take longer than the default half second to connect: 2 s, so the first
        // answers of the outage still come well within the bound.
        let (server, base) = try await Self.serve(database.url, ["--drain-timeout", "3", "--database-connect-timeout", "2"], in: folder)
        defer { server.stop(SIGKILL) }
        let first = try await Self.ask("GET", base + "/ready")
        #expect(first.status == 200, "\(base): \(String(decoding: (try? Fixtures.contents(ofFile: folder.path("serve.log"))) ?? [], as: UTF8.self).suffix(3000))")
        #expect(try await Self.ask("POST", base + "/register", body: #"{"algorithm": "hmac-sha256"}"#).status == 201)

        // Load from four clients while the database stops: each answer within the bound, 201/200
        // before, 503 with Retry-After after, never anything else.
        let stopped = Flag()
        let answers = try await withThrowingTaskGroup(of: [(Int, String?, Bool)].self) { group in
            for client in 0..<4 {
                group.addTask {
                    var seen: [(Int, String?, Bool)] = []
                    var afterStop = 0
                    while afterStop < 12 {
                        let wasStopped = stopped.isSet
                        let answer = client % 2 == 0
                            ? try await Self.ask("POST", base + "/register", body: #"{"algorithm": "hmac-sha256"}"#)
                            : try await Self.ask("GET", base + "/ready")
                        seen.append((answer.status, answer.retryAfter, wasStopped))
                        if wasStopped { afterStop += 1 }
                    }
                    return seen
                }
            }
            group.addTask {
                // A few answers first, then the outage.
                for _ in 0..<3 { _ = try await Self.ask("GET", base + "/ready") }
                try await database.stop()
                stopped.set()
                return []
            }
            var all: [(Int, String?, Bool)] = []
            for try await part in group { all += part }
            return all
        }
        #expect(answers.allSatisfy { $0.0 != 0 }, "a request got no answer within \(Self.answerBound) s")
        #expect(answers.allSatisfy { [200, 201, 503].contains($0.0) }, "\(answers.map(\.0))")
        let during = answers.filter(\.2)
        #expect(during.filter { $0.0 == 503 }.count >= 40, "\(during.map(\.0))")
        #expect(answers.filter { $0.0 == 503 }.allSatisfy { $0.1 == "1" }, "every 503 says Retry-After: 1")
        #expect(try await Self.ask("GET", base + "/health").status == 200, "liveness never asks the database")

        // The database comes back: the server finds it by itself.
        try await database.restart()
        let ready = try await eventually { try await Self.ask("GET", base + "/ready").status == 200 }
        #expect(ready, "/ready was not 200 within 30 s after the database came back")
        #expect(try await Self.ask("POST", base + "/register", body: #"{"algorithm": "hmac-sha256"}"#).status == 201)

        // SIGTERM while the database is down and requests are in flight: the process ends by itself.
        try await database.stop()
        async let inFlight = Self.ask("POST", base + "/register", body: #"{"algorithm": "hmac-sha256"}"#)
        server.signal(SIGTERM)
        let ended = try await Self.ending(server, within: 20)
        #expect(ended == 0, "the server did not end within 20 s of SIGTERM (drain 3 s)")
        _ = try await inFlight
        let log = String(decoding: try Fixtures.contents(ofFile: folder.path("serve.log")), as: UTF8.self)
        #expect(log.contains(#""message":"the database is not answering: requests get 503 until it does""#), "\(log.suffix(2000))")
        #expect(log.contains(#""message":"the database answers again""#))
        #expect(log.contains(#""cause":"#), "the store failure's cause is in the log")
    }

    /// At start: PostgreSQL's own reason, at once, never a wait that ends in "did not answer".
    @Test func aDatabaseThatRefusesSaysWhyAtOnce() async throws {
        guard let database = try await ScratchPostgresServer.start() else { return }
        defer { Task { await database.remove() } }
        let folder = try TemporaryDirectory()
        let missing = database.url.replacingOccurrences(of: "/coffer_test?", with: "/no_such_database?")
        let result = try await coffer(["serve", "--port", "0", "--database", missing], in: folder)
        #expect(result.status == 2)
        #expect(result.standardError.contains(#"database "no_such_database" does not exist (SQLSTATE 3D000)"#), "\(result.standardError)")

        // Migrations: listed by a dry run, applied and logged one by one, then nothing to do.
        let dry = try await coffer(["serve", "--database", database.url, "--migrate-only", "--dry-run", "--database-connect-timeout", "10"], in: folder)
        #expect(dry.status == 0 && dry.output.contains("would apply migration 1: ") && dry.output.contains("would apply migration 9: "), "\(dry.output)\(dry.standardError)")
        let migrated = try await coffer(["serve", "--database", database.url, "--migrate-only", "--database-connect-timeout", "10"], in: folder)
        #expect(migrated.status == 0 && migrated.output.contains("schema at version 9"), "\(migrated.output)\(migrated.standardError)")
        #expect(migrated.standardError.contains("applied migration 9: key and user records authenticated under the master keyring"), "\(migrated.standardError)")
        let again = try await coffer(["serve", "--database", database.url, "--migrate-only", "--dry-run", "--database-connect-timeout", "10"], in: folder)
        #expect(again.output.contains("no migration to apply"), "\(again.output)")

        // A database a newer release migrated is refused, naming both versions, and left as it was.
        let psql = try await CommandRunner.run(try CommandRunner.resolve("psql"), [database.url, "-q", "-c", "INSERT INTO coffer_schema (version) VALUES (99)"])
        #expect(psql.status == 0, "\(psql.standardError)")
        let newer = try await coffer(["serve", "--port", "0", "--database", database.url, "--database-connect-timeout", "10"], in: folder)
        #expect(newer.status == 2 && newer.standardError.contains("version 99, and this release knows versions up to 9"), "\(newer.standardError)")
    }

    /// The process's status once it ended, or nil when it had not within `seconds`.
    static func ending(_ server: RunningCommand, within seconds: Int) async throws -> Int32? {
        try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask { try await server.wait().status }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next() ?? nil
            if first == nil { server.signal(SIGKILL) }
            group.cancelAll()
            return first
        }
    }
}

/// A flag set once, read by several tasks.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// `sslmode=verify-full` and `verify-ca` with `--database-ca` (issue 45), against a PostgreSQL of its
/// own serving TLS with a certificate a private CA issued for `localhost`.
@Suite("coffer serve and PostgreSQL's certificate", .serialized)
struct ServeDatabaseTLSTests {
    @Test func theDatabasesCertificateIsCheckedAgainstTheCAGiven() async throws {
        guard let database = try await ScratchPostgresServer.start() else { return }
        defer { Task { await database.remove() } }
        let folder = try TemporaryDirectory()
        let pki = try TestPKI(name: "database")
        let issued = try pki.issueServerCertificate(for: ["localhost"])
        try await database.enableTLS(certificateChain: issued.pem + "\n" + pki.intermediate.pem + "\n", key: issued.privateKey.pemRepresentation)
        _ = try folder.write(Array(pki.root.pem.utf8), to: "root.pem")
        _ = try folder.write(Array(try TestPKI(name: "other").root.pem.utf8), to: "other.pem")
        func migrate(_ host: String, _ mode: String, ca: String) async throws -> CommandResult {
            try await coffer([
                "serve", "--migrate-only", "--database-connect-timeout", "10",
                "--database", "postgres://coffer@\(host):\(database.port)/coffer_test?sslmode=\(mode)", "--database-ca", ca,
            ], in: folder)
        }
        let verified = try await migrate("localhost", "verify-full", ca: "root.pem")
        #expect(verified.status == 0, "\(verified.standardError)")
        let otherCA = try await migrate("localhost", "verify-full", ca: "other.pem")
        #expect(otherCA.status == 2 && otherCA.standardError.contains("cannot connect to PostgreSQL"), "\(otherCA.standardError)")
        // The certificate names localhost, not 127.0.0.1: verify-full refuses, verify-ca does not check names.
        let wrongName = try await migrate("127.0.0.1", "verify-full", ca: "root.pem")
        #expect(wrongName.status == 2, "\(wrongName.standardError)")
        let chainOnly = try await migrate("127.0.0.1", "verify-ca", ca: "root.pem")
        #expect(chainOnly.status == 0, "\(chainOnly.standardError)")
        let notVerifying = try await migrate("localhost", "require", ca: "root.pem")
        #expect(notVerifying.status == 2 && notVerifying.standardError.contains("only with sslmode=verify-ca or verify-full"), "\(notVerifying.standardError)")
    }
}
