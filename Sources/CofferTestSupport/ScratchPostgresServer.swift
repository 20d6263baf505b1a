import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of its own, on a free loopback port, for a test that stops and starts the
/// database under a running `coffer serve` (an outage). Made with `.ci/start-postgres` (initdb, trust
/// on loopback, run as the `postgres` user when the tests run as root); removed by ``remove()``.
public final class ScratchPostgresServer: Sendable {
    /// The database's URL (`postgres://coffer@127.0.0.1:PORT/coffer_test?sslmode=disable`).
    public let url: String
    /// The port it listens on.
    public let port: Int
    private let folder: String
    private let bin: String

    private init(url: String, port: Int, folder: String, bin: String) {
        self.url = url
        self.port = port
        self.folder = folder
        self.bin = bin
    }

    /// A new server, started; nil when PostgreSQL tests are not configured (`COFFER_TEST_POSTGRES_URL`
    /// unset) or the machine has no PostgreSQL server programs.
    public static func start() async throws -> ScratchPostgresServer? {
        guard ScratchPostgres.baseURL != nil else { return nil }
        let bins = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = bins.sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last else { return nil }
        let port = try freePort()
        let folder = NSTemporaryDirectory() + "coffer-pg-\(UUID().uuidString.prefix(8))"
        let script = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".ci/start-postgres").path
        var environment = ProcessInfo.processInfo.environment
        environment["COFFER_PG_PORT"] = String(port)
        let (status, output) = try await spawn("/bin/bash", [script, folder], environment: environment)
        guard status == 0, let url = output.split(separator: "\n").last(where: { $0.hasPrefix("postgres://") }).map(String.init) else {
            throw ScratchPostgresError("start-postgres failed: \(output)")
        }
        return ScratchPostgresServer(url: url, port: port, folder: folder, bin: "/usr/lib/postgresql/\(version)/bin")
    }

    /// Stops the server (`pg_ctl stop -m fast`: connections are ended, new ones refused).
    public func stop() async throws {
        try await pgCtl(["-D", folder + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Starts the stopped server again on the same port.
    public func restart() async throws {
        try await pgCtl([
            "-D", folder + "/data", "-l", folder + "/log", "-w",
            "-o", "-c listen_addresses=127.0.0.1 -p \(port) -k \(folder) -c fsync=off", "start",
        ])
    }

    /// Serves TLS with this certificate chain and key (PEM) from now on (`ssl = on`, reloaded).
    public func enableTLS(certificateChain: String, key: String) async throws {
        for (name, text) in [("server.crt", certificateChain), ("server.key", key)] {
            let path = folder + "/data/" + name
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw ScratchPostgresError("cannot write \(path)")
            }
            if getuid() == 0 { try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: path) }
        }
        let (status, output) = try await Self.spawn(try CommandRunner.resolve("psql"), [url, "-q", "-c", "ALTER SYSTEM SET ssl = on"])
        guard status == 0 else { throw ScratchPostgresError("psql: \(output)") }
        try await pgCtl(["-D", folder + "/data", "reload"])
    }

    /// Stops the server (if it runs) and removes its files.
    public func remove() async {
        _ = try? await pgCtl(["-D", folder + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func pgCtl(_ arguments: [String]) async throws {
        let asOwner = getuid() == 0
        let program = asOwner ? "/usr/sbin/runuser" : bin + "/pg_ctl"
        let (status, output) = try await Self.spawn(program, asOwner ? ["-u", "postgres", "--", bin + "/pg_ctl"] + arguments : arguments)
        guard status == 0 else { throw ScratchPostgresError("pg_ctl \(arguments.last ?? ""): \(output)") }
    }

    /// Runs a program that leaves a daemon behind (PostgreSQL) and waits for the program alone: its
    /// output goes to a file, so no descriptor the daemon inherits keeps the wait from ending (a pipe
    /// would not reach its end, and Foundation's `Process` waits for such a descriptor too).
    private static func spawn(_ program: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> (Int32, String) {
        let scratch = try TemporaryDirectory(prefix: "coffer-pg-run")
        let log = scratch.path("output")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let running = try CommandRunner.start(program, arguments, pipeInput: false, standardOutput: .path(log), standardError: .file(log + ".err"), environment: environment)
        let status = try await running.wait().status
        let output = String(decoding: (try? Fixtures.contents(ofFile: log)) ?? [], as: UTF8.self)
        let errors = String(decoding: (try? Fixtures.contents(ofFile: log + ".err")) ?? [], as: UTF8.self)
        return (status, output + errors)
    }

    /// A loopback port nothing listens on now.
    public static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ScratchPostgresError("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        guard bound == 0 else { throw ScratchPostgresError("bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        guard named == 0 else { throw ScratchPostgresError("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
