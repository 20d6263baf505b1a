import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer serve`'s configuration as an operator meets it (issue 45): every option from a `COFFER_…`
/// variable, errors at start that name the file or address and come before the database is touched,
/// `listening on` only once every listener is up, a private key refused as an admin key, and SIGHUP
/// reloading the TLS certificate without dropping a connection.
@Suite("coffer serve's configuration")
struct ServeConfigurationTests {
    /// Every option `coffer serve --help` lists is also read from its variable, which the help names
    /// (all but --abandon-master-keyring, which is only ever typed).
    @Test func everyOptionHasItsVariable() async throws {
        let help = try await coffer(["serve", "--help"]).output
        let options = Set(help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," }).filter { $0.hasPrefix("--") && $0.count > 2 }
            .map { String($0.prefix { $0 == "-" || $0.isLetter || $0.isNumber }) })
        let exempt: Set<String> = ["--help", "--version", "--abandon-master-keyring", "--some-option"]
        #expect(options.count > 30)
        for option in options.subtracting(exempt) {
            let variable = "COFFER_" + option.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
            #expect(help.contains(variable), "\(option) has no \(variable) in --help")
        }
        #expect(!help.contains("COFFER_ABANDON_MASTER_KEYRING"))
    }

    @Test func theEnvironmentConfiguresAndTheCommandLineWins() async throws {
        let folder = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["COFFER_DATABASE"] = "sqlite:" + folder.path("server.sqlite")
        environment["COFFER_TRUSTED_PROXY"] = "10.0.0.0/8, not-an-address"
        let refused = try await coffer(["serve", "--port", "0"], environment: environment, in: folder)
        #expect(refused.status == 2 && refused.standardError.contains("'not-an-address' is not an IP address"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("server.sqlite")), "refused before the database was touched")
        environment["COFFER_TRUSTED_PROXY"] = nil
        environment["COFFER_LOG_FORMAT"] = "yaml"
        let wrongFormat = try await coffer(["serve", "--port", "0"], environment: environment, in: folder)
        #expect(wrongFormat.status == 2 && wrongFormat.standardError.contains("--log-format takes text or json"), "\(wrongFormat.standardError)")
        environment["COFFER_MIGRATE_ONLY"] = "maybe"
        let badFlag = try await coffer(["serve", "--log-format", "json"], environment: environment, in: folder)
        #expect(badFlag.status == 2 && badFlag.standardError.contains("COFFER_MIGRATE_ONLY must be 1, true or yes"), "\(badFlag.standardError)")
        // The command line's --log-format wins over the variable's; the flag's variable is read.
        environment["COFFER_MIGRATE_ONLY"] = "true"
        let migrated = try await coffer(["serve", "--log-format", "json"], environment: environment, in: folder)
        #expect(migrated.status == 0 && migrated.output.contains("schema at version"), "\(migrated.standardError)")
        #expect(migrated.standardError.split(separator: "\n").allSatisfy { $0.hasPrefix("{") }, "JSON lines: \(migrated.standardError)")
    }

    /// A port in use is named with its option, before the database is opened; with the metrics port
    /// taken, nothing says `listening on`.
    @Test func aPortInUseIsNamedBeforeTheDatabaseIsTouched() async throws {
        let folder = try TemporaryDirectory()
        let (socket, port) = try Self.listen()
        defer { close(socket) }
        let database = "sqlite:" + folder.path("server.sqlite")
        let taken = try await coffer(["serve", "--port", String(port), "--database", database], in: folder)
        #expect(taken.status == 2 && taken.standardError.contains("cannot listen on 127.0.0.1:\(port) (--port): the address is in use"), "\(taken.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("server.sqlite")))
        let metrics = try await coffer(["serve", "--port", "0", "--metrics-port", String(port), "--database", database], in: folder)
        #expect(metrics.status == 2 && metrics.standardError.contains("(--metrics-port)") && !metrics.output.contains("listening on"), "\(metrics.output)\(metrics.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("server.sqlite")))
    }

    @Test func anAdminKeyMustBePublicAndTLSFilesAreNamed() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer(["key", "generate", "-o", "admin.key", "--public", "admin.pub"], in: folder).status == 0)
        let database = "sqlite:" + folder.path("server.sqlite")
        let privateKey = try await coffer(["serve", "--port", "0", "--admin-key", "admin.key", "--database", database], in: folder)
        #expect(privateKey.status == 2 && privateKey.standardError.contains("--admin-key admin.key is a private key"), "\(privateKey.standardError)")
        let missing = try await coffer(["serve", "--port", "0", "--cert", "nowhere.pem", "--key", "admin.key", "--database", database], in: folder)
        #expect(missing.status == 2 && missing.standardError.contains("the TLS certificate nowhere.pem cannot be read"), "\(missing.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("server.sqlite")))
    }

    /// SIGHUP: a connection open across it keeps working, a new one gets the new certificate; a pair
    /// that does not load leaves the old one in use.
    @Test func sighupReloadsTheCertificateWithoutDroppingAConnection() async throws {
        let folder = try TemporaryDirectory()
        let pki = try TestPKI(name: "reload")
        func write(_ name: String) throws -> String {
            let issued = try pki.issueServerCertificate(for: ["localhost"])
            _ = try folder.write(Array(issued.pem.utf8), to: name + ".pem")
            _ = try folder.write(Array(issued.privateKey.pemRepresentation.utf8), to: name + ".key")
            return issued.pem
        }
        let first = try write("first")
        let second = try write("second")
        try FileManager.default.copyItem(atPath: folder.path("first.pem"), toPath: folder.path("server.pem"))
        try FileManager.default.copyItem(atPath: folder.path("first.key"), toPath: folder.path("server.key"))
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(),
            ["serve", "--port", "0", "--cert", "server.pem", "--key", "server.key", "--database", "sqlite:" + folder.path("server.sqlite")],
            pipeInput: false, standardOutput: .pipe, standardError: .file(folder.path("serve.log")), currentDirectory: folder.path
        )
        defer { server.stop(SIGKILL) }
        let line = try #require(try await server.waitForOutput(containing: "listening on"))
        let port = try #require(line.split(separator: "\n").first { $0.hasPrefix("listening on") }?.split(separator: ":").last.map(String.init))
        // Swap the files, then a client that holds one connection open across the SIGHUP.
        try FileManager.default.removeItem(atPath: folder.path("server.pem"))
        try FileManager.default.removeItem(atPath: folder.path("server.key"))
        try FileManager.default.copyItem(atPath: folder.path("second.pem"), toPath: folder.path("server.pem"))
        try FileManager.default.copyItem(atPath: folder.path("second.key"), toPath: folder.path("server.key"))
        let script = """
            import os, signal, socket, ssl, sys
            port, pid = int(sys.argv[1]), int(sys.argv[2])
            context = ssl.create_default_context(); context.check_hostname = False; context.verify_mode = ssl.CERT_NONE
            def get(connection):
                connection.sendall(b"GET /health HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")
                data = b""
                while b"\\r\\n\\r\\n" not in data or not data.endswith(b"}"):
                    chunk = connection.recv(4096)
                    if not chunk: return "closed"
                    data += chunk
                return data.split(b" ")[1].decode()
            held = context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
            before = ssl.DER_cert_to_PEM_cert(held.getpeercert(binary_form=True))
            print("first", get(held))
            os.kill(pid, signal.SIGHUP)
            # Until the server logged the reload: its log is the second argument's file.
            import time
            for _ in range(200):
                if "TLS certificate reloaded" in open(sys.argv[3]).read(): break
                time.sleep(0.05)
            print("held", get(held))
            fresh = context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
            after = ssl.DER_cert_to_PEM_cert(fresh.getpeercert(binary_form=True))
            print("fresh", get(fresh))
            print("BEFORE" + before.replace("\\n", "") + "END")
            print("AFTER" + after.replace("\\n", "") + "END")
            """
        let client = try await CommandRunner.run(try CommandRunner.resolve("python3"), ["-c", script, port, String(server.processIdentifier), folder.path("serve.log")])
        #expect(client.status == 0, "\(client.standardError)")
        #expect(client.output.contains("first 200") && client.output.contains("held 200") && client.output.contains("fresh 200"), "\(client.output)")
        let compact = { (pem: String) in pem.replacingOccurrences(of: "\n", with: "") }
        #expect(client.output.contains("BEFORE" + compact(first) + "END"), "the first connection had the first certificate")
        #expect(client.output.contains("AFTER" + compact(second) + "END"), "a connection after SIGHUP has the second")

        // A pair that does not load: logged, the second stays, the server runs on.
        try FileManager.default.removeItem(atPath: folder.path("server.key"))
        try FileManager.default.copyItem(atPath: folder.path("first.key"), toPath: folder.path("server.key"))
        server.signal(SIGHUP)
        server.signal(SIGTERM)
        #expect(try await server.wait().status == 0)
        let log = String(decoding: try Fixtures.contents(ofFile: folder.path("serve.log")), as: UTF8.self)
        #expect(log.contains("TLS certificate not reloaded: the one in use stays"), "\(log.suffix(2000))")
    }

    /// A socket listening on a free loopback port, and the port.
    static func listen() throws -> (Int32, Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard bound == 0, Glibc.listen(descriptor, 4) == 0 else { throw CocoaError(.fileWriteUnknown) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
