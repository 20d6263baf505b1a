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

/// Who will be able to open a file: one or more ``FileKeyRecipient``s.
///
/// ```swift
/// let protection: EncryptionProtection = .recipients([alice, bob])      // or .password(pw), .key(key)
/// let custom = EncryptionProtection([MyTokenRecipient(token)])          // any FileKeyRecipient
/// ```
public struct EncryptionProtection: Sendable {
    /// The recipients, in the order their stanzas are written.
    public let fileKeyRecipients: [any FileKeyRecipient]

    /// A file for these recipients: 1 to ``EncryptedFileHeader/maximumStanzas``, and a recipient that
    /// stands alone (a password, a key) only on its own; encrypting checks both.
    public init(_ recipients: [any FileKeyRecipient]) { fileKeyRecipients = recipients }

    /// Anyone with this password, stretched with this KDF: at most the cost a reader with the default
    /// `PasswordKDFLimits` opens (scrypt N = 2^19 at r = 8, p = 1, or the same work split otherwise;
    /// 2,000,000 PBKDF2 iterations); writing refuses more (`.costTooHigh`). See ``PasswordRecipient``.
    public static func password(_ password: [UInt8], _ kdf: PasswordKDF = .default) -> EncryptionProtection {
        EncryptionProtection([PasswordRecipient(password: password, kdf: kdf)])
    }

    /// Anyone with this 256-bit key.
    public static func key(_ key: EncryptionKey) -> EncryptionProtection { EncryptionProtection([key]) }

    /// Any holder of one of these private keys.
    public static func recipients(_ keys: [RecipientPublicKey]) -> EncryptionProtection { EncryptionProtection(keys) }
}

/// What opens a file: one ``FileKeyIdentity``.
public struct DecryptionCredential: Sendable {
    /// The identity that unwraps the file key.
    public let fileKeyIdentity: any FileKeyIdentity

    /// A credential for any identity, Coffer's or your own.
    public init(_ identity: any FileKeyIdentity) { fileKeyIdentity = identity }

    /// The password the file was encrypted with (its UTF-8 bytes). See ``PasswordIdentity``.
    public static func password(_ password: [UInt8]) -> DecryptionCredential { DecryptionCredential(PasswordIdentity(password: password)) }

    /// A 32-byte symmetric key the file was encrypted to.
    public static func key(_ key: EncryptionKey) -> DecryptionCredential { DecryptionCredential(key) }

    /// The private key of one of the file's recipients.
    public static func identity(_ key: RecipientPrivateKey) -> DecryptionCredential { DecryptionCredential(key) }
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
        let fileKey = FileKey.generate()
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
        let fileKey = try unwrap(header, with: credential.fileKeyIdentity, limits: limits)
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

    /// The one error for a file that does not open: a wrong password or key, or damaged data. It never
    /// says which check failed; a ``FileKeyIdentity`` throws it when a stanza meant for it does not open.
    public static var authenticationFailure: CofferFormatsError {
        CofferFormatsError(.authenticationFailed, "wrong password or key, or the data is corrupted or truncated")
    }

    // MARK: - Keys

    static func headerKey(_ fileKey: FileKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey.key, info: Array("coffer-v1 header".utf8), outputByteCount: 32)
    }

    static func payloadKey(_ fileKey: FileKey, nonce: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey.key, salt: nonce, info: Array("coffer-v1 payload".utf8), outputByteCount: 32)
    }

    /// Every recipient's stanzas, in order, checked as a reader will check them.
    static func wrap(_ fileKey: FileKey, for protection: EncryptionProtection) throws -> [EncryptedFileHeader.Stanza] {
        let recipients = protection.fileKeyRecipients
        guard (1...EncryptedFileHeader.maximumStanzas).contains(recipients.count) else {
            throw CofferFormatsError(.invalidArgument, "expected 1 to \(EncryptedFileHeader.maximumStanzas) recipients, found \(recipients.count)")
        }
        guard recipients.count == 1 || !recipients.contains(where: { $0.standsAlone }) else {
            throw CofferFormatsError(.invalidArgument, "a password or key must be the only way to open a file; found it among \(recipients.count) recipients")
        }
        let stanzas = try recipients.flatMap { try $0.wrap(fileKey) }
        guard (1...EncryptedFileHeader.maximumStanzas).contains(stanzas.count) else {
            throw CofferFormatsError(.invalidArgument, "expected 1 to \(EncryptedFileHeader.maximumStanzas) stanzas, found \(stanzas.count)")
        }
        for stanza in stanzas { try stanza.validate(as: .invalidArgument) }
        try EncryptedFileHeader.Stanza.checkMix(stanzas, as: .invalidArgument)
        return stanzas
    }

    /// The file key `identity` unwraps from the header's stanzas, or its `.noMatchingKey` error.
    static func unwrap(_ header: EncryptedFileHeader, with identity: any FileKeyIdentity, limits: PasswordKDFLimits) throws -> FileKey {
        guard let fileKey = try identity.unwrap(header.stanzas, limits: limits) else { throw identity.noMatchingStanza(in: header.stanzas) }
        return fileKey
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
