@testable import CofferHummingbird
@testable import CofferServer
import CofferTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// What issue 45 added to the server's library: the trusted proxies, the request id, JSON log lines,
/// readiness and a schema newer than the release.
@Suite("Production operations")
struct ProductionTests {
    @Test func proxiesAreAddressesOrRanges() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1"])
        #expect(proxies.contains("10.200.3.4") && proxies.contains("192.168.1.7") && proxies.contains("fd12::1") && proxies.contains("::1"))
        #expect(!proxies.contains("11.0.0.1") && !proxies.contains("192.168.1.8") && !proxies.contains("fe80::1") && !proxies.contains("not an address"))
        for bad in ["10.0.0.0/33", "10.0.0.0/", "example.com", "::/129", "10.0.0.0/8/8", "", "10.0.0.0/+8", "1.2.3.4 "] {
            #expect(throws: ServerConfigurationError.invalidProxyAddress, "\(bad)") { try TrustedProxies([bad]) }
        }
    }

    /// The client is the rightmost address that is not a trusted proxy; what a client wrote to its left
    /// is never read, and a peer that is not a trusted proxy is believed about nothing.
    /// Behind a pooler that drops the startup parameter (PgBouncer's `ignore_startup_parameters`), the
    /// connection's `statement_timeout` is not the bound asked for: the start says so, with the fix.
    @Test func aStatementBoundNotInEffectIsNamedWithItsFix() {
        #expect(PostgresStatementBound.warning(asked: 1000, reported: 1000, role: "coffer") == nil)
        let dropped = PostgresStatementBound.warning(asked: 1000, reported: 0, role: "coffer") ?? ""
        #expect(dropped.contains("is 0 (no bound), not the 1000 ms this server asked for"), "\(dropped)")
        #expect(dropped.contains("ALTER ROLE coffer SET statement_timeout = '1000ms'"))
        #expect(PostgresStatementBound.warning(asked: 1500, reported: 30000, role: "coffer")?.contains("is 30000 ms") == true)
        #expect(PostgresStatementBound.warning(asked: 1000, reported: nil, role: "coffer")?.contains("is unreadable") == true)
        // A role name that is not plain (PostgreSQL would fold "Coffer" to coffer) is not pasted into the SQL.
        #expect(PostgresStatementBound.warning(asked: 1000, reported: 0, role: "Coffer")?.contains("ALTER ROLE <role> SET") == true)
        #expect(PostgresStatementBound.warning(asked: 1000, reported: 0, role: "a\"; DROP")?.contains("ALTER ROLE <role> SET") == true)
    }

    @Test func theClientIsReadFromTheRight() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8"])
        func fields(_ pairs: [(String, String)]) -> HTTPFields {
            var fields = HTTPFields()
            for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
            return fields
        }
        let spoofed = fields([("X-Forwarded-For", "6.6.6.6, 203.0.113.9"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "api.example.com")])
        let seen = try #require(proxies.forwarded(by: "10.1.1.1", fields: spoofed))
        #expect(seen == ForwardedRequest(clientAddress: "203.0.113.9", scheme: "https", authority: "api.example.com"))
        // Two proxies in a row, and two header fields: still the first untrusted one from the right.
        let chained = fields([("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "198.51.100.2, 10.9.9.9")])
        #expect(proxies.forwarded(by: "10.1.1.1", fields: chained)?.clientAddress == "198.51.100.2")
        // A rightmost entry that is not an address: the proxy itself is the client.
        #expect(proxies.forwarded(by: "10.1.1.1", fields: fields([("X-Forwarded-For", "1.2.3.4, garbage")]))?.clientAddress == "10.1.1.1")
        // A scheme or host that could change what is signed beyond scheme and authority is ignored.
        let odd = fields([("X-Forwarded-Proto", "javascript"), ("X-Forwarded-Host", "evil.example/path?x")])
        #expect(proxies.forwarded(by: "10.1.1.1", fields: odd) == ForwardedRequest(clientAddress: "10.1.1.1"))
        // A dual-stack listener sees an IPv4 proxy as ::ffff:a.b.c.d: still the proxy.
        #expect(proxies.forwarded(by: "::ffff:10.1.1.1", fields: spoofed)?.clientAddress == "203.0.113.9")
        // One spelling per address, and IPv6 clients counted by their /64.
        #expect(TrustedProxies.canonical("2001:DB8:0:0::9") == "2001:db8::9" && TrustedProxies.canonical("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(TrustedProxies.limitKey("2001:db8:1:2:aaaa::1") == TrustedProxies.limitKey("2001:DB8:1:2:bbbb::7"))
        #expect(TrustedProxies.limitKey("2001:db8:1:3::1") != TrustedProxies.limitKey("2001:db8:1:2::1"))
        // Not a trusted proxy: nothing is believed.
        #expect(proxies.forwarded(by: "203.0.113.9", fields: spoofed) == nil)
        #expect(TrustedProxies().forwarded(by: "10.1.1.1", fields: spoofed) == nil)
    }

    /// The rebuilt target in a debug line cannot add fields to a text log line.
    @Test func theRebuiltTargetIsEscapedForTheLog() {
        var head = HTTPRequest(method: .post, scheme: "http", authority: "x client=6.6.6.6 \"q\"\u{85}", path: "/register")
        #expect(head.rebuiltTargetURI == "http://x%20client=6.6.6.6%20%22q%22%C2%85/register")
        head.authority = "api.example.com:8443"
        #expect(head.rebuiltTargetURI == "http://api.example.com:8443/register")
    }

    @Test func theRequestIDIsTheClientsWhenPlainAndNewOtherwise() async throws {
        let router = try RegistrationServer(store: InMemoryRegistrationStore()).router()
        try await Application(router: router).test(.router) { client in
            let given = try await client.execute(uri: "/health", method: .get, headers: [HTTPField.Name("X-Request-ID")!: "trace-42.a:b_c"])
            #expect(given.headers[HTTPField.Name("X-Request-ID")!] == "trace-42.a:b_c")
            for hostile in ["a b", String(repeating: "x", count: 129), "ä", "a/b", "a\"b", "a,b"] {
                let answer = try await client.execute(uri: "/nowhere", method: .get, headers: [HTTPField.Name("X-Request-ID")!: hostile])
                let made = try #require(answer.headers[HTTPField.Name("X-Request-ID")!])
                #expect(made != hostile && made.count == 16 && made.allSatisfy(\.isHexDigit), "\(hostile) → \(made)")
            }
        }
    }

    @Test func durationsAreMillisecondsWithThreeDecimals() {
        #expect(AccessLog.milliseconds(.microseconds(12_345)) == "12.345")
        #expect(AccessLog.milliseconds(.milliseconds(1)) == "1.000")
        #expect(AccessLog.milliseconds(.nanoseconds(999)) == "0.000" && AccessLog.milliseconds(.seconds(2)) == "2000.000")
    }

    @Test func jsonLinesCarryTheMessageAndEveryValue() throws {
        final class Lines: TextOutputStream, @unchecked Sendable {
            var written: [String] = []
            func write(_ string: String) { written.append(string) }
        }
        let lines = Lines()
        var logger = Logger(label: "coffer.serve") { ServerLogHandler(label: $0, stream: lines, format: .json, metadataProvider: nil) }
        logger[metadataKey: "request.id"] = "r1"
        logger.info("request \"quoted\"\n", metadata: ["status": .stringConvertible(201), "message": "clash", "list": .array(["a", "b"])])
        #expect(lines.written.count == 1 && lines.written[0].hasSuffix("}\n") && lines.written[0].filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines.written[0].utf8)) as? [String: Any])
        #expect(object["message"] as? String == "request \"quoted\"\n")
        #expect(object["metadata.message"] as? String == "clash")
        #expect(object["level"] as? String == "info" && object["logger"] as? String == "coffer.serve" && object["request.id"] as? String == "r1")
        #expect(object["status"] as? String == "201" && object["list"] as? [String] == ["a", "b"])
        #expect((object["time"] as? String)?.hasSuffix("Z") == true)
    }

    /// A database a newer release migrated is refused before anything is changed, naming both versions.
    @Test func aNewerSchemaIsRefused() async throws {
        let folder = try TemporaryDirectory()
        let location = DatabaseLocation.sqlite(path: folder.path("server.sqlite"))
        let store = try await location.open(logger: Logger(label: "test"))
        try await store.close()
        let pending = try await location.pendingMigrations(logger: Logger(label: "test"))
        #expect(pending.isEmpty)
        let database = try SQLiteRegistrationStore(path: folder.path("server.sqlite"))
        try await database.pool.write { try $0.execute(sql: "INSERT INTO coffer_schema (version) VALUES (\(RegistrationSQL.latestVersion + 1))") }
        try await database.close()
        await #expect(throws: ServerConfigurationError.schemaNewerThanServer) { _ = try await location.open(logger: Logger(label: "test")) }
        await #expect(throws: ServerConfigurationError.schemaNewerThanServer) { _ = try await location.pendingMigrations(logger: Logger(label: "test")) }
    }

    /// A key that is not the certificate's is refused naming both files; a reload that fails keeps the
    /// pair in use.
    @Test func aCertificateAndAKeyThatDoNotMatchAreNamed() throws {
        let folder = try TemporaryDirectory()
        let pki = try TestPKI(name: "production")
        func pair(_ name: String) throws -> (certificate: String, key: String) {
            let issued = try pki.issueServerCertificate(for: ["localhost"])
            return (try folder.write(Array(issued.pem.utf8), to: name + ".pem"), try folder.write(Array(issued.privateKey.pemRepresentation.utf8), to: name + ".key"))
        }
        let first = try pair("one")
        let second = try pair("two")
        #expect(throws: ServerConfigurationError.invalidTLSCertificate) { try ServerCertificate(certificatePath: first.certificate, keyPath: second.key) }
        let refusal = #expect(throws: ServerConfigurationError.self) { try ServerCertificate(certificatePath: first.certificate, keyPath: second.key) }
        #expect(refusal?.reason.contains(first.certificate) == true && refusal?.reason.contains(second.key) == true, "\(refusal?.reason ?? "")")
        let certificate = try ServerCertificate(certificatePath: first.certificate, keyPath: first.key)
        let before = certificate.fingerprint
        try FileManager.default.removeItem(atPath: first.key)
        #expect(throws: ServerConfigurationError.invalidTLSCertificate) { try certificate.reload() }
        #expect(certificate.fingerprint == before)
    }
}
