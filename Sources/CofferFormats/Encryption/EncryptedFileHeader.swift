public import CofferCore
import CofferCrypto

/// The AEAD that seals a Coffer file's segments.
public enum EncryptionCipher: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// AES-256-GCM, the default: hardware-accelerated on every current CPU.
    case aes256GCM = 1
    /// ChaCha20-Poly1305: constant time without AES instructions.
    case chaCha20Poly1305 = 2

    public var description: String {
        switch self {
        case .aes256GCM: "AES-256-GCM"
        case .chaCha20Poly1305: "ChaCha20-Poly1305"
        }
    }
}

/// The parsed header of a Coffer encrypted file (docs/FORMAT-ENCRYPTION.md), readable without any secret.
public struct EncryptedFileHeader: Sendable, Hashable {
    /// One way the file key is wrapped.
    public enum Stanza: Sendable, Hashable {
        /// A password through scrypt (N = 2^logN, r, p) wraps the file key.
        case scrypt(salt: [UInt8], logN: UInt8, r: UInt8, p: UInt8, wrapped: [UInt8])
        /// A password through PBKDF2-HMAC-SHA256 wraps the file key.
        case pbkdf2(salt: [UInt8], iterations: UInt32, wrapped: [UInt8])
        /// A symmetric key, named by its key id, wraps the file key.
        case key(keyID: [UInt8], salt: [UInt8], wrapped: [UInt8])
        /// HPKE to an X25519 recipient, named by its key id, seals the file key.
        case x25519(keyID: [UInt8], encapsulated: [UInt8], sealed: [UInt8])
        /// HPKE to a P-256 recipient, named by its key id, seals the file key.
        case p256(keyID: [UInt8], encapsulated: [UInt8], sealed: [UInt8])

        var type: UInt8 {
            switch self {
            case .scrypt: 1
            case .pbkdf2: 2
            case .key: 3
            case .x25519: 4
            case .p256: 5
            }
        }

        /// The body's fields before the wrapped key.
        var parameters: [UInt8] {
            switch self {
            case .scrypt(let salt, let logN, let r, let p, _): salt + [logN, r, p]
            case .pbkdf2(let salt, let iterations, _): salt + BigEndian.bytes(iterations)
            case .key(let keyID, let salt, _): keyID + salt
            case .x25519(let keyID, let encapsulated, _): keyID + encapsulated
            case .p256(let keyID, let encapsulated, _): keyID + encapsulated
            }
        }

        var wrapped: [UInt8] {
            switch self {
            case .scrypt(_, _, _, _, let wrapped), .pbkdf2(_, _, let wrapped), .key(_, _, let wrapped),
                .x25519(_, _, let wrapped), .p256(_, _, let wrapped):
                wrapped
            }
        }

        var body: [UInt8] { parameters + wrapped }

        /// The length of every wrapped file key: 32 bytes and a 16-byte tag.
        static let wrappedLength = 48

        /// The additional data the wrap authenticates: type, length and the parameters (for recipients,
        /// type and key id). Computable before the wrap exists, since its length is fixed.
        var additionalData: [UInt8] {
            switch self {
            case .x25519(let keyID, _, _), .p256(let keyID, _, _):
                return [type] + keyID
            default:
                return [type] + bigEndian16(parameters.count + Self.wrappedLength) + parameters
            }
        }

        var encoded: [UInt8] {
            let body = self.body
            return [type] + bigEndian16(body.count) + body
        }

        /// Whether the stanza is for a password, a key, or a recipient (a file holds one kind).
        var kind: Int {
            switch self {
            case .scrypt, .pbkdf2: 0
            case .key: 1
            case .x25519, .p256: 2
            }
        }

        /// A line for `coffer inspect`.
        public var summary: String {
            switch self {
            case .scrypt(_, let logN, let r, let p, _):
                "password, scrypt N=2^\(logN) r=\(r) p=\(p) (\(PasswordKDF.scrypt(logN: Int(logN), r: Int(r), p: Int(p)).memoryCost.map { "\($0 >> 10) KiB" } ?? "an impossible amount") of memory)"
            case .pbkdf2(_, let iterations, _): "password, PBKDF2-HMAC-SHA-256, \(iterations) iterations"
            case .key(let keyID, _, _): "256-bit key, key id \(Hex.encode(keyID))"
            case .x25519(let keyID, _, _): "X25519 recipient, key id \(Hex.encode(keyID))"
            case .p256(let keyID, _, _): "P-256 recipient, key id \(Hex.encode(keyID))"
            }
        }
    }

    /// The eight bytes an encrypted file starts with: `COFFER\0E`.
    public static let magic: [UInt8] = [0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x00, 0x45]
    /// The format version this code writes and reads.
    public static let version: UInt8 = 1
    /// The most stanzas (ways to open the file) a header may hold.
    public static let maximumStanzas = 32
    /// The largest stanza body, in bytes.
    public static let maximumStanzaBody = 1024
    /// The segment sizes allowed, as log2 of bytes: 4 KiB to 16 MiB.
    public static let segmentLogRange: ClosedRange<UInt8> = 12...24

    /// The segment cipher.
    public let cipher: EncryptionCipher
    /// log2 of the plaintext segment size.
    public let segmentLog: UInt8
    /// How the file key is wrapped.
    public let stanzas: [Stanza]
    /// The random salt of the payload key.
    public let payloadNonce: [UInt8]
    /// HMAC-SHA-256 of the header under the header key.
    public let mac: [UInt8]

    /// The plaintext segment size in bytes.
    public var segmentSize: Int { 1 << Int(segmentLog) }

    init(cipher: EncryptionCipher, segmentLog: UInt8, stanzas: [Stanza], payloadNonce: [UInt8], mac: [UInt8]) {
        self.cipher = cipher
        self.segmentLog = segmentLog
        self.stanzas = stanzas
        self.payloadNonce = payloadNonce
        self.mac = mac
    }

    /// Every header byte the MAC covers.
    var authenticatedBytes: [UInt8] {
        Self.magic + [Self.version, cipher.rawValue, segmentLog, UInt8(stanzas.count)] + stanzas.flatMap(\.encoded) + payloadNonce
    }

    /// The header as written.
    var encoded: [UInt8] { authenticatedBytes + mac }

    /// Whether bytes start like a Coffer encrypted file.
    static func isCoffer(_ prefix: [UInt8]) -> Bool { prefix.starts(with: magic) }

    /// Parses a header, asking `read` for exactly the bytes it needs (it returns fewer only at the end).
    /// - Throws: ``CofferFormatsError`` `.malformedCiphertext` naming the problem.
    static func parse(_ read: (Int) throws -> [UInt8]) throws -> EncryptedFileHeader {
        func take(_ count: Int) throws -> [UInt8] {
            let bytes = try read(count)
            guard bytes.count == count else {
                throw CofferFormatsError(.malformedCiphertext, "the encrypted file's header is truncated")
            }
            return bytes
        }
        let fixed = try take(12)
        guard fixed.starts(with: magic) else {
            throw CofferFormatsError(.malformedCiphertext, "this is not a Coffer encrypted file (bad magic)")
        }
        guard fixed[8] == version else {
            throw CofferFormatsError(.malformedCiphertext, "unsupported encrypted-file version \(fixed[8]); this Coffer reads version \(version)")
        }
        guard let cipher = EncryptionCipher(rawValue: fixed[9]) else {
            throw CofferFormatsError(.malformedCiphertext, "unknown cipher \(fixed[9])")
        }
        guard segmentLogRange.contains(fixed[10]) else {
            throw CofferFormatsError(.malformedCiphertext, "segment size 2^\(fixed[10]) is outside 2^12 to 2^24")
        }
        let count = Int(fixed[11])
        guard (1...maximumStanzas).contains(count) else {
            throw CofferFormatsError(.malformedCiphertext, "the header names \(count) key stanzas; 1 to \(maximumStanzas) are allowed")
        }
        var stanzas: [Stanza] = []
        for _ in 0..<count {
            let head = try take(3)
            let length = Int(head[1]) << 8 | Int(head[2])
            guard length <= maximumStanzaBody else {
                throw CofferFormatsError(.malformedCiphertext, "a key stanza of \(length) bytes exceeds the limit of \(maximumStanzaBody)")
            }
            stanzas.append(try stanza(type: head[0], body: take(length)))
        }
        guard Set(stanzas.map(\.kind)).count == 1,
            stanzas.first.map({ $0.kind == 2 || stanzas.count == 1 }) ?? false
        else {
            throw CofferFormatsError(
                .malformedCiphertext,
                "the header mixes ways of opening the file; it must hold one password, one key, or recipients only"
            )
        }
        return EncryptedFileHeader(cipher: cipher, segmentLog: fixed[10], stanzas: stanzas, payloadNonce: try take(16), mac: try take(32))
    }

    private static func stanza(type: UInt8, body: [UInt8]) throws -> Stanza {
        func expect(_ length: Int, _ name: String) throws {
            guard body.count == length else {
                throw CofferFormatsError(.malformedCiphertext, "a \(name) stanza must be \(length) bytes, found \(body.count)")
            }
        }
        switch type {
        case 1:
            try expect(67, "scrypt")
            return .scrypt(salt: Array(body[0..<16]), logN: body[16], r: body[17], p: body[18], wrapped: Array(body[19...]))
        case 2:
            try expect(68, "PBKDF2")
            let iterations = body[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return .pbkdf2(salt: Array(body[0..<16]), iterations: iterations, wrapped: Array(body[20...]))
        case 3:
            try expect(72, "key")
            return .key(keyID: Array(body[0..<8]), salt: Array(body[8..<24]), wrapped: Array(body[24...]))
        case 4:
            try expect(88, "X25519 recipient")
            return .x25519(keyID: Array(body[0..<8]), encapsulated: Array(body[8..<40]), sealed: Array(body[40...]))
        case 5:
            try expect(121, "P-256 recipient")
            return .p256(keyID: Array(body[0..<8]), encapsulated: Array(body[8..<73]), sealed: Array(body[73...]))
        default:
            throw CofferFormatsError(.malformedCiphertext, "unknown key stanza type \(type)")
        }
    }
}

/// A length below 65,536 as 2 big-endian bytes (the formats' lengths are all capped far lower).
func bigEndian16(_ value: Int) -> [UInt8] {
    [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
}

extension EncryptedFileHeader {
    /// Parses a header whose first bytes were already read (to detect the format), from a binary
    /// Coffer file or from armour (``CofferArmor/mayBeArmor(_:)``).
    /// - Throws: `CofferCoreError` when reading fails, ``CofferFormatsError`` for a header that is not one.
    public static func parse(prefix: [UInt8], reader: FileReader) throws -> EncryptedFileHeader {
        var source: any ByteSource = PrefixedSource(prefix: prefix, rest: reader)
        if CofferArmor.mayBeArmor(prefix) { source = ArmoredSource(source) }
        do {
            return try CofferFormatsError.passingFileErrors("reading the header") { [source] in try parse { try source.readPrefix(upTo: $0) } }
        } catch let error as CofferCoreError {
            if let armour = error.underlying as? CofferFormatsError { throw armour }
            throw error
        }
    }

    /// The header's size on disk.
    public var encodedSize: Int { encoded.count }
}
