import CofferCore
import CofferCrypto
import Crypto
import Foundation

/// The keychain's key hierarchy (docs/KEYCHAIN.md, "Keys"):
///
/// - a random 256-bit **master key**, stored only wrapped (AES-256-GCM) under a key derived from the
///   keychain password with scrypt;
/// - one **class key** per accessibility, HKDF-SHA-256 of the master key, so that locking can forget the
///   `whenUnlocked` keys while keeping the `afterFirstUnlock` ones;
/// - each item's secret sealed with AES-256-GCM under its class key, a random nonce, and associated data
///   that binds the keychain, the item's identity, its accessibility and its access-control flags;
/// - items with an application password sealed twice: first under scrypt(application password), then
///   under the class key, so rotation re-seals the outer layer without knowing the application password.
enum KeychainCrypto {
    static let version: UInt8 = 1
    static let nonceSize = 12
    static let tagSize = 16

    /// The parameters and wrapped master key kept in the store's metadata.
    struct Header: Sendable, Equatable {
        var keychainID: [UInt8]
        var scryptLogN: Int
        var scryptR: Int
        var scryptP: Int
        var salt: [UInt8]
        var wrappedMasterKey: [UInt8]

        /// The stored form (docs/KEYCHAIN.md): version(1) ‖ keychain id(16) ‖ logN(1) ‖ r(1) ‖ p(1) ‖
        /// salt(16) ‖ wrapped master key (12 + 32 + 16).
        static let encodedSize = 1 + 16 + 3 + 16 + 60

        /// The password's key-derivation function.
        var kdf: PasswordKDF { .scrypt(logN: scryptLogN, r: scryptR, p: scryptP) }

        var encoded: [UInt8] {
            [KeychainCrypto.version] + keychainID + [UInt8(scryptLogN), UInt8(scryptR), UInt8(scryptP)] + salt + wrappedMasterKey
        }

        init(keychainID: [UInt8], scryptLogN: Int, scryptR: Int, scryptP: Int, salt: [UInt8], wrappedMasterKey: [UInt8]) {
            self.keychainID = keychainID
            self.scryptLogN = scryptLogN
            self.scryptR = scryptR
            self.scryptP = scryptP
            self.salt = salt
            self.wrappedMasterKey = wrappedMasterKey
        }

        /// Reads the stored form. - Throws: `.dataCorrupted` for a wrong size, `.badParameter` for
        /// another version.
        init(encoded bytes: [UInt8]) throws(KeychainError) {
            guard bytes.count == Self.encodedSize else {
                throw KeychainError(.dataCorrupted, "the keychain header is \(bytes.count) bytes, expected \(Self.encodedSize); the file is damaged")
            }
            guard bytes[0] == KeychainCrypto.version else {
                throw KeychainError(.badParameter, "keychain format version \(bytes[0]) is not supported by this Coffer (it reads version 1)")
            }
            self.init(
                keychainID: Array(bytes[1..<17]), scryptLogN: Int(bytes[17]), scryptR: Int(bytes[18]), scryptP: Int(bytes[19]),
                salt: Array(bytes[20..<36]), wrappedMasterKey: Array(bytes[36...])
            )
        }
    }

    /// The key the keychain password derives under `header`'s parameters, after they were checked
    /// against the format's ranges and against `limits` (the header is the file's bytes: whoever can
    /// write the file chooses them).
    static func passwordKey(_ password: [UInt8], header: Header, limits: PasswordKDFLimits) throws(KeychainError) -> SymmetricKey {
        guard (10...22).contains(header.scryptLogN), (1...32).contains(header.scryptR), (1...16).contains(header.scryptP) else {
            throw KeychainError(.dataCorrupted, "the keychain's password parameters are out of range; the file is damaged")
        }
        try checkCost(header.kdf, limits: limits, subject: "the keychain file")
        do {
            return try header.kdf.derive(password: password, salt: header.salt, limits: limits)
        } catch {
            throw KeychainError(.ioFailure, "scrypt failed: \(error.reason)", underlying: error)
        }
    }

    /// The keychain password's scrypt parameters as the header stores them, or `.badParameter` for any
    /// other function or a cost outside what the header accepts (log2 N 10–22, r 1–32, p 1–16).
    static func checkedScrypt(_ kdf: PasswordKDF) throws(KeychainError) -> (logN: Int, r: Int, p: Int) {
        guard case let .scrypt(logN, r, p) = kdf else {
            throw KeychainError(.badParameter, "a keychain password is stretched with scrypt; found \(kdf)")
        }
        guard (10...22).contains(logN), (1...32).contains(r), (1...16).contains(p) else {
            throw KeychainError(.badParameter, "expected scrypt log2 N 10–22, r 1–32, p 1–16 for a keychain; found \(kdf)")
        }
        return (logN, r, p)
    }

    /// `.badParameter` (its underlying error `.costTooHigh`) when `kdf` asks for more work than
    /// `limits` admit: checked before anything is derived.
    static func checkCost(_ kdf: PasswordKDF, limits: PasswordKDFLimits, subject: String) throws(KeychainError) {
        do {
            try limits.check(kdf, subject: subject)
        } catch {
            throw KeychainError(.badParameter, error.reason + " (Keychain.passwordLimits)", underlying: error)
        }
    }

    static func masterKeyAD(_ header: Header) -> [UInt8] {
        Array("coffer-keychain v1 master-key".utf8) + header.keychainID
            + [UInt8(header.scryptLogN), UInt8(header.scryptR), UInt8(header.scryptP)] + header.salt
    }

    /// A new header for `password`: fresh keychain id, salt and master key.
    static func newHeader(password: [UInt8], kdf: PasswordKDF, limits: PasswordKDFLimits) throws(KeychainError) -> (Header, SymmetricKey) {
        let (logN, r, p) = try checkedScrypt(kdf)
        // Never written with a cost that the same limits would refuse to read.
        try checkCost(kdf, limits: limits, subject: "the new keychain password")
        let master = SymmetricKey(size: .bits256)
        var header = Header(
            keychainID: randomBytes(16), scryptLogN: logN, scryptR: r, scryptP: p, salt: randomBytes(16), wrappedMasterKey: []
        )
        header.wrappedMasterKey = try wrap(master, password: password, header: header, limits: limits)
        return (header, master)
    }

    static func wrap(_ master: SymmetricKey, password: [UInt8], header: Header, limits: PasswordKDFLimits) throws(KeychainError) -> [UInt8] {
        let key = try passwordKey(password, header: header, limits: limits)
        return try seal(master.withUnsafeBytes { Array($0) }, key: key, ad: masterKeyAD(header))
    }

    /// The master key, or ``KeychainError/Code/authenticationFailed`` for a wrong password.
    static func unwrap(password: [UInt8], header: Header, limits: PasswordKDFLimits) throws(KeychainError) -> SymmetricKey {
        let key = try passwordKey(password, header: header, limits: limits)
        guard var bytes = try? open(header.wrappedMasterKey, key: key, ad: masterKeyAD(header)), bytes.count == 32 else {
            throw KeychainError(.authenticationFailed, "wrong keychain password")
        }
        defer { SecretBytes.wipe(&bytes) }
        return SymmetricKey(data: bytes)
    }

    static func classKey(master: SymmetricKey, keychainID: [UInt8], accessibility: Accessibility) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master, salt: keychainID,
            info: Array("coffer-keychain v1 class \(accessibility.rawValue)".utf8), outputByteCount: 32
        )
    }

    /// The associated data of an item's outer seal.
    static func itemAD(keychainID: [UInt8], item: KeychainItem) -> [UInt8] {
        var ad = Array("coffer-keychain v1 item".utf8)
        ad += keychainID
        ad += Array(item.accessibility.rawValue.utf8)
        ad.append((item.hasApplicationPassword ? 1 : 0) | (item.requiresUserPresence ? 2 : 0))
        ad += item.identity
        return ad
    }

    /// scrypt cost of application passwords: about 50 ms here, paid on every read of such an item.
    static let applicationPasswordLogN = 15

    /// The inner layer for an application password: salt(16) ‖ logN(1) ‖ nonce ‖ ciphertext ‖ tag.
    static func sealWithApplicationPassword(_ secret: [UInt8], password: String, identity: [UInt8]) throws(KeychainError) -> [UInt8] {
        let salt = randomBytes(16)
        let key = try applicationKey(password, salt: salt, logN: applicationPasswordLogN)
        return salt + [UInt8(applicationPasswordLogN)] + (try seal(secret, key: key, ad: Array("coffer-keychain v1 application-password".utf8) + identity))
    }

    static func openWithApplicationPassword(_ inner: [UInt8], password: String, identity: [UInt8]) throws(KeychainError) -> [UInt8] {
        guard inner.count >= 17 + nonceSize + tagSize, (10...20).contains(Int(inner[16])) else {
            throw KeychainError(.dataCorrupted, "an item's application-password layer is damaged")
        }
        let key = try applicationKey(password, salt: Array(inner[0..<16]), logN: Int(inner[16]))
        guard let secret = try? open(Array(inner[17...]), key: key, ad: Array("coffer-keychain v1 application-password".utf8) + identity) else {
            throw KeychainError(.authenticationFailed, "wrong application password for this item")
        }
        return secret
    }

    private static func applicationKey(_ password: String, salt: [UInt8], logN: Int) throws(KeychainError) -> SymmetricKey {
        do {
            // The layer's log2 N is the file's bytes: within the default limits (Coffer writes 15).
            return try PasswordKDF.scrypt(logN: logN, r: 8, p: 1).derive(password: Array(password.utf8), salt: salt, limits: PasswordKDFLimits())
        } catch {
            throw KeychainError(.ioFailure, "scrypt failed: \(error.reason)", underlying: error)
        }
    }

    /// nonce ‖ ciphertext ‖ tag under a random nonce.
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, ad: [UInt8]) throws(KeychainError) -> [UInt8] {
        // With the default 12-byte nonce `combined` is always present.
        guard let box = try? AES.GCM.seal(plaintext, using: key, authenticating: ad), let combined = box.combined else {
            throw KeychainError(.ioFailure, "AES-GCM could not seal an item")
        }
        return Array(combined)
    }

    /// The plaintext of `nonce ‖ ciphertext ‖ tag`, or ``KeychainError/Code/dataCorrupted``.
    static func open(_ sealed: [UInt8], key: SymmetricKey, ad: [UInt8]) throws(KeychainError) -> [UInt8] {
        guard sealed.count >= nonceSize + tagSize,
              let box = try? AES.GCM.SealedBox(combined: sealed),
              let plaintext = try? AES.GCM.open(box, using: key, authenticating: ad) else {
            throw KeychainError(.dataCorrupted, "an item does not authenticate: the keychain file was changed outside Coffer or is damaged")
        }
        return Array(plaintext)
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return bytes
    }
}
