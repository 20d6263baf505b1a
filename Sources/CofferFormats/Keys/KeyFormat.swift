/// The encodings of keys Coffer reads and writes, named as people meet them.
public enum KeyFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// SubjectPublicKeyInfo (RFC 5280): `-----BEGIN PUBLIC KEY-----` or its DER.
    case spki
    /// PKCS#8 private key (RFC 5208/5958): `-----BEGIN PRIVATE KEY-----` or its DER.
    case pkcs8
    /// Password-encrypted PKCS#8 (PBES2, RFC 8018): `-----BEGIN ENCRYPTED PRIVATE KEY-----` or its DER.
    case encryptedPKCS8
    /// RSA private key, PKCS#1 (RFC 8017): `-----BEGIN RSA PRIVATE KEY-----` or its DER.
    case pkcs1Private
    /// RSA public key, PKCS#1: `-----BEGIN RSA PUBLIC KEY-----` or its DER.
    case pkcs1Public
    /// EC private key, SEC 1 (RFC 5915): `-----BEGIN EC PRIVATE KEY-----` or its DER.
    case sec1
    /// JSON Web Key (RFC 7517/7518/8037).
    case jwk
    /// The bytes of Apple's `SecKeyCopyExternalRepresentation`: PKCS#1 DER for RSA, `04‖X‖Y` for EC
    /// public keys, `04‖X‖Y‖K` for EC private keys.
    case appleExternal
    /// An OpenSSH public-key line (`ssh-ed25519 AAAA… comment`).
    case openSSH

    /// How the format is named in messages: "PKCS#8", "SEC1 (EC PRIVATE KEY)"…
    public var description: String {
        switch self {
        case .spki: "SubjectPublicKeyInfo"
        case .pkcs8: "PKCS#8"
        case .encryptedPKCS8: "encrypted PKCS#8"
        case .pkcs1Private: "PKCS#1 RSA private key"
        case .pkcs1Public: "PKCS#1 RSA public key"
        case .sec1: "SEC1 EC private key"
        case .jwk: "JWK"
        case .appleExternal: "Apple external representation"
        case .openSSH: "OpenSSH public key"
        }
    }
}

/// Text or binary.
public enum KeyEncoding: String, Sendable, Hashable {
    /// RFC 7468 PEM text (or JSON, or an OpenSSH line, for the formats that are text by nature).
    case pem
    /// Binary DER (or raw bytes, for Apple's representation).
    case der
}

/// What a caller says about Apple external-representation bytes, whose length alone can be ambiguous
/// (97 bytes are a P-384 public key or a P-256 private key). Mirrors `kSecAttrKeyClass`.
public enum AppleKeyClass: String, Sendable, Hashable, CaseIterable {
    /// A public key.
    case publicKey = "public"
    /// A private key.
    case privateKey = "private"
}
