public import CofferCrypto

// One vocabulary for key formats, as swift-crypto names them: `init(<format>Representation:)` reads
// exactly that format (no detection), `<format>Representation` writes it, `init(importing:)` detects,
// and `representation(as:encoding:)` writes a format chosen at run time (a command-line flag).

extension VerifyingKey {
    /// Reads SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`), as `openssl pkey -pubout` writes it.
    /// - Parameters:
    ///   - pemRepresentation: the PEM text; text around the block is ignored.
    ///   - allowingLegacyRSA: accept 1024-bit RSA keys. - Warning: only to verify old signatures.
    /// - Throws: ``CofferFormatsError`` for another PEM label or a malformed key.
    public init(pemRepresentation: String, allowingLegacyRSA: Bool = false) throws(CofferFormatsError) {
        let der = try KeyImporter.pemBody(pemRepresentation, labels: ["PUBLIC KEY"])
        self = try KeyImporter.decode(der, as: .spki, context: .init(allowingLegacyRSA: allowingLegacyRSA)).requirePublic(.spki)
    }

    /// Reads an RSA public key in PKCS#1 DER (`RSAPublicKey`).
    /// - Parameters:
    ///   - pkcs1DERRepresentation: the DER bytes.
    ///   - allowingLegacyRSA: accept 1024-bit RSA keys. - Warning: only to verify old signatures.
    public init(pkcs1DERRepresentation: [UInt8], allowingLegacyRSA: Bool = false) throws(CofferFormatsError) {
        try KeyImporter.checkSize(pkcs1DERRepresentation)
        self = try KeyImporter.decode(pkcs1DERRepresentation, as: .pkcs1Public, context: .init(allowingLegacyRSA: allowingLegacyRSA))
            .requirePublic(.pkcs1Public)
    }

    /// Reads a public JSON Web Key (RFC 7517: RSA, EC, OKP Ed25519, and ML-DSA as the AKP draft names it).
    /// - Parameters:
    ///   - jwkRepresentation: the JSON object.
    ///   - allowingLegacyRSA: accept 1024-bit RSA keys. - Warning: only to verify old signatures.
    /// - Throws: ``CofferFormatsError`` `.wrongKeyKind` for a private JWK (read it as a `SigningKey`).
    public init(jwkRepresentation: String, allowingLegacyRSA: Bool = false) throws(CofferFormatsError) {
        try KeyImporter.checkSize(Array(jwkRepresentation.utf8))
        self = try JWKCodec.read(jwkRepresentation.trimmingASCIIWhitespace, allowingLegacyRSA: allowingLegacyRSA).requirePublicKey()
    }

    /// Reads Apple's external representation of a public key (`SecKeyCopyExternalRepresentation`): the
    /// ANSI X9.63 point of an EC key, or PKCS#1 DER of an RSA key.
    public init(appleExternalRepresentation: [UInt8]) throws(CofferFormatsError) {
        self = try KeyImporter.appleExternal(appleExternalRepresentation, keyClass: .publicKey).requirePublic(.appleExternal)
    }

    /// Reads an OpenSSH public-key line (`ssh-ed25519 AAAA… comment`, RSA and ECDSA too).
    /// - Parameters:
    ///   - openSSHRepresentation: the line, as in `id_ed25519.pub` or `authorized_keys`.
    ///   - allowingLegacyRSA: accept 1024-bit RSA keys. - Warning: only to verify old signatures.
    public init(openSSHRepresentation: String, allowingLegacyRSA: Bool = false) throws(CofferFormatsError) {
        try KeyImporter.checkSize(Array(openSSHRepresentation.utf8))
        self = try OpenSSHCodec.read(openSSHRepresentation.trimmingASCIIWhitespace, allowingLegacyRSA: allowingLegacyRSA).requirePublicKey()
    }

    /// The RSA public key in PKCS#1 DER (`RSAPublicKey`).
    /// - Throws: ``CofferFormatsError`` `.wrongKeyKind` for a key that is not RSA.
    public var pkcs1DERRepresentation: [UInt8] {
        get throws(CofferFormatsError) { try KeyExporter.pkcs1Public(self) }
    }

    /// The public key as a JSON Web Key.
    /// - Throws: ``CofferFormatsError`` for a key JWK cannot hold.
    public var jwkRepresentation: String {
        get throws(CofferFormatsError) { String(decoding: try JWKCodec.write(public: self), as: UTF8.self) }
    }

    /// Apple's external representation (`SecKeyCreateWithData` reads it): the X9.63 point of an EC key,
    /// PKCS#1 DER of an RSA key.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for Ed25519 and ML-DSA, which Apple's SecKey lacks.
    public var appleExternalRepresentation: [UInt8] {
        get throws(CofferFormatsError) { try AppleCodec.publicBytes(self) }
    }

    /// The OpenSSH public-key line, without a line break, commented with `comment` (by default
    /// `coffer-<key id>`).
    /// - Throws: ``CofferFormatsError`` for a key OpenSSH cannot hold (ML-DSA).
    public func openSSHRepresentation(comment: String? = nil) throws(CofferFormatsError) -> String {
        try OpenSSHCodec.write(self, comment: comment ?? "coffer-\(fingerprint.keyID)")
    }
}

extension SigningKey {
    /// Reads an unencrypted private key in PEM: PKCS#8 (`PRIVATE KEY`), PKCS#1 (`RSA PRIVATE KEY`) or
    /// SEC1 (`EC PRIVATE KEY`), as swift-crypto's own `init(pemRepresentation:)` reads them.
    /// - Throws: ``CofferFormatsError`` for another label (an encrypted key needs
    ///   ``init(encryptedPKCS8Representation:password:limits:)``) or a malformed key.
    public init(pemRepresentation: String) throws(CofferFormatsError) {
        let block = try KeyImporter.pemBlock(pemRepresentation, labels: ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"])
        let format: KeyFormat = switch block.label {
        case "RSA PRIVATE KEY": .pkcs1Private
        case "EC PRIVATE KEY": .sec1
        default: .pkcs8
        }
        self = try KeyImporter.decode(block.der, as: format, context: .init()).requireSigning(format)
    }

    /// Reads an RSA private key in PKCS#1 DER (`RSAPrivateKey`).
    public init(pkcs1DERRepresentation: [UInt8]) throws(CofferFormatsError) {
        try KeyImporter.checkSize(pkcs1DERRepresentation)
        self = try KeyImporter.decode(pkcs1DERRepresentation, as: .pkcs1Private, context: .init()).requireSigning(.pkcs1Private)
    }

    /// Reads an EC private key in SEC1 DER (`ECPrivateKey`, RFC 5915).
    public init(sec1DERRepresentation: [UInt8]) throws(CofferFormatsError) {
        try KeyImporter.checkSize(sec1DERRepresentation)
        self = try KeyImporter.decode(sec1DERRepresentation, as: .sec1, context: .init()).requireSigning(.sec1)
    }

    /// Reads a password-encrypted PKCS#8 key (PBES2), in PEM (`ENCRYPTED PRIVATE KEY`) or DER.
    /// - Parameters:
    ///   - encryptedPKCS8Representation: the PEM text's bytes or the DER.
    ///   - password: the password that opens it.
    ///   - limits: the most work the key's KDF parameters may ask for.
    /// - Throws: ``CofferFormatsError`` `.wrongPassword`, `.costTooHigh`, `.unsupported` or `.malformedKey`.
    public init(encryptedPKCS8Representation: [UInt8], password: [UInt8], limits: PasswordKDFLimits = PasswordKDFLimits()) throws(CofferFormatsError) {
        try KeyImporter.checkSize(encryptedPKCS8Representation)
        var der = encryptedPKCS8Representation
        if encryptedPKCS8Representation.first != 0x30 {
            der = try KeyImporter.pemBody(String(decoding: encryptedPKCS8Representation, as: UTF8.self), labels: ["ENCRYPTED PRIVATE KEY"])
        }
        let context = KeyImporter.Context(password: { password }, limits: limits)
        self = try KeyImporter.decode(der, as: .encryptedPKCS8, context: context).requireSigning(.encryptedPKCS8)
    }

    /// Reads a private JSON Web Key (RFC 7517 with `d`; ML-DSA's seed as the AKP draft names it).
    /// - Throws: ``CofferFormatsError`` `.wrongKeyKind` for a public JWK.
    public init(jwkRepresentation: String) throws(CofferFormatsError) {
        try KeyImporter.checkSize(Array(jwkRepresentation.utf8))
        self = try JWKCodec.read(jwkRepresentation.trimmingASCIIWhitespace, allowingLegacyRSA: false).requireSigningKey()
    }

    /// Reads Apple's external representation of a private key: X9.63 `04 ‖ X ‖ Y ‖ K` for EC, PKCS#1 DER
    /// for RSA.
    public init(appleExternalRepresentation: [UInt8]) throws(CofferFormatsError) {
        self = try KeyImporter.appleExternal(appleExternalRepresentation, keyClass: .privateKey).requireSigning(.appleExternal)
    }

    /// The private key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    ///
    /// - Warning: the private key in the clear. Prefer
    ///   ``encryptedPKCS8Representation(password:kdf:encoding:)``; otherwise write it only to a file
    ///   created with mode 0600, and never log it.
    /// - Throws: ``CofferFormatsError`` `.keyNotExportable` for a key held outside Coffer (a token, the
    ///   Secure Enclave).
    public var pemRepresentation: String {
        get throws(CofferFormatsError) { PEMArmor.encode(try exportablePKCS8, label: "PRIVATE KEY") }
    }

    /// The RSA private key in PKCS#1 DER. - Warning: the private key in the clear.
    /// - Throws: ``CofferFormatsError`` `.wrongKeyKind` for a key that is not RSA.
    public var pkcs1DERRepresentation: [UInt8] {
        get throws(CofferFormatsError) { try KeyExporter.pkcs1Private(self) }
    }

    /// The EC private key in SEC1 DER. - Warning: the private key in the clear.
    /// - Throws: ``CofferFormatsError`` `.wrongKeyKind` for a key that is not ECDSA.
    public var sec1DERRepresentation: [UInt8] {
        get throws(CofferFormatsError) { try SEC1Codec.write(self) }
    }

    /// The private key as a JSON Web Key. - Warning: the private key in the clear.
    public var jwkRepresentation: String {
        get throws(CofferFormatsError) { String(decoding: try JWKCodec.write(private: self), as: UTF8.self) }
    }

    /// Apple's external representation of the private key. - Warning: the private key in the clear.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for Ed25519 and ML-DSA.
    public var appleExternalRepresentation: [UInt8] {
        get throws(CofferFormatsError) { try AppleCodec.privateBytes(self) }
    }
}

extension ImportedKey.Key {
    func requirePublic(_ format: KeyFormat) throws(CofferFormatsError) -> VerifyingKey {
        try ImportedKey(key: self, format: format, encoding: .der).requirePublicKey()
    }

    func requireSigning(_ format: KeyFormat) throws(CofferFormatsError) -> SigningKey {
        try ImportedKey(key: self, format: format, encoding: .der).requireSigningKey()
    }
}

extension KeyImporter {
    /// The one block of PEM text with one of `labels`, decoded.
    static func pemBlock(_ text: String, labels: Set<String>) throws(CofferFormatsError) -> PEMBlock {
        try checkSize(Array(text.utf8))
        let blocks = try PEMBlock.blocks(in: text).filter { $0.label != "EC PARAMETERS" }
        guard let block = blocks.first else { throw CofferFormatsError(.malformedKey, "found no complete PEM block") }
        guard labels.contains(block.label), !block.hasHeaders else {
            throw CofferFormatsError(
                .malformedKey,
                "expected a PEM block labelled \(labels.sorted().map { "'\($0)'" }.joined(separator: " or ")), found '\(block.label)'\(block.hasHeaders ? " with RFC 1421 headers" : "")"
            )
        }
        return block
    }

    /// Apple's external representation of `keyClass`: PKCS#1 DER for RSA, an X9.63 point otherwise.
    static func appleExternal(_ bytes: [UInt8], keyClass: AppleKeyClass) throws(CofferFormatsError) -> ImportedKey.Key {
        try checkSize(bytes)
        if bytes.first == 0x30 {
            return try decode(bytes, as: keyClass == .publicKey ? .pkcs1Public : .pkcs1Private, context: .init())
        }
        guard let key = try AppleCodec.read(bytes, keyClass: keyClass) else {
            throw CofferFormatsError(.malformedKey, "found \(bytes.count) bytes that are not an X9.63 EC key or PKCS#1 RSA key")
        }
        return key
    }

    static func pemBody(_ text: String, labels: Set<String>) throws(CofferFormatsError) -> [UInt8] {
        try pemBlock(text, labels: labels).der
    }
}
