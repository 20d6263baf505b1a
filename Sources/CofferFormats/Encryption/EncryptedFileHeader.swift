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
            let stanza = Stanza(type: head[0], body: try take(length))
            try stanza.validate()
            stanzas.append(stanza)
        }
        try Stanza.checkMix(stanzas)
        return EncryptedFileHeader(cipher: cipher, segmentLog: fixed[10], stanzas: stanzas, payloadNonce: try take(16), mac: try take(32))
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
