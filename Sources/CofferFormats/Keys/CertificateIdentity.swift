import CofferCore
import SwiftASN1

/// What names an X.509 certificate in a keychain: its issuer and serial number (`kSecAttrIssuer`,
/// `kSecAttrSerialNumber`), read from PEM or DER. Only the outer structure and these two fields are
/// parsed; the certificate is neither validated nor trusted here.
///
/// ```swift
/// let identity = try CertificateIdentity(certificate: pemOrDERBytes)
/// try keychain.add(.certificate(issuer: identity.issuer, serialNumber: identity.serialNumber), secret: identity.der)
/// ```
public struct CertificateIdentity: Sendable, Hashable {
    /// The whole certificate, DER.
    public let der: [UInt8]
    /// The DER encoding of the issuer's Name.
    public let issuer: [UInt8]
    /// The serial number's INTEGER content bytes, as Keychain Services stores them.
    public let serialNumber: [UInt8]

    /// Reads a certificate (the first `CERTIFICATE` block of PEM text, or DER).
    /// - Throws: ``CofferFormatsError`` `.malformedKey` when the bytes are not a certificate.
    public init(certificate bytes: [UInt8]) throws(CofferFormatsError) {
        guard bytes.count <= PEMBlock.maximumTextLength else {
            throw CofferFormatsError(.malformedKey, "the input is larger than 1 MiB; it is not a certificate")
        }
        var der = bytes
        if bytes.starts(with: Array("-----BEGIN".utf8)) || bytes.first != 0x30 {
            let text = String(decoding: bytes, as: UTF8.self)
            guard let block = try PEMBlock.blocks(in: text).first(where: { $0.label == "CERTIFICATE" }) else {
                throw CofferFormatsError(.malformedKey, "no CERTIFICATE block in the PEM text, and not DER either")
            }
            der = block.der
        }
        do {
            let (issuer, serial) = try DER.sequence(try DER.parse(der), identifier: .sequence) { certificate in
                guard let tbs = certificate.next() else { throw ASN1Error.invalidASN1Object(reason: "empty certificate") }
                let fields = try DER.sequence(tbs, identifier: .sequence) { nodes in
                    var first = nodes.next()
                    // version [0] EXPLICIT, absent for v1 certificates
                    if first?.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) { first = nodes.next() }
                    guard let serialNode = first else { throw ASN1Error.invalidASN1Object(reason: "no serial number") }
                    guard serialNode.identifier == .integer, case .primitive(let serial) = serialNode.content, !serial.isEmpty else {
                        throw ASN1Error.invalidASN1Object(reason: "the serial number is not an INTEGER")
                    }
                    guard nodes.next() != nil, let issuer = nodes.next(), issuer.identifier == .sequence else {
                        throw ASN1Error.invalidASN1Object(reason: "no issuer name")
                    }
                    while nodes.next() != nil {}
                    return (Array(issuer.encodedBytes), Array(serial))
                }
                while certificate.next() != nil {}
                return fields
            }
            self.der = der
            self.issuer = issuer
            self.serialNumber = serial
        } catch {
            throw CofferFormatsError(.malformedKey, "not an X.509 certificate: \(error)", underlying: error)
        }
    }

    /// A serial number given as an unsigned big-endian number (as `openssl x509 -serial` prints it in
    /// hex), in the form ``serialNumber`` holds and a keychain query needs: DER INTEGER content, leading
    /// zeros dropped and one zero put back when the top bit is set (`80 01` → `00 80 01`, `00 00 7F` → `7F`).
    public static func serialNumber(unsignedBigEndian bytes: [UInt8]) -> [UInt8] {
        var coder = DER.Serializer()
        // invariant: an unsigned integer of any length serialises, and what swift-asn1 wrote parses back.
        guard (try? coder.serialize(ArraySlice(bytes))) != nil, let node = try? DER.parse(coder.serializedBytes),
              case .primitive(let content) = node.content
        else { return bytes }
        return Array(content)
    }
}
