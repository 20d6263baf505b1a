import CofferCrypto
import SwiftASN1

/// Object identifiers of the password-based encryption Coffer reads and writes (RFC 8018, RFC 7914).
enum PBEOID {
    static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 5, 13]
    static let pbkdf2: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 5, 12]
    static let scrypt: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11591, 4, 11]
    static let hmacWithSHA1: ASN1ObjectIdentifier = [1, 2, 840, 113549, 2, 7]
    static let hmacWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 113549, 2, 9]
    static let hmacWithSHA512: ASN1ObjectIdentifier = [1, 2, 840, 113549, 2, 11]
    static let aes256CBC: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 1, 42]
    static let aes128CBC: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 1, 2]

    /// The identifier PBKDF2's parameters record for a pseudorandom function.
    static func hmac(_ prf: PasswordKDF.PseudorandomFunction) -> ASN1ObjectIdentifier {
        switch prf {
        case .hmacSHA1: hmacWithSHA1
        case .hmacSHA256: hmacWithSHA256
        case .hmacSHA512: hmacWithSHA512
        }
    }

    /// The pseudorandom function an identifier names, or nil for one Coffer does not read.
    static func pseudorandomFunction(_ identifier: ASN1ObjectIdentifier) -> PasswordKDF.PseudorandomFunction? {
        switch identifier {
        case hmacWithSHA1: .hmacSHA1
        case hmacWithSHA256: .hmacSHA256
        case hmacWithSHA512: .hmacSHA512
        default: nil
        }
    }
}

/// `RSAPrivateKey` (RFC 8017 §A.1.2), two-prime only.
struct RSAPrivateKeyStructure: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var modulus: ArraySlice<UInt8>
    var publicExponent: ArraySlice<UInt8>
    var privateExponent: ArraySlice<UInt8>
    var prime1: ArraySlice<UInt8>
    var prime2: ArraySlice<UInt8>
    var exponent1: ArraySlice<UInt8>
    var exponent2: ArraySlice<UInt8>
    var coefficient: ArraySlice<UInt8>

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 else {
                throw ASN1Error.invalidASN1Object(reason: "multi-prime RSA keys (version \(version)) are not supported")
            }
            return try RSAPrivateKeyStructure(
                modulus: ArraySlice<UInt8>(derEncoded: &nodes),
                publicExponent: ArraySlice<UInt8>(derEncoded: &nodes),
                privateExponent: ArraySlice<UInt8>(derEncoded: &nodes),
                prime1: ArraySlice<UInt8>(derEncoded: &nodes),
                prime2: ArraySlice<UInt8>(derEncoded: &nodes),
                exponent1: ArraySlice<UInt8>(derEncoded: &nodes),
                exponent2: ArraySlice<UInt8>(derEncoded: &nodes),
                coefficient: ArraySlice<UInt8>(derEncoded: &nodes)
            )
        }
    }

    init(
        modulus: ArraySlice<UInt8>, publicExponent: ArraySlice<UInt8>, privateExponent: ArraySlice<UInt8>,
        prime1: ArraySlice<UInt8>, prime2: ArraySlice<UInt8>, exponent1: ArraySlice<UInt8>,
        exponent2: ArraySlice<UInt8>, coefficient: ArraySlice<UInt8>
    ) {
        self.modulus = modulus
        self.publicExponent = publicExponent
        self.privateExponent = privateExponent
        self.prime1 = prime1
        self.prime2 = prime2
        self.exponent1 = exponent1
        self.exponent2 = exponent2
        self.coefficient = coefficient
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(0)
            for value in [modulus, publicExponent, privateExponent, prime1, prime2, exponent1, exponent2, coefficient] {
                try coder.serialize(value)
            }
        }
    }
}

/// `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }` (RFC 8017 §A.1.1).
struct RSAPublicKeyStructure: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var modulus: ArraySlice<UInt8>
    var publicExponent: ArraySlice<UInt8>

    init(modulus: ArraySlice<UInt8>, publicExponent: ArraySlice<UInt8>) {
        self.modulus = modulus
        self.publicExponent = publicExponent
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            try RSAPublicKeyStructure(modulus: ArraySlice<UInt8>(derEncoded: &nodes), publicExponent: ArraySlice<UInt8>(derEncoded: &nodes))
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(modulus)
            try coder.serialize(publicExponent)
        }
    }
}

/// `ECPrivateKey` (SEC 1 §C.4, RFC 5915): `SEQUENCE { version INTEGER (1), privateKey OCTET STRING,
/// parameters [0] EXPLICIT OBJECT IDENTIFIER OPTIONAL, publicKey [1] EXPLICIT BIT STRING OPTIONAL }`.
struct ECPrivateKeyStructure: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }
    static let parametersTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
    static let publicKeyTag = ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)

    var privateKey: [UInt8]
    var curve: ASN1ObjectIdentifier?
    var publicKey: [UInt8]?

    init(privateKey: [UInt8], curve: ASN1ObjectIdentifier?, publicKey: [UInt8]?) {
        self.privateKey = privateKey
        self.curve = curve
        self.publicKey = publicKey
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 1 else { throw ASN1Error.invalidASN1Object(reason: "SEC1 version must be 1") }
            let privateKey = try ASN1OctetString(derEncoded: &nodes)
            let curve = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                try ASN1ObjectIdentifier(derEncoded: $0)
            }
            let publicKey = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) {
                try ASN1BitString(derEncoded: $0)
            }
            return ECPrivateKeyStructure(privateKey: Array(privateKey.bytes), curve: curve, publicKey: publicKey.map { Array($0.bytes) })
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(1)
            try coder.serialize(ASN1OctetString(contentBytes: privateKey[...]))
            if let curve { try coder.serialize(curve, explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) }
            if let publicKey {
                try coder.serialize(ASN1BitString(bytes: publicKey[...]), explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific)
            }
        }
    }
}

/// `EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm AlgorithmIdentifier, encryptedData OCTET STRING }`.
struct EncryptedPrivateKeyInfo: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var algorithm: AlgorithmIdentifier
    var encryptedData: [UInt8]

    init(algorithm: AlgorithmIdentifier, encryptedData: [UInt8]) {
        self.algorithm = algorithm
        self.encryptedData = encryptedData
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let algorithm = try AlgorithmIdentifier(derEncoded: &nodes)
            let data = try ASN1OctetString(derEncoded: &nodes)
            return EncryptedPrivateKeyInfo(algorithm: algorithm, encryptedData: Array(data.bytes))
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(algorithm)
            try coder.serialize(ASN1OctetString(contentBytes: encryptedData[...]))
        }
    }
}

/// `PBES2-params ::= SEQUENCE { keyDerivationFunc AlgorithmIdentifier, encryptionScheme AlgorithmIdentifier }`.
struct PBES2Parameters: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var keyDerivation: AlgorithmIdentifier
    var encryption: AlgorithmIdentifier

    init(keyDerivation: AlgorithmIdentifier, encryption: AlgorithmIdentifier) {
        self.keyDerivation = keyDerivation
        self.encryption = encryption
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            try PBES2Parameters(keyDerivation: AlgorithmIdentifier(derEncoded: &nodes), encryption: AlgorithmIdentifier(derEncoded: &nodes))
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(keyDerivation)
            try coder.serialize(encryption)
        }
    }
}

/// `PBKDF2-params ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER, keyLength INTEGER OPTIONAL,
/// prf AlgorithmIdentifier DEFAULT hmacWithSHA1 }`.
struct PBKDF2Parameters: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var salt: [UInt8]
    var iterations: Int
    var keyLength: Int?
    var prf: ASN1ObjectIdentifier

    init(salt: [UInt8], iterations: Int, keyLength: Int?, prf: ASN1ObjectIdentifier) {
        self.salt = salt
        self.iterations = iterations
        self.keyLength = keyLength
        self.prf = prf
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let salt = try ASN1OctetString(derEncoded: &nodes)
            let iterations = try Int(derEncoded: &nodes)
            var keyLength: Int?
            var prf = PBEOID.hmacWithSHA1
            while let node = nodes.next() {
                if node.identifier == .integer {
                    keyLength = try Int(derEncoded: node)
                } else {
                    prf = try AlgorithmIdentifier(derEncoded: node).algorithm
                }
            }
            return PBKDF2Parameters(salt: Array(salt.bytes), iterations: iterations, keyLength: keyLength, prf: prf)
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(ASN1OctetString(contentBytes: salt[...]))
            try coder.serialize(iterations)
            if let keyLength { try coder.serialize(keyLength) }
            try coder.serialize(AlgorithmIdentifier(algorithm: prf, parameters: ASN1Any(erasing: ASN1Null())))
        }
    }
}

/// `scrypt-params ::= SEQUENCE { salt OCTET STRING, costParameter INTEGER, blockSize INTEGER,
/// parallelizationParameter INTEGER, keyLength INTEGER OPTIONAL }` (RFC 7914 §7).
struct ScryptParameters: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var salt: [UInt8]
    var cost: Int
    var blockSize: Int
    var parallelization: Int
    var keyLength: Int?

    init(salt: [UInt8], cost: Int, blockSize: Int, parallelization: Int, keyLength: Int?) {
        self.salt = salt
        self.cost = cost
        self.blockSize = blockSize
        self.parallelization = parallelization
        self.keyLength = keyLength
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let salt = try ASN1OctetString(derEncoded: &nodes)
            let cost = try Int(derEncoded: &nodes)
            let blockSize = try Int(derEncoded: &nodes)
            let parallelization = try Int(derEncoded: &nodes)
            let keyLength = try nodes.next().map { try Int(derEncoded: $0) }
            return ScryptParameters(salt: Array(salt.bytes), cost: cost, blockSize: blockSize, parallelization: parallelization, keyLength: keyLength)
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(ASN1OctetString(contentBytes: salt[...]))
            try coder.serialize(cost)
            try coder.serialize(blockSize)
            try coder.serialize(parallelization)
            if let keyLength { try coder.serialize(keyLength) }
        }
    }
}

/// Serialises a structure; the structures above cannot fail to serialise once built.
func derBytes(_ value: some DERSerializable) -> [UInt8] {
    var coder = DER.Serializer()
    // invariant: every structure here serialises from plain values; nothing input-dependent can fail.
    try? coder.serialize(value)
    return coder.serializedBytes
}
