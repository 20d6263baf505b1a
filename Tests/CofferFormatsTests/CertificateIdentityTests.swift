import CofferCore
import CofferFormats
import CofferTesting
import Foundation
import Testing

@Suite("Certificate identity (issuer and serial number)", .enabled(if: CommandRunner.isAvailable("openssl")))
struct CertificateIdentityTests {
    /// An OpenSSL self-signed certificate with a chosen serial, as PEM and DER.
    static func makeCertificate(serial: String, in folder: TemporaryDirectory) throws -> (pem: [UInt8], der: [UInt8]) {
        let made = try CommandRunner.run("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "key.pem", "-out", "cert.pem",
            "-subj", "/CN=Coffer test/O=Example", "-days", "1", "-set_serial", serial,
        ], currentDirectory: folder.path)
        try #require(made.status == 0, "\(made.standardError)")
        let der = try CommandRunner.run("openssl", ["x509", "-in", "cert.pem", "-outform", "DER"], currentDirectory: folder.path)
        return (Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("cert.pem")))), der.standardOutput)
    }

    @Test(arguments: [("0x8001", "008001"), ("42", "2a"), ("0x0102030405060708090a0b0c0d0e0f1011", "0102030405060708090a0b0c0d0e0f1011")])
    func readsSerialAndIssuerFromPEMAndDER(serial: String, content: String) throws {
        let folder = try TemporaryDirectory()
        let (pem, der) = try Self.makeCertificate(serial: serial, in: folder)
        let fromPEM = try CertificateIdentity(certificate: pem)
        let fromDER = try CertificateIdentity(certificate: der)
        #expect(fromPEM == fromDER && fromDER.der == der)
        #expect(Hex.encode(fromDER.serialNumber) == content)
        // Self-signed, so the issuer Name's DER occurs twice in the certificate: as issuer and as subject.
        #expect(fromDER.issuer.first == 0x30 && der.ranges(of: fromDER.issuer) == 2)
    }

    @Test func everyTruncationAndJunkIsRefused() throws {
        let folder = try TemporaryDirectory()
        let (_, der) = try Self.makeCertificate(serial: "7", in: folder)
        for length in stride(from: 0, to: der.count, by: 7) {
            #expect(throws: CofferFormatsError.self) { try CertificateIdentity(certificate: Array(der.prefix(length))) }
        }
        #expect(throws: CofferFormatsError.self) { try CertificateIdentity(certificate: Array("-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----\n".utf8)) }
        #expect(throws: CofferFormatsError.self) { try CertificateIdentity(certificate: [0x30, 0x03, 0x02, 0x01, 0x01]) }
    }
}

extension Array where Element == UInt8 {
    /// How many times `needle` occurs.
    func ranges(of needle: [UInt8]) -> Int {
        guard !needle.isEmpty, needle.count <= count else { return 0 }
        return (0...(count - needle.count)).filter { self[$0..<$0 + needle.count].elementsEqual(needle) }.count
    }
}
