// One file on purpose: the Coffer file format's reader and writer share the header, stanza and
// segment code and are read together against docs/FORMAT-ENCRYPTION.md; splitting them would put one
// format's invariants in two places.

public import CofferCore
public import CofferCrypto
import Crypto
import _CryptoExtras
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Who will be able to open a file.
public enum EncryptionProtection: Sendable {
    /// Anyone with this password, stretched with this KDF: at most the cost a reader with the default
    /// `PasswordKDFLimits` opens (scrypt N = 2^19 at r = 8, p = 1, or the same work split otherwise;
    /// 2,000,000 PBKDF2 iterations); writing refuses more (`.costTooHigh`).
    case password([UInt8], PasswordKDF = .default)
    /// Anyone with this 256-bit key.
    case key(EncryptionKey)
    /// Any holder of one of these private keys.
    case recipients([RecipientPublicKey])
}

/// What opens a file.
public enum DecryptionCredential: Sendable {
    /// The password the file was encrypted with (its UTF-8 bytes).
    case password([UInt8])
    /// A 32-byte symmetric key the file was encrypted to.
    case key(EncryptionKey)
    /// The private key of one of the file's recipients.
    case identity(RecipientPrivateKey)
}

/// A source of bytes the encryption engine reads: a file, standard input, or memory.
protocol ByteSource: AnyObject {
    /// Up to `count` bytes; fewer only at the end.
    func readPrefix(upTo count: Int) throws(CofferCoreError) -> [UInt8]
    /// The rest, in chunks of exactly `chunkSize` bytes but the last.
    @discardableResult
    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64
    /// The same, saying which chunk is the last; not called for an empty rest.
    @discardableResult
    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer, Bool) throws -> Void) throws -> Int64
    /// The whole input's size in bytes, counting what was already read, when it is known (a regular
    /// file); `nil` for pipes. Only a hint for preallocating the output file: never trusted for framing.
    var sizeHint: Int64? { get }
}

extension FileReader: ByteSource {
    var sizeHint: Int64? { size }
}

/// Bytes in memory behind the same interface as a file.
final class MemorySource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var sizeHint: Int64? { Int64(bytes.count) }

    func readPrefix(upTo count: Int) throws(CofferCoreError) -> [UInt8] {
        let end = min(bytes.count, offset + count)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }

    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        try forEachChunk(chunkSize: chunkSize) { chunk, _ in try body(chunk) }
    }

    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer, Bool) throws -> Void) throws -> Int64 {
        let start = offset
        try bytes.withUnsafeBytes { all in
            while offset < all.count {
                let end = min(all.count, offset + chunkSize)
                try body(UnsafeRawBufferPointer(rebasing: all[offset..<end]), end == all.count)
                offset = end
            }
        }
        return Int64(offset - start)
    }
}

/// Coffer's streaming authenticated encryption (docs/FORMAT-ENCRYPTION.md).
///
/// ```swift
/// let sealed = try CofferEncryption.encrypt(Array("secret".utf8), to: .password(password))
/// let opened = try CofferEncryption.decrypt(sealed, with: .password(password))
/// try CofferEncryption.encryptFile(atPath: "backup.tar", toPath: "backup.tar.coffer", to: .recipients([alice, bob]))
/// ```
public enum CofferEncryption {
    /// log2 of the segment size Coffer writes: 64 KiB.
    public static let defaultSegmentLog: UInt8 = 16

    // MARK: - Public entry points

    /// Encrypts bytes in memory.
    public static func encrypt(
        _ plaintext: [UInt8],
        to protection: EncryptionProtection,
        cipher: EncryptionCipher = .aes256GCM
    ) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("encrypting") { () throws -> [UInt8] in
            var output: [UInt8] = []
            try encrypt(source: MemorySource(plaintext), to: protection, cipher: cipher) { output.append(contentsOf: $0) }
            return output
        }
    }

    /// Decrypts bytes in memory; returns the plaintext only if every segment authenticated.
    public static func decrypt(
        _ ciphertext: [UInt8],
        with credential: DecryptionCredential,
        limits: PasswordKDFLimits = PasswordKDFLimits()
    ) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("decrypting") { () throws -> [UInt8] in
            var output: [UInt8] = []
            try decrypt(source: MemorySource(ciphertext), with: credential, limits: limits) { output.append(contentsOf: $0) }
            return output
        }
    }

    /// Encrypts a file (or `-`) to a new file that appears whole or not at all (see `AtomicFileWriter`):
    /// on failure, or if the process is killed, nothing is left behind.
    /// - Parameters:
    ///   - input: the file to encrypt, or `-` for standard input.
    ///   - output: the encrypted file to create.
    ///   - protection: who will be able to open it.
    ///   - cipher: AES-256-GCM (the default) or ChaCha20-Poly1305.
    ///   - overwrite: replace an existing `output`; without it an existing file is refused.
    ///   - durable: return only once the file and its name are on stable storage (the default),
    ///     so that deleting the original afterwards is safe.
    ///   - progress: called with the number of plaintext bytes read so far.
    /// - Throws: `CofferCoreError` when reading or writing a file fails, ``CofferFormatsError`` for
    ///   everything else (swift-crypto's own errors arrive wrapped as `.cryptographicFailure`).
    public static func encryptFile(
        atPath input: String,
        toPath output: String,
        to protection: EncryptionProtection,
        cipher: EncryptionCipher = .aes256GCM,
        overwrite: Bool = false,
        durable: Bool = true,
        progress: ((Int64) -> Void)? = nil
    ) throws {
        try CofferFormatsError.passingFileErrors("encrypting") {
            let reader = try FileReader.open(input)
            let writer = try AtomicFileWriter(destination: output, overwrite: overwrite, durable: durable, background: true)
            try encrypt(reader: reader, to: protection, cipher: cipher, progress: progress, writer: writer)
            try writer.commit()
        }
    }

    /// Decrypts a file (or `-`) to a new file, named only after the last segment authenticated. On any
    /// failure, or if the process is killed, no plaintext is left behind and the destination is untouched.
    /// - Parameters:
    ///   - input: the encrypted file, or `-` for standard input.
    ///   - output: the plaintext file to create.
    ///   - credential: what opens the file: its password, its key, or a recipient's private key.
    ///   - limits: the most key-derivation work to accept before knowing whether the password is right.
    ///   - overwrite: replace an existing `output`; without it an existing file is refused.
    ///   - durable: also wait for the plaintext to reach stable storage (off by default: the
    ///     ciphertext remains, so a crash loses nothing that cannot be decrypted again).
    ///   - progress: called with the number of encrypted bytes read so far.
    /// - Throws: `CofferCoreError` when reading or writing a file fails, ``CofferFormatsError`` for
    ///   everything else: a wrong credential, a damaged or truncated file, a cost above `limits`.
    public static func decryptFile(
        atPath input: String,
        toPath output: String,
        with credential: DecryptionCredential,
        limits: PasswordKDFLimits = PasswordKDFLimits(),
        overwrite: Bool = false,
        durable: Bool = false,
        progress: ((Int64) -> Void)? = nil
    ) throws {
        try CofferFormatsError.passingFileErrors("decrypting") {
            let reader = try FileReader.open(input)
            let writer = try AtomicFileWriter(destination: output, overwrite: overwrite, durable: durable, background: true)
            try decrypt(reader: reader, with: credential, limits: limits, progress: progress, writer: writer)
            try writer.commit()
        }
    }

    /// Encrypts everything a reader yields, handing ciphertext to `output` in order.
    public static func encrypt(
        reader: FileReader,
        to protection: EncryptionProtection,
        cipher: EncryptionCipher = .aes256GCM,
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try encrypt(source: reader, to: protection, cipher: cipher, progress: progress, output: output)
    }

    /// Encrypts everything a reader yields into `writer`, sealing straight into its buffers; the caller
    /// commits the writer afterwards (or abandons it on error).
    public static func encrypt(
        reader: FileReader,
        to protection: EncryptionProtection,
        cipher: EncryptionCipher = .aes256GCM,
        progress: ((Int64) -> Void)? = nil,
        writer: AtomicFileWriter
    ) throws {
        try encrypt(source: reader, to: protection, cipher: cipher, progress: progress, sink: .writer(writer))
    }

    /// Decrypts everything a reader yields, handing each authenticated segment's plaintext to `output`.
    /// When it throws, what `output` received is incomplete: file callers discard it (see
    /// ``decryptFile(atPath:toPath:with:limits:overwrite:durable:progress:)``).
    public static func decrypt(
        reader: FileReader,
        with credential: DecryptionCredential,
        limits: PasswordKDFLimits = PasswordKDFLimits(),
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try decrypt(source: reader, with: credential, limits: limits, progress: progress, output: output)
    }

    /// Decrypts everything a reader yields into `writer`, opening straight into its buffers. When it
    /// throws, the writer holds an incomplete plaintext: abandon it (releasing it does).
    public static func decrypt(
        reader: FileReader,
        with credential: DecryptionCredential,
        limits: PasswordKDFLimits = PasswordKDFLimits(),
        progress: ((Int64) -> Void)? = nil,
        writer: AtomicFileWriter
    ) throws {
        try decrypt(source: reader, with: credential, limits: limits, progress: progress, sink: .writer(writer))
    }

    /// Reads only the header, for `coffer inspect`.
    /// - Throws: `CofferCoreError` when reading fails, ``CofferFormatsError`` for a header that is not one.
    public static func inspect(reader: FileReader) throws -> EncryptedFileHeader {
        try CofferFormatsError.passingFileErrors("reading the header") { try EncryptedFileHeader.parse { try reader.readPrefix(upTo: $0) } }
    }

    // MARK: - Engine

    static func encrypt(
        source: some ByteSource,
        to protection: EncryptionProtection,
        cipher: EncryptionCipher,
        segmentLog: UInt8 = defaultSegmentLog,
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try withoutActuallyEscaping(output) { output in
            try encrypt(source: source, to: protection, cipher: cipher, segmentLog: segmentLog, progress: progress, sink: .closure(output))
        }
    }

    static func decrypt(
        source: some ByteSource,
        with credential: DecryptionCredential,
        limits: PasswordKDFLimits,
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try withoutActuallyEscaping(output) { output in
            try decrypt(source: source, with: credential, limits: limits, progress: progress, sink: .closure(output))
        }
    }

    static func encrypt(
        source: some ByteSource,
        to protection: EncryptionProtection,
        cipher: EncryptionCipher,
        segmentLog: UInt8 = defaultSegmentLog,
        progress: ((Int64) -> Void)? = nil,
        sink: ChunkSink
    ) throws {
        let fileKey = SymmetricKey(size: .bits256)
        let stanzas = try wrap(fileKey, for: protection)
        let payloadNonce = try SecureRandom.bytes(count: 16)
        let unsigned = EncryptedFileHeader(cipher: cipher, segmentLog: segmentLog, stanzas: stanzas, payloadNonce: payloadNonce, mac: [])
        let mac = HMAC<SHA256>.authenticationCode(for: unsigned.authenticatedBytes, using: headerKey(fileKey))
        let header = EncryptedFileHeader(cipher: cipher, segmentLog: segmentLog, stanzas: stanzas, payloadNonce: payloadNonce, mac: Array(mac))
        let encodedHeader = header.encoded
        try encodedHeader.withUnsafeBytes(sink.write)

        let engine = SegmentEngine(cipher: cipher, key: payloadKey(fileKey, nonce: payloadNonce), segmentSize: header.segmentSize)
        defer { engine.deallocate() }
        if let size = source.sizeHint {
            try sink.preallocate(toSize: Int64(encodedHeader.count) + engine.sealedSize(ofPlaintext: size))
        }
        var done: Int64 = 0
        var sawData = false
        try source.forEachChunk(chunkSize: engine.plaintextChunkSize) { chunk, isLast in
            sawData = true
            try engine.seal(chunk, isLastChunk: isLast, to: sink)
            done += Int64(chunk.count)
            progress?(done)
        }
        if !sawData {
            // An empty plaintext is one empty final segment.
            try engine.seal(UnsafeRawBufferPointer(start: nil, count: 0), isLastChunk: true, to: sink)
        }
    }

    static func decrypt(
        source: some ByteSource,
        with credential: DecryptionCredential,
        limits: PasswordKDFLimits,
        progress: ((Int64) -> Void)? = nil,
        sink: ChunkSink
    ) throws {
        let header = try EncryptedFileHeader.parse { try source.readPrefix(upTo: $0) }
        let fileKey = try unwrap(header, with: credential, limits: limits)
        let expected = HMAC<SHA256>.authenticationCode(for: header.authenticatedBytes, using: headerKey(fileKey))
        guard ConstantTime.equals(Array(expected), header.mac) else { throw authenticationFailure }

        let engine = SegmentEngine(cipher: header.cipher, key: payloadKey(fileKey, nonce: header.payloadNonce), segmentSize: header.segmentSize)
        defer { engine.deallocate() }
        if let size = source.sizeHint {
            try sink.preallocate(toSize: engine.plaintextSize(ofSealed: size - Int64(header.encodedSize)))
        }
        var done: Int64 = 0
        var sawData = false
        try source.forEachChunk(chunkSize: engine.sealedChunkSize) { chunk, isLast in
            sawData = true
            try engine.open(chunk, isLastChunk: isLast, to: sink)
            done += Int64(chunk.count)
            progress?(done)
        }
        // Nothing after the header: the final segment is missing.
        guard sawData else { throw authenticationFailure }
    }

    static var authenticationFailure: CofferFormatsError {
        CofferFormatsError(.authenticationFailed, "wrong password or key, or the data is corrupted or truncated")
    }

    // MARK: - Keys

    static func headerKey(_ fileKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, info: Array("coffer-v1 header".utf8), outputByteCount: 32)
    }

    static func payloadKey(_ fileKey: SymmetricKey, nonce: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Array("coffer-v1 payload".utf8), outputByteCount: 32)
    }

    static let zeroNonce = [UInt8](repeating: 0, count: 12)
    /// HPKE's info for recipient stanzas. Made per use: a `Data` global keeps its storage behind a tagged
    /// pointer, which LeakSanitizer reports as a leak at every process exit.
    static var recipientInfo: Data { Data("coffer-v1 recipient".utf8) }

    static func wrap(_ fileKey: SymmetricKey, for protection: EncryptionProtection) throws -> [EncryptedFileHeader.Stanza] {
        let fileKeyBytes = fileKey.withUnsafeBytes { Array($0) }
        func seal(_ kek: SymmetricKey, _ additionalData: [UInt8]) throws -> [UInt8] {
            let box = try AES.GCM.seal(fileKeyBytes, using: kek, nonce: AES.GCM.Nonce(data: zeroNonce), authenticating: additionalData)
            return Array(box.ciphertext) + Array(box.tag)
        }
        switch protection {
        case .password(let password, let kdf):
            guard !password.isEmpty else { throw CofferFormatsError(.invalidArgument, "an empty password protects nothing") }
            let salt = try SecureRandom.bytes(count: 16)
            switch kdf {
            case .scrypt(let logN, let r, let p):
                guard (10...30).contains(logN), (1...255).contains(r), (1...255).contains(p) else {
                    throw CofferFormatsError(.invalidArgument, "expected scrypt log2 N from 10 to 30 and r, p from 1 to 255")
                }
                let kek = try kdf.deriveForWriting(password: password, salt: salt)
                let stanza = EncryptedFileHeader.Stanza.scrypt(salt: salt, logN: UInt8(logN), r: UInt8(r), p: UInt8(p), wrapped: [])
                return [.scrypt(salt: salt, logN: UInt8(logN), r: UInt8(r), p: UInt8(p), wrapped: try seal(kek, stanza.additionalData))]
            case .pbkdf2(let prf, let iterations):
                guard prf == .hmacSHA256, iterations <= Int(UInt32.max) else {
                    throw CofferFormatsError(.invalidArgument, "a Coffer file records PBKDF2-HMAC-SHA256 up to \(UInt32.max) iterations; found \(kdf)")
                }
                let kek = try kdf.deriveForWriting(password: password, salt: salt)
                let stanza = EncryptedFileHeader.Stanza.pbkdf2(salt: salt, iterations: UInt32(iterations), wrapped: [])
                return [.pbkdf2(salt: salt, iterations: UInt32(iterations), wrapped: try seal(kek, stanza.additionalData))]
            }
        case .key(let key):
            let salt = try SecureRandom.bytes(count: 16)
            let kek = HKDF<SHA256>.deriveKey(inputKeyMaterial: key.key, salt: salt, info: Array("coffer-v1 key-wrap".utf8), outputByteCount: 32)
            let stanza = EncryptedFileHeader.Stanza.key(keyID: key.keyID, salt: salt, wrapped: [])
            return [.key(keyID: key.keyID, salt: salt, wrapped: try seal(kek, stanza.additionalData))]
        case .recipients(let recipients):
            guard (1...EncryptedFileHeader.maximumStanzas).contains(recipients.count) else {
                throw CofferFormatsError(.invalidArgument, "expected 1 to \(EncryptedFileHeader.maximumStanzas) recipients, found \(recipients.count)")
            }
            return try recipients.map { recipient in
                let keyID = recipient.keyID
                switch recipient {
                case .x25519(let key):
                    var sender = try HPKE.Sender(recipientKey: key, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: recipientInfo)
                    let sealed = try sender.seal(fileKeyBytes, authenticating: [4] + keyID)
                    return .x25519(keyID: keyID, encapsulated: Array(sender.encapsulatedKey), sealed: Array(sealed))
                case .p256(let key):
                    var sender = try HPKE.Sender(recipientKey: key, ciphersuite: .P256_SHA256_AES_GCM_256, info: recipientInfo)
                    let sealed = try sender.seal(fileKeyBytes, authenticating: [5] + keyID)
                    return .p256(keyID: keyID, encapsulated: Array(sender.encapsulatedKey), sealed: Array(sealed))
                }
            }
        }
    }

    static func unwrap(_ header: EncryptedFileHeader, with credential: DecryptionCredential, limits: PasswordKDFLimits) throws -> SymmetricKey {
        func open(_ kek: SymmetricKey, _ stanza: EncryptedFileHeader.Stanza) -> SymmetricKey? {
            let wrapped = stanza.wrapped
            guard wrapped.count == 48,
                let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: zeroNonce), ciphertext: wrapped[0..<32], tag: wrapped[32...]),
                let key = try? AES.GCM.open(box, using: kek, authenticating: stanza.additionalData)
            else { return nil }
            return SymmetricKey(data: key)
        }
        switch credential {
        case .password(let password):
            guard let stanza = header.stanzas.first, stanza.kind == 0 else {
                throw CofferFormatsError(.noMatchingKey, "the file is not encrypted with a password; it needs \(header.stanzas.first?.summary ?? "a key")")
            }
            let kdf: PasswordKDF
            let salt: [UInt8]
            switch stanza {
            case .scrypt(let scryptSalt, let logN, let r, let p, _):
                (kdf, salt) = (.scrypt(logN: Int(logN), r: Int(r), p: Int(p)), scryptSalt)
            case .pbkdf2(let pbkdf2Salt, let iterations, _):
                (kdf, salt) = (.pbkdf2(iterations: Int(iterations)), pbkdf2Salt)
            default:
                throw authenticationFailure
            }
            let kek = try kdf.deriveForReading("the file", password: password, salt: salt, limits: limits, malformed: .malformedCiphertext)
            guard let fileKey = open(kek, stanza) else { throw authenticationFailure }
            return fileKey
        case .key(let key):
            let candidates = header.stanzas.filter { if case .key(let id, _, _) = $0 { ConstantTime.equals(id, key.keyID) } else { false } }
            guard !candidates.isEmpty else {
                throw CofferFormatsError(.noMatchingKey, "the file is not encrypted to this key (key id \(Hex.encode(key.keyID))); it needs \(header.stanzas.map(\.summary).joined(separator: "; "))")
            }
            for stanza in candidates {
                guard case .key(_, let salt, _) = stanza else { continue }
                let kek = HKDF<SHA256>.deriveKey(inputKeyMaterial: key.key, salt: salt, info: Array("coffer-v1 key-wrap".utf8), outputByteCount: 32)
                if let fileKey = open(kek, stanza) { return fileKey }
            }
            throw authenticationFailure
        case .identity(let identity):
            let keyID = identity.publicKey.keyID
            for stanza in header.stanzas {
                switch (stanza, identity) {
                case (.x25519(let id, let encapsulated, let sealed), .x25519(let key)) where ConstantTime.equals(id, keyID):
                    guard var recipient = try? HPKE.Recipient(
                        privateKey: key, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: recipientInfo, encapsulatedKey: Data(encapsulated)
                    ), let fileKey = try? recipient.open(sealed, authenticating: [4] + id), fileKey.count == 32
                    else { throw authenticationFailure }
                    return SymmetricKey(data: fileKey)
                case (.p256(let id, let encapsulated, let sealed), .p256(let key)) where ConstantTime.equals(id, keyID):
                    guard var recipient = try? HPKE.Recipient(
                        privateKey: key, ciphersuite: .P256_SHA256_AES_GCM_256, info: recipientInfo, encapsulatedKey: Data(encapsulated)
                    ), let fileKey = try? recipient.open(sealed, authenticating: [5] + id), fileKey.count == 32
                    else { throw authenticationFailure }
                    return SymmetricKey(data: fileKey)
                default:
                    continue
                }
            }
            throw CofferFormatsError(
                .noMatchingKey,
                "the file is not encrypted to this key (key id \(Hex.encode(keyID))); it needs \(header.stanzas.map(\.summary).joined(separator: "; "))"
            )
        }
    }
}

extension EncryptionCipher {
    /// The CofferCrypto AEAD behind the format's cipher byte.
    var aead: AEADAlgorithm {
        switch self {
        case .aes256GCM: .aes256GCM
        case .chaCha20Poly1305: .chaCha20Poly1305
        }
    }
}
