import AsyncHTTPClient
import CofferServer
import CofferTestSupport
import CofferTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import Testing

/// `coffer serve` against clients that misbehave (issue 20): old TLS, slow heads, idle connections,
/// floods of registrations and of bad signatures. Live servers on 127.0.0.1 built by
/// `RegistrationServer.application`, the function `coffer serve` runs.
@Suite("Server hardening")
struct ServerHardeningTests {
    /// Runs `body` with the port of a live server built like `coffer serve`'s (TLS when `tls` is set).
    static func withApplication<Value: Sendable>(
        options: RegistrationServer.Options = RegistrationServer.Options(), tls: Bool = false,
        _ body: @escaping @Sendable (Int) async throws -> Value
    ) async throws -> Value {
        let directory = try TemporaryDirectory()
        let store = try await DatabaseLocation.sqlite(path: directory.path("server.sqlite")).openForTest("test")
        var certificate: String?
        var key: String?
        if tls {
            let pki = try TestPKI(name: "Hardening")
            let leaf = try pki.issueServerCertificate(for: ["localhost", "127.0.0.1"])
            certificate = try directory.write(leaf.pem + "\n" + pki.intermediate.pem, to: "chain.pem")
            key = try directory.write(leaf.privateKey.pemRepresentation, to: "key.pem")
        }
        let app = try RegistrationServer(store: store, options: options)
            .application(host: "127.0.0.1", port: 0, certificatePath: certificate, keyPath: key, logger: Logger(label: "test"))
        do {
            let value = try await app.test(.live) { client in try await body(try #require(client.port)) }
            try await store.close()
            return value
        } catch {
            try? await store.close()
            throw error
        }
    }

    // MARK: TLS

    /// `openssl s_client` with one protocol version and cipher list; true when the handshake completed.
    static func handshakes(port: Int, _ arguments: [String]) async throws -> Bool {
        let result = try await CommandRunner.run("openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"] + arguments)
        return result.status == 0 && result.output.contains("Cipher is") && !result.output.contains("Cipher is (NONE)")
    }

    /// Before issue 20, TLS 1.0 and 1.1 and the CBC-SHA suites were negotiated.
    @Test(.enabled(if: CommandRunner.isAvailable("openssl"), "needs the openssl command as a TLS client"))
    func onlyTLS12AndLaterWithAEADCiphersAreNegotiated() async throws {
        var options = RegistrationServer.Options()
        options.scheme = "https"
        try await Self.withApplication(options: options, tls: true) { (port: Int) async throws -> Void in
            // SECLEVEL=0 lets this client offer what old clients offer; the server must refuse it.
            await #expect(try !Self.handshakes(port: port, ["-tls1", "-cipher", "DEFAULT@SECLEVEL=0"]), "TLS 1.0")
            await #expect(try !Self.handshakes(port: port, ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]), "TLS 1.1")
            await #expect(try !Self.handshakes(port: port, ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:AES128-SHA@SECLEVEL=0"]), "CBC-SHA suites")
            await #expect(try Self.handshakes(port: port, ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"]), "TLS 1.2 with an AEAD suite")
            await #expect(try Self.handshakes(port: port, ["-tls1_3"]), "TLS 1.3")
        }
    }

    // MARK: Slow and idle clients

    /// Connects to `port`, optionally writes `head`, then keeps writing `trickle` every 200 ms until
    /// the server closes the connection; true if it did within `limit` (a bound for a failing test,
    /// not a measurement).
    static func serverCloses(port: Int, head: String, trickle: String?, within limit: Duration = .seconds(30)) async throws -> Bool {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
        if !head.isEmpty {
            do {
                try await channel.writeAndFlush(ByteBuffer(string: head))
            } catch {
                // On a slow machine (a sanitizer build) the server may already have closed it.
                return !channel.isActive
            }
        }
        let ticker = trickle.map { text in
            channel.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(200), delay: .milliseconds(200)) { _ in
                channel.writeAndFlush(ByteBuffer(string: text), promise: nil)
            }
        }
        defer {
            ticker?.cancel()
            channel.close(promise: nil)
        }
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await channel.closeFuture.get()
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                // Close it ourselves, so that the task waiting for the close ends too.
                channel.close(promise: nil)
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// A client trickling header lines forever is cut off after the header timeout (before issue 20 it
    /// was still connected after 75 s); so is one that connects and sends nothing, and an idle
    /// keep-alive connection after its response.
    @Test func slowHeadsAndIdleConnectionsAreClosed() async throws {
        var options = RegistrationServer.Options()
        options.headerTimeout = .seconds(1)
        try await Self.withApplication(options: options) { (port: Int) async throws -> Void in
            #expect(try await Self.serverCloses(port: port, head: "GET /health HTTP/1.1\r\nHost: localhost\r\n", trickle: "X-Slow: 1\r\n"), "a trickled head")
            #expect(try await Self.serverCloses(port: port, head: "", trickle: nil), "a silent connection")
            #expect(try await Self.serverCloses(port: port, head: "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n", trickle: nil), "an idle keep-alive connection")
        }
    }

    // MARK: Limits

    static func postJSON(_ url: String, _ json: String) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        return try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    }

    /// Registrations beyond the allowance get `429` with `Retry-After` (before issue 20 anyone could
    /// register without limit: 200 keys in 0.18 s).
    @Test func registrationsAreLimitedPerAddress() async throws {
        var options = RegistrationServer.Options()
        options.registrationsPerMinute = 3
        options.clock.monotonicSeconds = { 0 }  // held still: the limit holds however slowly the test runs
        try await Self.withApplication(options: options) { (port: Int) async throws -> Void in
            for _ in 0..<3 {
                #expect(try await Self.postJSON("http://127.0.0.1:\(port)/register", #"{"algorithm": "hmac-sha256"}"#).status == .created)
            }
            let refused = try await Self.postJSON("http://127.0.0.1:\(port)/register", #"{"algorithm": "hmac-sha256"}"#)
            #expect(refused.status == .tooManyRequests)
            let wait = try #require(refused.headers.first(name: "Retry-After").flatMap(Int.init))
            #expect((1...20).contains(wait), "a token comes back every 20 s at 3 a minute: \(wait)")
            let body = try await refused.body.collect(upTo: 1 << 16)
            #expect(String(buffer: body).contains(#""reason":"rate-limited""#))
        }
    }

    /// Failed signature checks beyond the allowance get `429` before any verification work.
    @Test func failedSignatureChecksAreLimitedPerAddress() async throws {
        var options = RegistrationServer.Options()
        options.signatureFailuresPerMinute = 2
        options.clock.monotonicSeconds = { 0 }  // held still: the limit holds however slowly the test runs
        try await Self.withApplication(options: options) { (port: Int) async throws -> Void in
            let url = "http://127.0.0.1:\(port)/register_user"
            let unsigned = #"{"email": "a@example.com", "name": "A"}"#
            #expect(try await Self.postJSON(url, unsigned).status == .unauthorized)
            #expect(try await Self.postJSON(url, unsigned).status == .unauthorized)
            let limited = try await Self.postJSON(url, unsigned)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers.first(name: "Retry-After").flatMap(Int.init) != nil)
            #expect(try await Self.postJSON("http://127.0.0.1:\(port)/health", "").status != .tooManyRequests, "other routes are not limited")
        }
    }

    /// The benchmark's unsigned route is no longer in the product.
    @Test func thereIsNoUnsignedRoute() async throws {
        try await Self.withApplication { (port: Int) async throws -> Void in
            let response = try await Self.postJSON("http://127.0.0.1:\(port)/unsigned/register_user", #"{"email": "x@example.com", "name": "X"}"#)
            #expect(response.status == .notFound)
        }
    }
}

/// The rate limiter's arithmetic, on an injected clock.
@Suite("Address rate limiter")
struct AddressRateLimiterTests {
    final class Clock: @unchecked Sendable {
        var seconds = 1_000.0
    }

    @Test func aBurstThenOneTokenPerIntervalPerAddress() {
        let clock = Clock()
        let limiter = AddressRateLimiter(perMinute: 6) { clock.seconds }
        for _ in 0..<6 { #expect(limiter.take("a") == nil) }
        #expect(limiter.take("a") == 10, "six a minute: one every 10 s")
        #expect(limiter.take("b") == nil, "another address has its own bucket")
        clock.seconds += 9
        #expect(limiter.retryAfter("a") == 1)
        clock.seconds += 1
        #expect(limiter.retryAfter("a") == nil)
        #expect(limiter.take("a") == nil)
        #expect(limiter.take("a") != nil)
    }

    @Test func theTableStaysBounded() {
        let clock = Clock()
        let limiter = AddressRateLimiter(perMinute: 1, maximumAddresses: 100) { clock.seconds }
        for index in 0..<1_000 { _ = limiter.take("address \(index)") }
        #expect(limiter.take("address 999") != nil, "the newest address keeps its state")
    }
}
