public import Crypto
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SwiftASN1
public import X509

/// A throwaway public-key infrastructure for TLS tests: a root CA, an intermediate CA it signed, and
/// server certificates the intermediate signs. All keys are P-256 and exist only in memory.
///
/// ```swift
/// let pki = try TestPKI(name: "Coffer Test")
/// let server = try pki.issueServerCertificate(for: ["localhost"])
/// // serve [server.certificate, pki.intermediate] with server.privateKey; trust pki.root
/// ```
public struct TestPKI: Sendable {
    /// An issued certificate with its private key.
    public struct Issued: Sendable {
        /// The certificate.
        public let certificate: Certificate
        /// Its private key.
        public let privateKey: P256.Signing.PrivateKey
        /// The certificate's DER encoding.
        public var der: [UInt8] { TestPKI.der(certificate) }
        /// The certificate as PEM text.
        public var pem: String { (try? certificate.serializeAsPEM().pemString) ?? "" }
    }

    /// The self-signed root.
    public let root: Issued
    /// The intermediate CA, signed by the root.
    public let intermediate: Issued

    /// A new root and intermediate named after `name`.
    public init(name: String) throws {
        let now = Date()
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("\(name) Root CA") }
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: now - 3_600, notValidAfter: now + 30 * 86_400,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey)
        )
        let intermediateKey = P256.Signing.PrivateKey()
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: now - 3_600, notValidAfter: now + 30 * 86_400,
            issuer: rootName, subject: try DistinguishedName { CommonName("\(name) Intermediate CA") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey)
        )
        self.root = Issued(certificate: root, privateKey: rootKey)
        self.intermediate = Issued(certificate: intermediate, privateKey: intermediateKey)
    }

    /// A server certificate for `names` (DNS names, IPv4 and IPv6 literals) signed by the intermediate, valid
    /// from an hour ago for `validity` seconds (negative for one that has already expired).
    public func issueServerCertificate(for names: [String], key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), validity: TimeInterval = 30 * 86_400) throws -> Issued {
        try issueServerCertificate(commonName: names.first ?? "server", alternativeNames: names, key: key, validity: validity)
    }

    /// A server certificate with subject `CN=commonName` and, unless `alternativeNames` is nil, a
    /// subjectAltName extension of those names (DNS names, wildcards, IPv4 and IPv6 literals, the
    /// latter with or without brackets). Nil makes the
    /// certificate clients name by its common name alone, as pinning attacks use.
    public func issueServerCertificate(
        commonName: String, alternativeNames: [String]?, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), validity: TimeInterval = 30 * 86_400
    ) throws -> Issued {
        let now = Date()
        let start = validity < 0 ? now + validity - 86_400 : now - 3_600
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: start, notValidAfter: now + validity,
            issuer: intermediate.certificate.subject,
            subject: try DistinguishedName { CommonName(commonName) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                if let alternativeNames {
                    SubjectAlternativeNames(alternativeNames.map { name -> GeneralName in
                        if let octets = Self.addressBytes(name) { return .ipAddress(ASN1OctetString(contentBytes: ArraySlice(octets))) }
                        return .dnsName(name)
                    })
                }
            },
            issuerPrivateKey: .init(intermediate.privateKey)
        )
        return Issued(certificate: certificate, privateKey: key)
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 literal (`::1` or `[::1]`), or nil for a DNS name.
    static func addressBytes(_ name: String) -> [UInt8]? {
        let literal = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// The DER encoding of a certificate.
    public static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        try? serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The SPKI pin (base64 SHA-256 of the DER SubjectPublicKeyInfo) of a certificate, computed
    /// independently of CofferPinning, for tests to compare against.
    public static func spkiPin(_ certificate: Certificate) -> String {
        var serializer = DER.Serializer()
        try? serializer.serialize(certificate.publicKey)
        return Data(SHA256.hash(data: serializer.serializedBytes)).base64EncodedString()
    }
}
