import CofferCore
public import CofferCrypto
import CofferFormats

/// Signing keys kept as key items and found by application tag, as apps do with
/// `kSecAttrApplicationTag` on Apple platforms.
///
/// ```swift
/// try keychain.add(try SigningKey.generate(.p256), tag: "com.example.app.request-signing")
/// let key = try keychain.signingKey(tag: "com.example.app.request-signing")
/// ```
///
/// The item: class key, key class private, key type `KeychainItem.keyType(for:)` (`rsa`, `ec-p256`,
/// `ec-p384`, `ec-p521`, `ed25519`, `ml-dsa-65`, `ml-dsa-87`), size in bits, application label = the
/// SHA-256 fingerprint of the public key's SubjectPublicKeyInfo, and the PKCS#8 DER of the private key
/// as the sealed secret. In the system keychain (`SystemKeychain`, ``KeychainBackend/privateKeyStorageFormat``)
/// the secret is Apple's external representation instead, as `SecKeyCreateWithData` expects, and only
/// RSA and EC keys can be stored.
extension KeychainBackend {
    /// Stores `key` under `tag`.
    /// - Throws: `.duplicateItem` when a private key with this tag and type exists; the errors of
    ///   ``add(_:secret:accessControl:)``.
    public func add(
        _ key: SigningKey, tag: String, label: String? = nil, accessibility: Accessibility = .whenUnlocked,
        accessControl: AccessControl = .none
    ) throws(KeychainError) {
        let item = KeychainItem.key(
            tag: tag, keyClass: .privateKey, keyType: KeychainItem.keyType(for: key.algorithm), keySizeInBits: KeychainItem.keySize(of: key.algorithm),
            applicationLabel: key.verifyingKey.fingerprint.sha256, label: label, accessibility: accessibility
        )
        var der: [UInt8]
        do {
            der = try key.representation(as: privateKeyStorageFormat == .pkcs8 ? .pkcs8 : .appleExternal, encoding: .der)
        } catch {
            throw KeychainError(.badParameter, "this key cannot be stored: \(error.reason)", underlying: error)
        }
        defer { SecretBytes.wipe(&der) }
        try add(item, secret: der, accessControl: accessControl)
    }

    /// The private key stored under `tag` (the first, if keys of several types share it).
    /// - Parameters:
    ///   - tag: the application tag it was stored under.
    ///   - applicationPassword: for a key stored with one.
    /// - Throws: `.itemNotFound`; `.dataCorrupted` when the stored bytes are not a private key.
    public func signingKey(tag: String, applicationPassword: String? = nil) throws(KeychainError) -> SigningKey {
        var query = KeychainQuery.key(applicationTag: Array(tag.utf8), keyClass: .privateKey)
        query.applicationPassword = applicationPassword
        var der = try secret(matching: query)
        defer { SecretBytes.wipe(&der) }
        if der.starts(with: Array("pkcs11:".utf8)) {
            throw KeychainError(
                .badParameter,
                "the key tagged '\(tag)' is on a hardware token (\(String(decoding: der, as: UTF8.self))); read it with storedSigningKey(tag:) and open it with CofferPKCS11"
            )
        }
        return try signingKey(from: der, tag: tag)
    }

    private func signingKey(from der: [UInt8], tag: String) throws(KeychainError) -> SigningKey {
        do {
            guard let key = try ImportedKey(importing: der, appleKeyClass: .privateKey).signingKey else {
                throw KeychainError(.dataCorrupted, "the key item tagged '\(tag)' holds a public key, not a private one")
            }
            return key
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.dataCorrupted, "the key item tagged '\(tag)' does not hold a readable private key")
        }
    }

    /// Stores a reference to a private key that lives on a hardware token, under `tag`, so that apps find
    /// token keys by tag as they find software keys. The item is a private key item like any other (its
    /// key type, size and application label are those of `publicKey`); its secret is the key's RFC 7512
    /// `pkcs11:` URI, never key material. Read it back with ``storedSigningKey(tag:applicationPassword:)``.
    /// - Throws: `.badParameter` when `uri` is not a `pkcs11:` URI; the errors of ``add(_:secret:accessControl:)``.
    public func addTokenKeyReference(
        _ uri: String, publicKey: VerifyingKey, tag: String, label: String? = nil, accessibility: Accessibility = .whenUnlocked
    ) throws(KeychainError) {
        guard uri.lowercased().hasPrefix("pkcs11:") else {
            throw KeychainError(.badParameter, "a token key reference is a pkcs11: URI (RFC 7512)")
        }
        let item = KeychainItem.key(
            tag: tag, keyClass: .privateKey, keyType: KeychainItem.keyType(for: publicKey.algorithm), keySizeInBits: KeychainItem.keySize(of: publicKey.algorithm),
            applicationLabel: publicKey.fingerprint.sha256, label: label, accessibility: accessibility
        )
        try add(item, secret: Array(uri.utf8), accessControl: .none)
    }

    /// The private key stored under `tag`: a software key, or the `pkcs11:` URI of a key on a token
    /// (``addTokenKeyReference(_:publicKey:tag:label:accessibility:)``), which `CofferPKCS11` opens.
    /// - Throws: `.itemNotFound`; `.dataCorrupted` when the stored bytes are neither.
    public func storedSigningKey(tag: String, applicationPassword: String? = nil) throws(KeychainError) -> StoredSigningKey {
        var query = KeychainQuery.key(applicationTag: Array(tag.utf8), keyClass: .privateKey)
        query.applicationPassword = applicationPassword
        var secret = try secret(matching: query)
        defer { SecretBytes.wipe(&secret) }
        if secret.starts(with: Array("pkcs11:".utf8)) { return .token(uri: String(decoding: secret, as: UTF8.self)) }
        return .software(try signingKey(from: secret, tag: tag))
    }

    /// Deletes the private keys stored under `tag`; returns how many.
    @discardableResult
    public func deleteSigningKey(tag: String) throws(KeychainError) -> Int {
        try delete(matching: .key(applicationTag: Array(tag.utf8), keyClass: .privateKey))
    }
}

/// A private key found by tag: in the keychain, or on a hardware token.
public enum StoredSigningKey: Sendable {
    /// A software key, stored in the keychain.
    case software(SigningKey)
    /// A key on a PKCS #11 token, named by its RFC 7512 URI (open it with `CofferPKCS11`).
    case token(uri: String)
}

extension KeychainItem {
    /// A key item found by application tag: what the signing-key and encryption-key helpers store.
    static func key(
        tag: String, keyClass: KeyClass, keyType: String, keySizeInBits: Int?, applicationLabel: [UInt8], label: String?,
        accessibility: Accessibility
    ) -> KeychainItem {
        var item = KeychainItem.key(
            applicationTag: Array(tag.utf8), keyClass: keyClass, keyType: keyType, keySizeInBits: keySizeInBits, accessibility: accessibility
        )
        item.applicationLabel = applicationLabel
        item.label = label
        return item
    }

    /// The `keyType` Coffer stores for a signing algorithm.
    public static func keyType(for algorithm: KeyAlgorithm) -> String {
        switch algorithm {
        case .rsa: "rsa"
        case .p256: "ec-p256"
        case .p384: "ec-p384"
        case .p521: "ec-p521"
        case .ed25519: "ed25519"
        case .mldsa65: "ml-dsa-65"
        case .mldsa87: "ml-dsa-87"
        }
    }

    /// The key size in bits Keychain Services would report (`kSecAttrKeySizeInBits`); nil for ML-DSA.
    static func keySize(of algorithm: KeyAlgorithm) -> Int? {
        switch algorithm {
        case .rsa(let bits): bits
        case .p256: 256
        case .p384: 384
        case .p521: 521
        case .ed25519: 256
        case .mldsa65, .mldsa87: nil
        }
    }
}
