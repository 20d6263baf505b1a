package import SwiftASN1

/// Object identifiers Coffer reads and writes in key structures.
package enum KeyOID {
    package static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
    package static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]
    package static let secp256r1: ASN1ObjectIdentifier = [1, 2, 840, 10045, 3, 1, 7]
    package static let secp384r1: ASN1ObjectIdentifier = [1, 3, 132, 0, 34]
    package static let secp521r1: ASN1ObjectIdentifier = [1, 3, 132, 0, 35]
    package static let ed25519: ASN1ObjectIdentifier = [1, 3, 101, 112]
    package static let mldsa44: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 3, 17]
    package static let mldsa65: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 3, 18]
    package static let mldsa87: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 3, 19]
}

/// `AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }` (RFC 5280).
package struct AlgorithmIdentifier: DERImplicitlyTaggable, Hashable {
    package static var defaultIdentifier: ASN1Identifier { .sequence }

    package var algorithm: ASN1ObjectIdentifier
    package var parameters: ASN1Any?

    package init(algorithm: ASN1ObjectIdentifier, parameters: ASN1Any? = nil) {
        self.algorithm = algorithm
        self.parameters = parameters
    }

    package init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let algorithm = try ASN1ObjectIdentifier(derEncoded: &nodes)
            let parameters = nodes.next().map { ASN1Any(derEncoded: $0) }
            return AlgorithmIdentifier(algorithm: algorithm, parameters: parameters)
        }
    }

    package func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(algorithm)
            if let parameters { try coder.serialize(parameters) }
        }
    }
}

/// `SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }`.
package struct SubjectPublicKeyInfo: DERImplicitlyTaggable {
    package static var defaultIdentifier: ASN1Identifier { .sequence }

    package var algorithm: AlgorithmIdentifier
    package var key: ASN1BitString

    package init(algorithm: AlgorithmIdentifier, key: [UInt8]) {
        self.algorithm = algorithm
        self.key = ASN1BitString(bytes: key[...])
    }

    package init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let algorithm = try AlgorithmIdentifier(derEncoded: &nodes)
            let key = try ASN1BitString(derEncoded: &nodes)
            return SubjectPublicKeyInfo(algorithm: algorithm, bitString: key)
        }
    }

    private init(algorithm: AlgorithmIdentifier, bitString: ASN1BitString) {
        self.algorithm = algorithm
        self.key = bitString
    }

    package func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(algorithm)
            try coder.serialize(key)
        }
    }
}

/// `OneAsymmetricKey` (RFC 5958, PKCS#8 v1/v2), keeping the fields Coffer uses:
/// `SEQUENCE { version INTEGER, privateKeyAlgorithm AlgorithmIdentifier, privateKey OCTET STRING,
/// attributes [0] IMPLICIT … OPTIONAL, publicKey [1] IMPLICIT BIT STRING OPTIONAL }`.
package struct OneAsymmetricKey: DERImplicitlyTaggable {
    package static var defaultIdentifier: ASN1Identifier { .sequence }

    package var version: Int
    package var algorithm: AlgorithmIdentifier
    package var privateKey: ASN1OctetString

    package init(algorithm: AlgorithmIdentifier, privateKey: [UInt8]) {
        self.version = 0
        self.algorithm = algorithm
        self.privateKey = ASN1OctetString(contentBytes: privateKey[...])
    }

    package init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 || version == 1 else {
                throw ASN1Error.invalidASN1Object(reason: "unsupported PKCS#8 version \(version)")
            }
            let algorithm = try AlgorithmIdentifier(derEncoded: &nodes)
            let privateKey = try ASN1OctetString(derEncoded: &nodes)
            // Attributes and the optional public key are allowed and ignored; the public key is
            // always recomputed from the private one.
            while nodes.next() != nil {}
            var key = OneAsymmetricKey(algorithm: algorithm, privateKey: Array(privateKey.bytes))
            key.version = version
            return key
        }
    }

    package func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(version)
            try coder.serialize(algorithm)
            try coder.serialize(privateKey)
        }
    }
}

/// `ML-DSA-PrivateKey ::= CHOICE { seed [0] IMPLICIT OCTET STRING (SIZE (32)), expandedKey OCTET STRING,
/// both SEQUENCE { seed OCTET STRING, expandedKey OCTET STRING } }` (RFC 9881 §6). Coffer writes the
/// seed form and reads the seed from the seed or both forms.
enum MLDSAPrivateKeyEncoding {
    static let seedTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    static func encode(seed: [UInt8]) throws -> [UInt8] {
        var coder = DER.Serializer()
        try ASN1OctetString(contentBytes: seed[...]).serialize(into: &coder, withIdentifier: seedTag)
        return coder.serializedBytes
    }

    static func seed(from bytes: [UInt8]) throws -> [UInt8] {
        let node = try DER.parse(bytes)
        if node.identifier == seedTag {
            return Array(try ASN1OctetString(derEncoded: node, withIdentifier: seedTag).bytes)
        }
        if node.identifier == .sequence {
            return try DER.sequence(node, identifier: .sequence) { nodes in
                let seed = try ASN1OctetString(derEncoded: &nodes)
                _ = try ASN1OctetString(derEncoded: &nodes)
                return Array(seed.bytes)
            }
        }
        throw ASN1Error.invalidASN1Object(reason: "an ML-DSA private key holding only the expanded key (no seed) is not supported")
    }
}
