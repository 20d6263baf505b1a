import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer server data-keys rotate|retire` (issue 45), against a TLS server whose certificate a private
/// CA issued: trusted through `--ca` or `COFFER_CA_FILE` on every `coffer server` command, and not
/// without.
@Suite("coffer server data-keys and --ca")
struct ServerDataKeysCommandTests {
    @Test func anAdminRotatesAndRetiresThroughAPrivateCA() async throws {
        let folder = try TemporaryDirectory()
        let pki = try TestPKI(name: "private")
        let issued = try pki.issueServerCertificate(for: ["localhost"])
        _ = try folder.write(Array((issued.pem + "\n" + pki.intermediate.pem + "\n").utf8), to: "server.pem")
        _ = try folder.write(Array(issued.privateKey.pemRepresentation.utf8), to: "server.key")
        _ = try folder.write(Array(pki.root.pem.utf8), to: "root.pem")
        var masterKey = [UInt8](repeating: 0, count: 32)
        for index in masterKey.indices { masterKey[index] = UInt8.random(in: 0...255) }
        let masterPath = try folder.write(masterKey, to: "master.key")
        chmod(masterPath, 0o600)
        for (name, type) in [("admin", "ed25519"), ("device", "ed25519"), ("box", "x25519")] {
            #expect(try await coffer(["key", "generate", "-t", type, "-o", name + ".key", "--public", name + ".pub"], in: folder).status == 0)
        }
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(),
            ["serve", "--port", "0", "--cert", "server.pem", "--key", "server.key", "--admin-key", "admin.pub", "--registration", "open",
             "--master-key-file", "master.key", "--database", "sqlite:" + folder.path("server.sqlite")],
            pipeInput: false, standardOutput: .pipe, standardError: .file(folder.path("serve.log")), currentDirectory: folder.path
        )
        defer { server.stop(SIGKILL) }
        guard let line = try await server.waitForOutput(containing: "listening on") else {
            Issue.record("the server did not start: \(String(decoding: (try? Fixtures.contents(ofFile: folder.path("serve.log"))) ?? [], as: UTF8.self))")
            return
        }
        let port = try #require(line.split(separator: "\n").first { $0.hasPrefix("listening on") }?.split(separator: ":").last.map(String.init))
        let base = "https://localhost:\(port)"

        // With --ca the private CA's chain is trusted. (Without it the TLS failure is reported once the
        // client's connection attempts time out, after 30 s: ServerAdminCommandTests covers that path.)
        let registered = try await coffer(["server", "register", "--server", base, "-k", "device.key", "--encryption-key", "box.pub", "--ca", "root.pem", "--json"], in: folder)
        #expect(registered.status == 0, "\(registered.standardError)")
        let keyID = try #require((try? JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)
        let fetched = try await coffer(["server", "data-key", "fetch", "--server", base, "-k", "device.key", "-i", "box.key", "-o", "v1.key", "--ca", "root.pem"], in: folder)
        #expect(fetched.status == 0, "\(fetched.standardError)")

        // The admin, through COFFER_CA_FILE.
        var environment = ProcessInfo.processInfo.environment
        environment["COFFER_CA_FILE"] = folder.path("root.pem")
        let rotated = try await coffer(["server", "data-keys", "rotate", keyID, "--server", base, "-k", "admin.key", "--json"], environment: environment, in: folder)
        #expect(rotated.status == 0 && rotated.output.contains(#""version":2"#), "\(rotated.output)\(rotated.standardError)")
        let retired = try await coffer(["server", "data-keys", "retire", keyID, "--min-version", "2", "--server", base, "-k", "admin.key"], environment: environment, in: folder)
        #expect(retired.status == 0 && retired.output.contains("versions below 2 are no longer issued"), "\(retired.output)\(retired.standardError)")
        let tooHigh = try await coffer(["server", "data-keys", "retire", keyID, "--min-version", "9", "--server", base, "-k", "admin.key"], environment: environment, in: folder)
        #expect(tooHigh.status != 0 && tooHigh.standardError.contains("minVersion must be 1 to the newest version, 2"), "\(tooHigh.standardError)")
        // The device's old version is no longer issued; its new one is.
        let old = try await coffer(["server", "data-key", "fetch", "--version", "1", "--server", base, "-k", "device.key", "-i", "box.key", "-o", "old.key", "--ca", "root.pem"], in: folder)
        #expect(old.status != 0, "\(old.standardError)")
        let keys = try await coffer(["server", "keys", "--server", base, "-k", "admin.key"], environment: environment, in: folder)
        #expect(keys.status == 0 && keys.output.contains(keyID), "\(keys.standardError)")
        // A CA file that holds no certificate is named.
        _ = try folder.write(Array("not a certificate".utf8), to: "empty.pem")
        let empty = try await coffer(["server", "keys", "--server", base, "-k", "admin.key", "--ca", "empty.pem"], in: folder)
        #expect(empty.status == 2 && empty.standardError.contains("empty.pem"), "\(empty.standardError)")
    }
}
