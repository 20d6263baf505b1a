public import CofferCrypto
import CofferCore
import Crypto

/// Anyone with a password: its stanza (scrypt, type 1, or PBKDF2-HMAC-SHA-256, type 2) wraps the file
/// key under a key the password derives, and stands alone in its file (age's scrypt recipient).
public struct PasswordRecipient: FileKeyRecipient, CustomStringConvertible {
    let password: [UInt8]
    /// How the password becomes the key-encryption key.
    public let kdf: PasswordKDF

    /// A recipient for `password` stretched with `kdf`: at most the cost a reader with the default
    /// `PasswordKDFLimits` opens (scrypt N = 2^19 at r = 8, p = 1, or the same work split otherwise;
    /// 2,000,000 PBKDF2 iterations); wrapping refuses more (`.costTooHigh`) and an empty password.
    public init(password: [UInt8], kdf: PasswordKDF = .default) {
        self.password = password
        self.kdf = kdf
    }

    /// A password is the only way to open its file.
    public var standsAlone: Bool { true }

    /// `nil`: writing needs the password itself.
    public var publicKeyInfo: [UInt8]? { nil }

    /// "PasswordRecipient(<kdf>)": never the password.
    public var description: String { "PasswordRecipient(\(kdf))" }

    /// One scrypt or PBKDF2 stanza with a fresh 16-byte salt.
    /// - Throws: ``CofferFormatsError`` `.invalidArgument` for an empty password or parameters the format
    ///   cannot record, `.costTooHigh` above what a default reader opens.
    public func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza] {
        guard !password.isEmpty else { throw CofferFormatsError(.invalidArgument, "an empty password protects nothing") }
        let salt = try SecureRandom.bytes(count: 16)
        let parameters: [UInt8]
        let type: UInt8
        switch kdf {
        case .scrypt(let logN, let r, let p):
            guard (10...30).contains(logN), (1...255).contains(r), (1...255).contains(p) else {
                throw CofferFormatsError(.invalidArgument, "expected scrypt log2 N from 10 to 30 and r, p from 1 to 255")
            }
            (type, parameters) = (ScryptStanza.type, salt + [UInt8(logN), UInt8(r), UInt8(p)])
        case .pbkdf2(let prf, let iterations):
            guard prf == .hmacSHA256, iterations <= Int(UInt32.max) else {
                throw CofferFormatsError(.invalidArgument, "a Coffer file records PBKDF2-HMAC-SHA256 up to \(UInt32.max) iterations; found \(kdf)")
            }
            (type, parameters) = (PBKDF2Stanza.type, salt + BigEndian.bytes(UInt32(iterations)))
        }
        let kek = try kdf.deriveForWriting(password: password, salt: salt)
        return [try KeyWrap.seal(fileKey, under: kek, type: type, parameters: parameters)]
    }

    static let scryptRules = StanzaRules(type: ScryptStanza.type, standsAlone: true, validate: { body throws(CofferFormatsError) in
        _ = try ScryptStanza(body)
    }, summary: { body in (try? ScryptStanza(body))?.summary ?? "password, scrypt (malformed)" })

    static let pbkdf2Rules = StanzaRules(type: PBKDF2Stanza.type, standsAlone: true, validate: { body throws(CofferFormatsError) in
        _ = try PBKDF2Stanza(body)
    }, summary: { body in (try? PBKDF2Stanza(body)).map { "password, PBKDF2-HMAC-SHA-256, \($0.iterations) iterations" } ?? "password, PBKDF2 (malformed)" })
}

/// The password a file was encrypted with (its UTF-8 bytes): opens a scrypt or PBKDF2 stanza, after
/// checking the stanza's cost against the reader's limits and before deriving anything.
public struct PasswordIdentity: FileKeyIdentity, CustomStringConvertible {
    let password: [UInt8]

    /// The identity of `password`.
    public init(password: [UInt8]) { self.password = password }

    /// `nil`: a password is shared by whoever writes and whoever reads.
    public var publicKeyInfo: [UInt8]? { nil }

    /// "PasswordIdentity(…)": never the password.
    public var description: String { "PasswordIdentity(…)" }

    /// The file key from the header's password stanza.
    /// - Throws: `.costTooHigh` for a cost above `limits` (nothing derived), `.malformedCiphertext` for
    ///   parameters no KDF takes, ``CofferEncryption/authenticationFailure`` for a wrong password.
    public func unwrap(_ stanzas: [EncryptedFileHeader.Stanza], limits: PasswordKDFLimits) throws -> FileKey? {
        // A password stanza stands alone (the header parser enforces it): only the first can be one.
        guard let stanza = stanzas.first else { return nil }
        let kdf: PasswordKDF
        let salt: [UInt8]
        switch stanza.type {
        case ScryptStanza.type:
            let body = try ScryptStanza(stanza.body)
            (kdf, salt) = (body.kdf, body.salt)
        case PBKDF2Stanza.type:
            let body = try PBKDF2Stanza(stanza.body)
            (kdf, salt) = (.pbkdf2(iterations: Int(body.iterations)), body.salt)
        default:
            return nil
        }
        let kek = try kdf.deriveForReading("the file", password: password, salt: salt, limits: limits, malformed: .malformedCiphertext)
        guard let fileKey = KeyWrap.open(stanza, under: kek) else { throw CofferEncryption.authenticationFailure }
        return fileKey
    }

    /// "the file is not encrypted with a password; it needs …" (the first stanza's summary).
    public func noMatchingStanza(in stanzas: [EncryptedFileHeader.Stanza]) -> CofferFormatsError {
        CofferFormatsError(.noMatchingKey, "the file is not encrypted with a password; it needs \(stanzas.first?.summary ?? "a key")")
    }
}

/// Type 1's body: salt (16), log2 N, r, p (1 each), wrapped key (48).
struct ScryptStanza {
    static let type: UInt8 = 1
    let salt: [UInt8]
    let logN: UInt8
    let r: UInt8
    let p: UInt8

    init(_ body: [UInt8]) throws(CofferFormatsError) {
        try EncryptedFileHeader.Stanza.requireLength(body, 67, "scrypt")
        (salt, logN, r, p) = (Array(body[0..<16]), body[16], body[17], body[18])
    }

    var kdf: PasswordKDF { .scrypt(logN: Int(logN), r: Int(r), p: Int(p)) }

    var summary: String {
        "password, scrypt N=2^\(logN) r=\(r) p=\(p) (\(kdf.memoryCost.map { "\($0 >> 10) KiB" } ?? "an impossible amount") of memory)"
    }
}

/// Type 2's body: salt (16), iterations (4, big-endian), wrapped key (48).
struct PBKDF2Stanza {
    static let type: UInt8 = 2
    let salt: [UInt8]
    let iterations: UInt32

    init(_ body: [UInt8]) throws(CofferFormatsError) {
        try EncryptedFileHeader.Stanza.requireLength(body, 68, "PBKDF2")
        (salt, iterations) = (Array(body[0..<16]), BigEndian.uint32(body[16..<20]))
    }
}
