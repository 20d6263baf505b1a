import CofferCore
import CofferFormats
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Certificate identity (issuer and serial number)", .enabled(if: CommandRunner.isAvailable("openssl")))
struct CertificateIdentityTests {
    @Test(arguments: [("0x8001", "008001"), ("42", "2a"), ("0x0102030405060708090a0b0c0d0e0f1011", "0102030405060708090a0b0c0d0e0f1011")])
    func readsSerialAndIssuerFromPEMAndDER(serial: String, content: String) async throws {
        let folder = try TemporaryDirectory()
        let (pem, der) = try await OpenSSLFixtures.selfSignedCertificate(serial: serial, in: folder)
        let fromPEM = try CertificateIdentity(certificate: pem)
        let fromDER = try CertificateIdentity(certificate: der)
        #expect(fromPEM == fromDER && fromDER.der == der)
        #expect(Hex.encode(fromDER.serialNumber) == content)
        // Self-signed, so the issuer Name's DER occurs twice in the certificate: as issuer and as subject.
        #expect(fromDER.issuer.first == 0x30 && der.occurrences(of: fromDER.issuer) == 2)
    }

    /// Serial numbers typed as hex become the INTEGER content a certificate holds (what the CLI used to
    /// compute itself, with the same answers).
    @Test(arguments: [
        ("8001", "008001"), ("00008001", "008001"), ("7f", "7f"), ("00007f", "7f"), ("00", "00"), ("", "00"),
        ("0000", "00"), ("ff", "00ff"), ("0102", "0102"),
    ])
    func serialNumbersFromUnsignedHex(hex: String, content: String) throws {
        #expect(Hex.encode(CertificateIdentity.serialNumber(unsignedBigEndian: try Hex.decode(hex))) == content)
    }

    @Test func everyTruncationAndJunkIsRefused() async throws {
        let folder = try TemporaryDirectory()
        let (_, der) = try await OpenSSLFixtures.selfSignedCertificate(serial: "7", in: folder)
        for length in stride(from: 0, to: der.count, by: 7) {
            #expect(throws: CofferFormatsError.self) { try CertificateIdentity(certificate: Array(der.prefix(length))) }
        }
        #expect(throws: CofferFormatsError.self) { try CertificateIdentity(certificate: Array("-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----\n".utf8)) }
        #expect(throws: CofferFormatsError.self) { try CertificateIdentity(certificate: [0x30, 0x03, 0x02, 0x01, 0x01]) }
    }
}
