import CofferTestSupport
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `coffer pin` and `coffer protect` against real peers: an `openssl s_server` on loopback with an
/// openssl-made certificate, whose pin openssl computes independently.
@Suite("coffer pin", .enabled(if: haveOpenSSL, "needs the openssl CLI"))
struct PinCommandTests {
    /// An `openssl s_server` on 127.0.0.1, ready once it printed ACCEPT.
    final class OpenSSLServer {
        let pid: pid_t
        let port: Int

        /// Started with posix_spawn rather than Foundation's Process, whose exit monitoring, shared
        /// with the short-lived `coffer` runs, could miss their exits while this one kept running.
        init(certificate: String, key: String, in folder: TemporaryDirectory) throws {
            port = try Self.freePort()
            let openssl = try CommandRunner.resolve("openssl")
            let arguments = [openssl, "s_server", "-accept", "127.0.0.1:\(port)", "-cert", folder.path + "/" + certificate,
                             "-key", folder.path + "/" + key, "-www"]
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            for descriptor: Int32 in [0, 1, 2] {
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            }
            var argv = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var child: pid_t = 0
            guard posix_spawn(&child, openssl, &actions, nil, &argv, environ) == 0 else {
                throw CommandFailureForTests("cannot start openssl s_server")
            }
            pid = child
            // Ready when the port accepts a connection: try until it does (each refused attempt returns
            // at once), giving up after 2,000 attempts.
            var attempts = 0
            while !Self.accepts(port) {
                attempts += 1
                guard attempts < 2_000 else {
                    kill(pid, SIGKILL)
                    throw CommandFailureForTests("openssl s_server did not start listening")
                }
                usleep(5_000)
            }
        }

        deinit {
            // SIGKILL: the test process blocks SIGTERM, and a spawned child inherits that mask.
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }

        /// 127.0.0.1:`port` as a socket address.
        static func loopback(port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            return address
        }

        /// Whether something accepts TCP connections on 127.0.0.1:`port`.
        static func accepts(_ port: Int) -> Bool {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(descriptor) }
            var address = loopback(port: port)
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
        }

        /// A port nobody listens on right now: bind to port 0 and read the kernel's choice.
        static func freePort() throws -> Int {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(descriptor) }
            var address = loopback(port: 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
                }
            }
            guard bound else { throw CommandFailureForTests("cannot bind a loopback socket") }
            return Int(UInt16(bigEndian: address.sin_port))
        }
    }

    struct CommandFailureForTests: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private func makeCertificate(in folder: TemporaryDirectory) async throws -> String {
        _ = try await tool("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", "key.pem",
                                 "-out", "cert.pem", "-days", "2", "-nodes", "-subj", "/CN=localhost",
                                 "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], in: folder)
        // The pin as the issue (and TrustKit's documentation) computes it with openssl alone.
        let publicKey = try await tool("openssl", ["x509", "-in", "cert.pem", "-pubkey", "-noout"], in: folder)
        let der = try await tool("openssl", ["pkey", "-pubin", "-outform", "DER"], input: publicKey.standardOutput, in: folder)
        let digest = try await tool("openssl", ["dgst", "-sha256", "-binary"], input: der.standardOutput, in: folder)
        return Data(digest.standardOutput).base64EncodedString()
    }

    @Test func ofReadsCertificatesAndBothHalvesOfTheKey() async throws {
        let folder = try TemporaryDirectory()
        let expected = try await makeCertificate(in: folder)
        _ = try await tool("openssl", ["pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem"], in: folder)
        _ = try await tool("openssl", ["x509", "-in", "cert.pem", "-outform", "DER", "-out", "cert.der"], in: folder)
        for file in ["cert.pem", "cert.der", "key.pem", "pub.pem"] {
            let result = try await coffer("pin", "of", file, in: folder)
            #expect(result.status == 0 && result.output == expected + "\n", "\(file): \(result.standardError)")
        }
        let certificatePin = try await coffer("pin", "of", "--cert", "cert.der", in: folder)
        let der = try await tool("openssl", ["dgst", "-sha256", "-binary", "cert.der"], in: folder)
        #expect(certificatePin.output == "cert-sha256/" + Data(der.standardOutput).base64EncodedString() + "\n")
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: folder.path + "/junk.pem"))
        #expect(try await coffer("pin", "of", "junk.pem", in: folder).status == 2)
    }

    @Test func fetchAndCheckAgainstOpenSSLServer() async throws {
        let folder = try TemporaryDirectory()
        let pin = try await makeCertificate(in: folder)
        let server = try OpenSSLServer(certificate: "cert.pem", key: "key.pem", in: folder)
        let url = "https://localhost:\(server.port)/"
        // fetch prints the pin openssl computed, and judges trust without needing it.
        let fetched = try await coffer("pin", "fetch", "127.0.0.1:\(server.port)", "--servername", "localhost", "--ca", "cert.pem", in: folder)
        #expect(fetched.status == 0, "\(fetched.standardError)")
        #expect(fetched.output.contains("pin:     \(pin)"))
        #expect(fetched.output.contains("subject: CN=localhost"))
        #expect(fetched.output.contains("trusted for localhost by cert.pem: yes"))
        let good = try await coffer("pin", "check", url, "--pin", pin, "--ca", "cert.pem", in: folder)
        #expect(good.status == 0, "\(good.standardError)")
        #expect(good.output.contains("← matches") && good.output.contains("pins hold"))
        let wrong = try await coffer("pin", "check", url, "--pin", "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=", "--ca", "cert.pem", in: folder)
        #expect(wrong.status == 1)
        // The right pin does not rescue a chain the client does not trust.
        let untrusted = try await coffer("pin", "check", url, "--pin", pin, in: folder)
        #expect(untrusted.status == 1 && untrusted.standardError.contains("not trusted"))
        // Nor a host name the certificate does not name.
        let misnamed = try await coffer("pin", "check", url, "--pin", pin, "--ca", "cert.pem", "--servername", "elsewhere.test", in: folder)
        #expect(misnamed.status == 1)
        #expect(try await coffer("pin", "check", url, "--pin", "nonsense", in: folder).status == 2)
        #expect(try await coffer("pin", "check", "http://localhost/", "--pin", pin, in: folder).status == 2)
    }
}

@Suite("coffer protect")
struct ProtectCommandTests {
    @Test func protectsAndChecksAFolder() async throws {
        let folder = try TemporaryDirectory()
        let target = folder.path + "/data"
        #expect(mkdir(target, 0o755) == 0)
        let file = target + "/notes.txt"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8), attributes: [.posixPermissions: 0o644]))
        let before = try await coffer("protect", "--check", target)
        #expect(before.status == 1)
        #expect(before.output.contains("mode:   755 (should be 700)"))
        #expect(before.output.contains("notes.txt"))
        let protect = try await coffer("protect", target)
        if protect.standardError.contains("extended attributes") {
            // The temporary folder's file system has no user attributes: the command must say so.
            #expect(protect.status == 1)
            return
        }
        #expect(protect.status == 0, "\(protect.standardError)")
        #expect(protect.output.contains("backup: excluded from backups"))
        let after = try await coffer("protect", "--check", target)
        #expect(after.status == 0 && after.output.hasSuffix("protected\n"))
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try await coffer("protect", "--check", folder.path + "/missing").status == 1)
    }
}
