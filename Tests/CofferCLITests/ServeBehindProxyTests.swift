import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer serve` behind a real nginx on loopback (issue 45): with `--trusted-proxy`, the limits count
/// by the client nginx saw (X-Forwarded-For, read from the right, so a client cannot choose its
/// address) and signatures are checked against the target the client reached (X-Forwarded-Proto and
/// -Host), with no `--public-authority`; without it, those headers are ignored, and every client shares
/// the proxy's address. Clients take addresses of their own on loopback (127.0.0.2, 127.0.0.3).
@Suite("coffer serve behind nginx", .serialized)
struct ServeBehindProxyTests {
    /// nginx in front of two servers: `trusting` (started with --trusted-proxy 127.0.0.1) on one port,
    /// `plain` (no trusted proxy) on another. Its base URLs, in that order.
    final class Proxy: @unchecked Sendable {
        let process: RunningCommand
        let trustingBase: String
        let plainBase: String

        /// Two free ports for nginx's two servers.
        static func ports() throws -> (Int, Int) { (try ScratchPostgresServer.freePort(), try ScratchPostgresServer.freePort()) }

        init(trusting: Int, plain: Int, ports: (Int, Int), in folder: TemporaryDirectory) async throws {
            let (first, second) = ports
            func server(_ port: Int, _ upstream: Int) -> String {
                """
                    server {
                        listen \(port);
                        location / {
                            proxy_pass http://127.0.0.1:\(upstream);
                            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                            proxy_set_header X-Forwarded-Proto $scheme;
                            proxy_set_header X-Forwarded-Host $http_host;
                        }
                    }
                """
            }
            process = try ServeBehindProxyTests.startNginx(serving: server(first, trusting) + "\n" + server(second, plain), in: folder)
            trustingBase = "http://127.0.0.1:\(first)"
            plainBase = "http://127.0.0.1:\(second)"
            // Until nginx answers (it proxies /health).
            _ = try await eventually { try await ServeOutageTests.ask("GET", self.trustingBase + "/health").status == 200 }
        }
    }

    static var nginxIsThere: Bool {
        if ProcessInfo.processInfo.environment["COFFER_REQUIRE_NGINX"] == "1" { return true }
        return CommandRunner.isAvailable("nginx")
    }

    /// One unsigned POST /register_user from `address` through `base` (a failed signature check); its
    /// status. `spoof` names an address in X-Forwarded-For.
    static func failure(from address: String, to base: String, certificateAuthority: String? = nil, forwardedFor spoof: String? = nil) async throws -> Int {
        var arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--interface", address, "-X", "POST", base + "/register_user",
                         "-H", "Content-Type: application/json", "-d", #"{"email": "x@example.com", "name": "X"}"#]
        if let authority = certificateAuthority { arguments += ["--cacert", authority] }
        if let spoof { arguments += ["-H", "X-Forwarded-For: \(spoof)"] }
        return Int(try await CommandRunner.run(try CommandRunner.resolve("curl"), arguments).output) ?? 0
    }

    /// Unsigned POST /register_user from `address` through `base` until one is answered 429 (at most 30),
    /// `spoof(n)` naming an address in X-Forwarded-For on the nth; whether the limit held as
    /// `--failure-limit` (`limit` a minute) says. The limiter refills a token every 60/`limit` seconds,
    /// so a slow machine earns a client one more failure per such interval: the number allowed before
    /// the first 429 is bounded by the time the requests took, never by how fast they were.
    static func failuresUntilLimited(
        _ limit: Int, from address: String, to base: String, certificateAuthority: String? = nil, forwardedFor spoof: (Int) -> String? = { _ in nil }
    ) async throws -> (statuses: [Int], heldToTheLimit: Bool) {
        let start = ContinuousClock.now
        var statuses: [Int] = []
        while statuses.count < 30, statuses.last != 429 {
            statuses.append(try await failure(from: address, to: base, certificateAuthority: certificateAuthority, forwardedFor: spoof(statuses.count)))
        }
        let refills = Int((ContinuousClock.now - start) / .seconds(60 / Double(limit)))
        let failed = statuses.dropLast()
        let held = statuses.last == 429 && failed.allSatisfy { $0 == 401 } && (limit...(limit + refills)).contains(failed.count)
        return (statuses, held)
    }

    @Test(.enabled(if: nginxIsThere))
    func theLimitsCountByTheRealClientAndSignaturesVerifyThroughTheProxy() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["key", "generate", "-o", "device.key", "--public", "device.pub"], in: folder).status == 0)
        let limits = ["--failure-limit", "5", "--register-limit", "0", "--log-level", "debug"]
        let ports = try Proxy.ports()
        // The authority clients reach is pinned: the proxy's X-Forwarded-Host (nginx's $http_host, the
        // client's own Host) must not override it.
        let (trusting, trustingBase) = try await Self.serve(
            limits + ["--trusted-proxy", "127.0.0.1", "--public-authority", "127.0.0.1:\(ports.0)"], database: "trusting", in: folder
        )
        defer { trusting.stop(SIGKILL) }
        let (plain, plainBase) = try await Self.serve(limits, database: "plain", in: folder)
        defer { plain.stop(SIGKILL) }
        let proxy = try await Proxy(trusting: Self.port(trustingBase), plain: Self.port(plainBase), ports: ports, in: folder)
        defer { proxy.process.stop(SIGKILL) }

        // A device registers through the proxy: its proof of possession signs nginx's address, which
        // the server rebuilds from X-Forwarded-Host.
        let registered = try await coffer(["server", "register", "--server", proxy.trustingBase, "-k", "device.key", "--json"], in: folder)
        #expect(registered.status == 0, "\(registered.standardError)")
        let keyID = try #require((try? JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)

        // Another client (127.0.0.2) fails its signature checks until it is limited, even when it
        // names another address in X-Forwarded-For: nginx appends the one it saw, which is read.
        let attacker = try await Self.failuresUntilLimited(5, from: "127.0.0.2", to: proxy.trustingBase) { _ in "127.0.0.9" }
        #expect(attacker.heldToTheLimit, "\(attacker.statuses)")
        // The device, from its own address, is not: its signed request through nginx verifies.
        let signUp = try await coffer(["request", "-k", "device.key", "--keyid", keyID, "-X", "POST", proxy.trustingBase + "/register_user", "-d", #"{"email": "ada@example.com", "name": "Ada"}"#], in: folder)
        #expect(signUp.status == 0 && signUp.standardError.contains("HTTP 201"), "\(signUp.standardError)\(signUp.output)")
        // A proof signed for another authority (the client's own Host, which nginx forwards) is refused:
        // the pinned one wins over X-Forwarded-Host.
        let elsewhere = try await coffer(["server", "register", "--server", "http://127.0.0.9:\(ports.0)", "-k", "device.key"], in: folder)
        #expect(elsewhere.status != 0, "a proof signed for 127.0.0.9 was accepted: \(elsewhere.output)")
        // A third client is not limited by the other's failures either.
        #expect(try await Self.failure(from: "127.0.0.3", to: proxy.trustingBase) == 401)

        // Directly, not through the trusted proxy: X-Forwarded-For is ignored, the peer's address counts.
        let direct = try await Self.failuresUntilLimited(5, from: "127.0.0.4", to: trustingBase) { _ in "127.0.0.5" }
        #expect(direct.heldToTheLimit, "\(direct.statuses)")
        #expect(try await Self.failure(from: "127.0.0.5", to: trustingBase) == 401, "the address it named was not limited")

        // The server that trusts no proxy: every client shares nginx's address, so one client's
        // failures limit the others; and it checks signatures against its own address, so a request
        // signed for nginx's is a bad signature, whose debug line shows the target it rebuilt.
        let shared = try await Self.failuresUntilLimited(5, from: "127.0.0.2", to: proxy.plainBase)
        #expect(shared.heldToTheLimit, "\(shared.statuses)")
        #expect(try await Self.failure(from: "127.0.0.3", to: proxy.plainBase) == 429, "without --trusted-proxy every client is the proxy")
        let plainRegistered = try await coffer(["server", "register", "--server", proxy.plainBase, "-k", "device.key"], in: folder)
        #expect(plainRegistered.status != 0, "a proof signed for the proxy's address does not verify at a server that ignores X-Forwarded-Host")
        trusting.signal(SIGTERM)
        plain.signal(SIGTERM)
        _ = try await trusting.wait()
        _ = try await plain.wait()
        let plainLog = String(decoding: try Fixtures.contents(ofFile: folder.path("plain.log")), as: UTF8.self)
        #expect(plainLog.contains("\"target_uri\":\"http://127.0.0.1:\(Self.port(plainBase))/register\""), "\(plainLog.suffix(3000))")
        let trustingLog = String(decoding: try Fixtures.contents(ofFile: folder.path("trusting.log")), as: UTF8.self)
        // One access line per request, with the client nginx saw and the request id.
        let access = trustingLog.split(separator: "\n").filter { $0.contains(#""message":"request""#) }
        #expect(access.contains { $0.contains(#""client":"127.0.0.2""#) && $0.contains(#""status":"429""#) })
        #expect(access.contains { $0.contains(#""key_id":"\#(keyID)""#) && $0.contains(#""route":"/register_user""#) && $0.contains(#""status":"201""#) })
        #expect(access.allSatisfy { $0.contains(#""request.id":""#) && $0.contains(#""duration_ms":""#) })
    }

    /// docs/DEPLOYMENT.md's nginx example, as written (only its ports and certificate paths changed), in
    /// front of `coffer serve` configured as that section says: TLS at nginx, idle upstream connections
    /// kept (`keepalive`), a device's registration and signed request verify through it, and the limits
    /// count by the client.
    @Test(.enabled(if: nginxIsThere))
    func theDeploymentGuidesNginxExampleWorksAsWritten() async throws {
        let folder = try TemporaryDirectory()
        try await OpenSSLFixtures.selfSignedCertificate(serial: "1", subject: "/CN=127.0.0.1", alternativeNames: "IP:127.0.0.1", in: folder)
        #expect(try await coffer(["key", "generate", "-o", "device.key", "--public", "device.pub"], in: folder).status == 0)
        let nginxPort = try ScratchPostgresServer.freePort()
        let (server, base) = try await Self.serve(
            ["--trusted-proxy", "127.0.0.1/32", "--public-scheme", "https", "--public-authority", "127.0.0.1:\(nginxPort)", "--failure-limit", "3"],
            database: "guide", in: folder
        )
        defer { server.stop(SIGKILL) }

        let guide = String(decoding: try Fixtures.contents(ofFile: MessageCheck.repository + "/docs/DEPLOYMENT.md"), as: UTF8.self)
        let example = try #require(guide.components(separatedBy: "```nginx\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(example.contains("keepalive"), "the example keeps idle connections to coffer")
        var site = example
        for (written, here) in [
            ("server 127.0.0.1:8080;", "server 127.0.0.1:\(Self.port(base));"), ("listen 443 ssl;", "listen 127.0.0.1:\(nginxPort) ssl;"),
            ("/etc/ssl/api.example.com/fullchain.pem", folder.path("cert.pem")), ("/etc/ssl/api.example.com/privkey.pem", folder.path("cert.key")),
        ] {
            #expect(site.contains(written), "the example no longer says \(written)")
            site = site.replacingOccurrences(of: written, with: here)
        }
        let nginx = try Self.startNginx(serving: site, in: folder)
        defer { nginx.stop(SIGKILL) }
        let prefix = folder.path("nginx")
        let proxied = "https://127.0.0.1:\(nginxPort)"
        // Until nginx answers (it proxies /health).
        let answered = try await eventually {
            try await CommandRunner.run(try CommandRunner.resolve("curl"), ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "--cacert", folder.path("cert.pem"), proxied + "/health"]).output == "200"
        }
        try #require(answered, "nginx did not answer: \(String(decoding: (try? Fixtures.contents(ofFile: prefix + "/error.log")) ?? [], as: UTF8.self))")

        let registered = try await coffer(["server", "register", "--server", proxied, "--ca", "cert.pem", "-k", "device.key", "--json"], in: folder)
        #expect(registered.status == 0, "\(registered.standardError)")
        let keyID = try #require((try? JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)
        // Several signed requests over nginx's kept connections, then another client past its limit.
        for index in 0..<3 {
            let signUp = try await coffer(["request", "--ca", "cert.pem", "-k", "device.key", "--keyid", keyID, "-X", "POST", proxied + "/register_user",
                                           "-d", #"{"email": "guide-\#(index)@example.com", "name": "Ada"}"#], in: folder)
            #expect(signUp.status == 0 && signUp.standardError.contains("HTTP 201"), "\(signUp.standardError)\(signUp.output)")
        }
        // The other client names a new address each time; nginx appends the one it saw, which counts.
        let other = try await Self.failuresUntilLimited(3, from: "127.0.0.2", to: proxied, certificateAuthority: folder.path("cert.pem")) { "127.0.0.\(9 + $0)" }
        #expect(other.heldToTheLimit, "\(other.statuses)")
        let device = try await coffer(["request", "--ca", "cert.pem", "-k", "device.key", "--keyid", keyID, "-X", "POST", proxied + "/register_user",
                                       "-d", #"{"email": "guide-last@example.com", "name": "Ada"}"#], in: folder)
        #expect(device.status == 0 && device.standardError.contains("HTTP 201"), "another client's limit is not the device's: \(device.standardError)")
    }

    static func port(_ base: String) -> Int { Int(base.split(separator: ":").last ?? "") ?? 0 }

    /// nginx in the foreground, one process, with `http` holding `servers` (server and upstream blocks)
    /// and every file it writes in `folder`'s `nginx` folder.
    static func startNginx(serving servers: String, in folder: TemporaryDirectory) throws -> RunningCommand {
        let prefix = folder.path("nginx")
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(prefix)/body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
            \(servers)
            }
            """
        let path = try folder.write(Array(configuration.utf8), to: "nginx.conf")
        return try CommandRunner.start(try CommandRunner.resolve("nginx"), ["-c", path, "-p", prefix], pipeInput: false, standardError: .file(prefix + "/stderr"))
    }

    /// `coffer serve` on a free port over a SQLite file of its own, logging JSON to `NAME.log`.
    static func serve(_ options: [String], database name: String, in folder: TemporaryDirectory) async throws -> (RunningCommand, String) {
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(),
            ["serve", "--port", "0", "--database", "sqlite:" + folder.path(name + ".sqlite"), "--log-format", "json"] + options,
            pipeInput: false, standardOutput: .pipe, standardError: .file(folder.path(name + ".log")), currentDirectory: folder.path
        )
        let line = try #require(try await server.waitForOutput(containing: "listening on"))
        let base = try #require(line.split(separator: "\n").first { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        return (server, String(base))
    }
}
