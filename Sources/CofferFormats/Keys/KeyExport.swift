import CofferCore
public import CofferCrypto
import Crypto
import _CryptoExtras
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension VerifyingKey {
    /// The public key in a format chosen at run time: `.spki` (the default), `.pkcs1Public` (RSA),
    /// `.jwk`, `.appleExternal` (EC and RSA) or `.openSSH`. The file form of the representation
    /// properties: PEM text or DER bytes, and an OpenSSH line with its line break.
    /// - Parameters:
    ///   - format: the format to write.
    ///   - encoding: PEM or DER for the ASN.1 formats; ignored for the others.
    ///   - comment: the comment of an OpenSSH line (default: `coffer-<key id>`).
    /// - Throws: ``CofferFormatsError`` when the format cannot hold this key (an OpenSSH ML-DSA key, say)
    ///   or is a private-key format.
    public func representation(as format: KeyFormat = .spki, encoding: KeyEncoding = .pem, comment: String? = nil) throws(CofferFormatsError) -> [UInt8] {
        switch format {
        case .spki:
            return encoding == .pem ? Array(pemRepresentation.utf8) : derRepresentation
        case .pkcs1Public:
            let der = try pkcs1DERRepresentation
            return encoding == .pem ? Array(PEMArmor.encode(der, label: "RSA PUBLIC KEY").utf8) : der
        case .jwk:
            return try JWKCodec.write(public: self)
        case .appleExternal:
            return try appleExternalRepresentation
        case .openSSH:
            return Array((try openSSHRepresentation(comment: comment) + "\n").utf8)
        case .pkcs8, .encryptedPKCS8, .pkcs1Private, .sec1:
            throw CofferFormatsError(.wrongKeyKind, "\(format) is a private-key format; write the public key as SPKI, PKCS#1, JWK, Apple or OpenSSH")
        }
    }
}

extension SigningKey {
    /// The private key in the clear, in a format chosen at run time: `.pkcs8` (the default),
    /// `.pkcs1Private` (RSA), `.sec1` (EC), `.jwk` or `.appleExternal` (EC and RSA).
    ///
    /// - Warning: the result is the private key itself. Prefer
    ///   ``encryptedPKCS8Representation(password:kdf:encoding:)``; otherwise write it only to a file
    ///   created with mode 0600, and never log it.
    /// - Parameters:
    ///   - format: the format to write; `.encryptedPKCS8` needs a password, so it is refused here.
    ///   - encoding: PEM or DER for the ASN.1 formats; ignored for the others.
    public func representation(as format: KeyFormat = .pkcs8, encoding: KeyEncoding = .pem) throws(CofferFormatsError) -> [UInt8] {
        let der: [UInt8]
        let label: String
        switch format {
        case .pkcs8:
            (der, label) = (try exportablePKCS8, "PRIVATE KEY")
        case .pkcs1Private:
            (der, label) = (try pkcs1DERRepresentation, "RSA PRIVATE KEY")
        case .sec1:
            (der, label) = (try sec1DERRepresentation, "EC PRIVATE KEY")
        case .jwk:
            return try JWKCodec.write(private: self)
        case .appleExternal:
            return try appleExternalRepresentation
        case .encryptedPKCS8:
            throw CofferFormatsError(.invalidArgument, "encrypted PKCS#8 needs a password: use encryptedPKCS8Representation(password:kdf:encoding:)")
        case .spki, .pkcs1Public, .openSSH:
            throw CofferFormatsError(.wrongKeyKind, "\(format) is a public-key format; write verifyingKey instead")
        }
        return encoding == .pem ? Array(PEMArmor.encode(der, label: label).utf8) : der
    }

    /// Refuses a key held outside Coffer (a `CustomSigningKey`) before any private-key format is
    /// written: `.keyNotExportable`, saying so, never an empty or partial result.
    func requireExportable(_ format: String) throws(CofferFormatsError) {
        guard isCustom else { return }
        let refusal = notExportable(format)
        throw CofferFormatsError(.keyNotExportable, refusal.reason, underlying: refusal)
    }

    /// ``pkcs8DERRepresentation``, or the refusal to export a key held outside Coffer.
    var exportablePKCS8: [UInt8] {
        get throws(CofferFormatsError) {
            try requireExportable("as PKCS#8")
            do {
                return try pkcs8DERRepresentation
            } catch {
                throw CofferFormatsError(.keyNotExportable, error.reason, underlying: error)
            }
        }
    }

    /// The private key as password-encrypted PKCS#8 (PBES2 with AES-256-CBC), readable by
    /// `openssl pkey -in FILE -passin …` and by ``init(encryptedPKCS8Representation:password:limits:)``.
    /// - Parameters:
    ///   - password: the password that will open it; not empty.
    ///   - kdf: how the password becomes the key: PBKDF2-HMAC-SHA-256 at 600,000 iterations by default
    ///     (`PasswordKDF/encryptedKeyDefault`), which every OpenSSL reads;
    ///     `PasswordKDF/openSSLCompatibleScrypt` on request. Refused below the floor for new secrets,
    ///     and (`.costTooHigh`) above what a reader with the default `PasswordKDFLimits` opens.
    ///   - encoding: PEM (the default) or DER.
    public func encryptedPKCS8Representation(
        password: [UInt8],
        kdf: PasswordKDF = .encryptedKeyDefault,
        encoding: KeyEncoding = .pem
    ) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("encrypting the private key") { () throws -> [UInt8] in
            guard !password.isEmpty else { throw CofferFormatsError(.invalidArgument, "an empty password protects nothing") }
            var pkcs8 = try exportablePKCS8
            defer { SecretBytes.wipe(&pkcs8) }
            let der = try EncryptedPKCS8.encrypt(pkcs8, password: password, kdf: kdf)
            return encoding == .pem ? Array(PEMArmor.encode(der, label: "ENCRYPTED PRIVATE KEY").utf8) : der
        }
    }
}

/// Writers shared by the representation properties and ``VerifyingKey/representation(as:encoding:comment:)``.
enum KeyExporter {
    static func pkcs1Public(_ key: VerifyingKey) throws(CofferFormatsError) -> [UInt8] {
        guard case .rsa(let rsa) = key.underlying else {
            throw CofferFormatsError(.wrongKeyKind, "PKCS#1 holds RSA keys; this is an \(key.algorithm) key")
        }
        return Array(rsa.pkcs1DERRepresentation)
    }

    static func pkcs1Private(_ key: SigningKey) throws(CofferFormatsError) -> [UInt8] {
        try key.requireExportable("as PKCS#1")
        guard case .rsa(let rsa) = key.underlying else {
            throw CofferFormatsError(.wrongKeyKind, "PKCS#1 holds RSA keys; this is an \(key.algorithm) key")
        }
        return Array(rsa.derRepresentation)
    }
}

extension VerifyingKey {
    /// The bare public key, as libraries that take "raw" keys want it: Ed25519's 32 bytes (RFC 8032),
    /// an EC key's uncompressed point (X9.63: `04 ‖ x ‖ y`), ML-DSA's encoded public key.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for RSA, which has no raw form (use PKCS#1).
    public var rawRepresentation: [UInt8] {
        get throws(CofferFormatsError) {
            switch underlying {
            case .rsa: throw CofferFormatsError(.unsupported, "RSA keys have no raw form; write them as PKCS#1 or SubjectPublicKeyInfo")
            case .p256(let key): Array(key.x963Representation)
            case .p384(let key): Array(key.x963Representation)
            case .p521(let key): Array(key.x963Representation)
            case .ed25519(let key): Array(key.rawRepresentation)
            case .mldsa65(let key): Array(key.rawRepresentation)
            case .mldsa87(let key): Array(key.rawRepresentation)
            }
        }
    }
}

extension SigningKey {
    /// The bare private key: Ed25519's 32-byte seed (RFC 8032), an EC key's scalar, ML-DSA's 32-byte seed.
    /// - Warning: the private key itself; write it only to a file created with mode 0600.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for RSA, which has no raw form (use PKCS#1);
    ///   `.keyNotExportable` for a key held outside Coffer (a token, the Secure Enclave).
    public var rawRepresentation: [UInt8] {
        get throws(CofferFormatsError) {
            switch underlying {
            case .rsa: throw CofferFormatsError(.unsupported, "RSA keys have no raw form; write them as PKCS#1 or PKCS#8")
            case .p256(let key): Array(key.rawRepresentation)
            case .p384(let key): Array(key.rawRepresentation)
            case .p521(let key): Array(key.rawRepresentation)
            case .ed25519(let key): Array(key.rawRepresentation)
            case .mldsa65(let key): Array(key.seedRepresentation)
            case .mldsa87(let key): Array(key.seedRepresentation)
            case .custom:
                let refusal = notExportable("in its raw form")
                throw CofferFormatsError(.keyNotExportable, refusal.reason, underlying: refusal)
            }
        }
    }
}
