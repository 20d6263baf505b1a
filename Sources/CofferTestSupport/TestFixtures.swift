public import CofferTesting
import Foundation

extension Array where Element == UInt8 {
    /// How many times `needle` occurs (overlapping occurrences count), e.g. to check that a secret
    /// does not appear in a file, or that a name appears twice in a certificate.
    public func occurrences(of needle: [UInt8]) -> Int {
        guard !needle.isEmpty, needle.count <= count else { return 0 }
        return (0...(count - needle.count)).filter { self[$0..<$0 + needle.count].elementsEqual(needle) }.count
    }
}

/// Certificates made by the `openssl` command for tests.
public enum OpenSSLFixtures {
    /// A self-signed P-256 certificate with `serial` (OpenSSL's `-set_serial` syntax: decimal or `0x…`)
    /// and `subject`, written as `cert.pem` (key `cert.key`) in `folder`; returns its PEM and DER bytes.
    /// `alternativeNames` (OpenSSL's syntax, `DNS:localhost,IP:127.0.0.1`) makes it a server's.
    @discardableResult
    public static func selfSignedCertificate(
        serial: String, subject: String = "/CN=Coffer test/O=Example", alternativeNames: String? = nil, in folder: TemporaryDirectory
    ) async throws -> (pem: [UInt8], der: [UInt8]) {
        let names = alternativeNames.map { ["-addext", "subjectAltName=" + $0] } ?? []
        let made = try await CommandRunner.run("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "cert.key", "-out", "cert.pem",
            "-subj", subject, "-days", "1", "-set_serial", serial,
        ] + names, currentDirectory: folder.path)
        guard made.status == 0 else { throw FixtureError("openssl req failed: \(made.standardError)") }
        let der = try await CommandRunner.run("openssl", ["x509", "-in", "cert.pem", "-outform", "DER"], currentDirectory: folder.path)
        guard der.status == 0 else { throw FixtureError("openssl x509 failed: \(der.standardError)") }
        return (try Fixtures.contents(ofFile: folder.path("cert.pem")), der.standardOutput)
    }

    /// A fixture that could not be made.
    public struct FixtureError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
