import CofferCore
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import SwiftASN1
public import X509

/// A certificate as a server presented it: the exact DER bytes, the parsed certificate, and its two pins.
///
/// The SPKI pin is the SHA-256 of the SubjectPublicKeyInfo exactly as it is encoded inside the
/// certificate (not re-serialized), which is what `openssl x509 -pubkey | openssl pkey -pubin -outform DER |
/// openssl dgst -sha256 -binary | base64` computes.
public struct ChainCertificate: Hashable, Sendable {
    /// The certificate's DER encoding.
    public let der: [UInt8]
    /// The parsed certificate.
    public let certificate: Certificate
    /// The SHA-256 of its SubjectPublicKeyInfo.
    public let publicKeyPin: Pin
    /// The SHA-256 of the whole certificate.
    public let certificatePin: Pin

    /// Parses a DER certificate (at most 64 KiB).
    /// - Throws: ``PinningError`` `.malformedCertificate` when the bytes are not one DER certificate.
    public init(der: [UInt8]) throws(PinningError) {
        guard !der.isEmpty, der.count <= 64 << 10 else {
            throw PinningError(.malformedCertificate, "a certificate is 1 byte to 64 KiB of DER; found \(der.count) bytes")
        }
        do {
            // One parse: the certificate and its SPKI bytes come from the same node tree.
            let root = try DER.parse(der)
            self.certificate = try Certificate(derEncoded: root)
            self.publicKeyPin = Pin(subjectPublicKeyInfo: try Self.subjectPublicKeyInfo(in: root))
        } catch {
            throw PinningError(.malformedCertificate, "not a DER X.509 certificate (\(error))", underlying: error)
        }
        self.der = der
        self.certificatePin = Pin(certificate: der)
    }

    /// The certificate's subject, RFC 4514 style (`CN=example.com,O=Example`).
    public var subject: String { certificate.subject.description }
    /// The certificate's issuer, RFC 4514 style.
    public var issuer: String { certificate.issuer.description }
    /// The end of the validity period.
    public var notValidAfter: Date { certificate.notValidAfter }

    /// The pin of `kind`.
    public func pin(_ kind: Pin.Kind) -> Pin {
        kind == .publicKey ? publicKeyPin : certificatePin
    }

    /// The DER SubjectPublicKeyInfo inside a parsed certificate: the seventh element of tbsCertificate
    /// when a `[0]` version is present, the sixth otherwise.
    static func subjectPublicKeyInfo(in root: ASN1Node) throws -> ArraySlice<UInt8> {
        guard case .constructed(let certificateParts) = root.content,
              let tbs = certificateParts.first(where: { _ in true }),
              case .constructed(let tbsParts) = tbs.content
        else { throw PinningError(.malformedCertificate, "the certificate has no tbsCertificate") }
        var fields = Array(tbsParts)
        if let first = fields.first, first.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
            fields.removeFirst()
        }
        // serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo
        guard fields.count >= 6, fields[5].identifier == .sequence else {
            throw PinningError(.malformedCertificate, "the certificate has no SubjectPublicKeyInfo")
        }
        return fields[5].encodedBytes
    }
}
