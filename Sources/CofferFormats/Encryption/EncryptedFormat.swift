public import CofferCore
public import CofferCrypto

/// The encrypted formats Coffer reads, told apart by their first bytes.
public enum EncryptedFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Coffer's own format (docs/FORMAT-ENCRYPTION.md).
    case coffer
    /// RNCryptor v3.
    case rncryptor
    /// OpenSSL `enc` with a salt (`Salted__`).
    case openssl

    public var description: String {
        switch self {
        case .coffer: "Coffer v1"
        case .rncryptor: "RNCryptor v3"
        case .openssl: "OpenSSL enc (Salted__)"
        }
    }

    /// The format whose signature `prefix` (16 bytes or fewer at the end of a file) starts with.
    public static func detect(_ prefix: [UInt8]) -> EncryptedFormat? {
        if prefix.starts(with: EncryptedFileHeader.magic) { return .coffer }
        if prefix.starts(with: OpenSSLEnc.magic) { return .openssl }
        if prefix.count >= 2, prefix[0] == 3, prefix[1] <= 1 { return .rncryptor }
        return nil
    }
}

/// What opens an encrypted file, across formats.
public enum AnyDecryptionCredential: Sendable {
    /// A password: Coffer password files, RNCryptor password mode, OpenSSL enc (with its iteration count).
    case password([UInt8], openSSLIterations: Int = OpenSSLEnc.defaultIterations)
    /// 32 bytes: a Coffer key; 64 bytes: RNCryptor's encryption key then HMAC key.
    case keyBytes([UInt8])
    /// A recipient's private key (Coffer files only).
    case identity(RecipientPrivateKey)
}

/// Decrypts any format Coffer reads, detected from the data.
public enum AnyFormatDecryptor {
    /// Detects the format from the first bytes of `reader`, then decrypts the rest, handing plaintext to
    /// `output`. As with every streaming decryption, the caller keeps the output only if this returns.
    /// - Returns: the format found.
    @discardableResult
    public static func decrypt(
        reader: FileReader,
        with credential: AnyDecryptionCredential,
        limits: PasswordKDFLimits = PasswordKDFLimits(),
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> EncryptedFormat {
        try withoutActuallyEscaping(output) { output in
            try decrypt(reader: reader, with: credential, limits: limits, progress: progress) { _ in .closure(output) }
        }
    }

    /// Decrypts to a stream that cannot be taken back, such as standard output: plaintext reaches
    /// `output` only once it has authenticated, and nothing is ever written to disk.
    ///
    /// - Coffer files are released chunk by chunk as their segments authenticate, as age does, so any
    ///   size streams in constant memory. When the input turns out truncated or altered, this throws
    ///   after `output` received the part that authenticated; tell the stream's reader to discard it.
    /// - RNCryptor v3 authenticates its whole body only at its end, and OpenSSL enc not at all (its
    ///   padding check at the end is what catches most wrong passwords): their plaintext is held in
    ///   memory, at most `memoryLimit` bytes, and released only when the input was read to its end and
    ///   checked.
    ///
    /// - Returns: the format found.
    /// - Throws: ``CofferFormatsError`` as ``decrypt(reader:with:limits:progress:output:)``, and
    ///   `.tooLarge` when an RNCryptor or OpenSSL plaintext outgrows `memoryLimit` (nothing was released).
    @discardableResult
    public static func decryptToStream(
        reader: FileReader,
        with credential: AnyDecryptionCredential,
        limits: PasswordKDFLimits = PasswordKDFLimits(),
        progress: ((Int64) -> Void)? = nil,
        memoryLimit: Int = defaultStreamMemoryLimit,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> EncryptedFormat {
        var held: [UInt8] = []
        defer { SecretBytes.wipe(&held) }
        let format = try withoutActuallyEscaping(output) { output in
            try decrypt(reader: reader, with: credential, limits: limits, progress: progress) { format in
                guard format != .coffer else { return .closure(output) }
                return .closure { bytes in
                    guard held.count + bytes.count <= memoryLimit else {
                        throw CofferFormatsError(
                            .tooLarge,
                            "\(format) checks its data only at the end, so its plaintext is held in memory until then, at most \(memoryLimit % (1 << 20) == 0 ? "\(memoryLimit >> 20) MiB" : "\(memoryLimit) bytes"); this one is larger"
                        )
                    }
                    held.append(contentsOf: bytes)
                }
            }
        }
        try held.withUnsafeBytes { bytes in
            // Handed on in 1 MiB pieces, as the file readers do.
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + (1 << 20))
                try output(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                offset = end
            }
        }
        return format
    }

    /// The most plaintext ``decryptToStream(reader:with:limits:progress:memoryLimit:output:)`` holds in
    /// memory for formats that authenticate only at their end: 64 MiB.
    public static let defaultStreamMemoryLimit = 64 << 20

    /// Detects the format and decrypts into `writer` (Coffer files straight into its buffers). As with
    /// every streaming decryption, commit the writer only if this returns.
    /// - Returns: the format found.
    @discardableResult
    public static func decrypt(
        reader: FileReader,
        with credential: AnyDecryptionCredential,
        limits: PasswordKDFLimits = PasswordKDFLimits(),
        progress: ((Int64) -> Void)? = nil,
        writer: AtomicFileWriter
    ) throws -> EncryptedFormat {
        try decrypt(reader: reader, with: credential, limits: limits, progress: progress) { _ in .writer(writer) }
    }

    /// Detects the format, then decrypts into the sink `makeSink` gives for it.
    static func decrypt(
        reader: FileReader,
        with credential: AnyDecryptionCredential,
        limits: PasswordKDFLimits,
        progress: ((Int64) -> Void)?,
        makeSink: (EncryptedFormat) throws -> ChunkSink
    ) throws -> EncryptedFormat {
        do {
            return try decrypt(source: reader, with: credential, limits: limits, progress: progress, makeSink: makeSink)
        } catch let error as CofferCoreError {
            // Armour's errors reach here inside the core error a source's prefix read throws.
            if let armour = error.underlying as? CofferFormatsError { throw armour }
            throw error
        }
    }

    private static func decrypt(
        source reader: FileReader,
        with credential: AnyDecryptionCredential,
        limits: PasswordKDFLimits,
        progress: ((Int64) -> Void)?,
        makeSink: (EncryptedFormat) throws -> ChunkSink
    ) throws -> EncryptedFormat {
        var prefix = try reader.readPrefix(upTo: 16)
        var text: (any ByteSource)? = nil
        if CofferArmor.mayBeArmor(prefix) {
            // Armour holds a Coffer file: decoded as it streams, then read as any other.
            let armored = ArmoredSource(PrefixedSource(prefix: prefix, rest: reader))
            prefix = try armored.readPrefix(upTo: 16)
            guard EncryptedFormat.detect(prefix) == .coffer else {
                throw CofferFormatsError(.malformedCiphertext, "armour: what it holds is not a Coffer file")
            }
            text = armored
        }
        guard let format = EncryptedFormat.detect(prefix) else {
            throw CofferFormatsError(
                .malformedCiphertext,
                prefix.isEmpty ? "the input is empty" : "the input is not in a format Coffer decrypts (Coffer, armoured Coffer, RNCryptor v3, OpenSSL Salted__)"
            )
        }
        let sink = try makeSink(format)
        let output = sink.write
        let source = PrefixedSource(prefix: prefix, rest: text ?? reader)
        switch (format, credential) {
        case (.coffer, .password(let password, _)):
            try CofferEncryption.decrypt(source: source, with: .password(password), limits: limits, progress: progress, sink: sink)
        case (.coffer, .keyBytes(let bytes)):
            try CofferEncryption.decrypt(source: source, with: .key(EncryptionKey(bytes: bytes)), limits: limits, progress: progress, sink: sink)
        case (.coffer, .identity(let identity)):
            try CofferEncryption.decrypt(source: source, with: .identity(identity), limits: limits, progress: progress, sink: sink)
        case (.rncryptor, .password(let password, _)):
            try RNCryptor.decrypt(source: source, with: .password(password), limits: limits, progress: progress, output: output)
        case (.rncryptor, .keyBytes(let bytes)):
            guard bytes.count == 64 else {
                throw CofferFormatsError(.invalidArgument, "RNCryptor key mode needs 64 key bytes (encryption key, then HMAC key); found \(bytes.count)")
            }
            let keys = try RNCryptor.Keys(encryptionKey: Array(bytes[0..<32]), hmacKey: Array(bytes[32...]))
            try RNCryptor.decrypt(source: source, with: .keys(keys), limits: limits, progress: progress, output: output)
        case (.openssl, .password(let password, let iterations)):
            try OpenSSLEnc.decrypt(source: source, password: password, iterations: iterations, limits: limits, progress: progress, output: output)
        case (.openssl, _), (.rncryptor, .identity):
            throw CofferFormatsError(.noMatchingKey, "\(format) files open with a password\(format == .rncryptor ? " or keys" : ""), not this credential")
        }
        return format
    }
}

/// Bytes already read (to detect the format) in front of the rest of a reader.
final class PrefixedSource: ByteSource {
    private var prefix: ArraySlice<UInt8>
    private let rest: any ByteSource

    init(prefix: [UInt8], rest: any ByteSource) {
        self.prefix = prefix[...]
        self.rest = rest
    }

    var sizeHint: Int64? { rest.sizeHint }

    func readPrefix(upTo count: Int) throws(CofferCoreError) -> [UInt8] {
        let fromPrefix = Array(prefix.prefix(count))
        prefix = prefix.dropFirst(fromPrefix.count)
        guard fromPrefix.count < count else { return fromPrefix }
        return fromPrefix + (try rest.readPrefix(upTo: count - fromPrefix.count))
    }

    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        try forEachChunk(chunkSize: chunkSize) { chunk, _ in try body(chunk) }
    }

    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer, Bool) throws -> Void) throws -> Int64 {
        guard !prefix.isEmpty else { return try rest.forEachChunk(chunkSize: chunkSize, body) }
        // Headers always consume the detected prefix before the body is streamed; should one not, the
        // stream is re-cut into chunks so the exact-size guarantee still holds.
        var pending = Array(prefix)
        prefix = []
        var total: Int64 = 0
        // A full chunk is handed out only once more data follows it, so the last one can be marked.
        try rest.forEachChunk(chunkSize: chunkSize) { (chunk: UnsafeRawBufferPointer) in
            pending.append(contentsOf: chunk)
            while pending.count > chunkSize {
                try pending[0..<chunkSize].withUnsafeBytes { try body($0, false) }
                pending.removeFirst(chunkSize)
                total += Int64(chunkSize)
            }
        }
        if !pending.isEmpty {
            try pending.withUnsafeBytes { try body($0, true) }
            total += Int64(pending.count)
        }
        return total
    }
}

extension CofferEncryption {
    /// Encrypts a reader's contents in a legacy format, for apps and tools that need them.
    public static func encryptLegacy(
        reader: FileReader,
        format: EncryptedFormat,
        password: [UInt8]?,
        keyBytes: [UInt8]?,
        openSSLIterations: Int = OpenSSLEnc.defaultIterations,
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        switch (format, password, keyBytes) {
        case (.rncryptor, .some(let password), _):
            try RNCryptor.encrypt(source: reader, with: .password(password), progress: progress, output: output)
        case (.rncryptor, nil, .some(let bytes)):
            guard bytes.count == 64 else {
                throw CofferFormatsError(.invalidArgument, "RNCryptor key mode needs 64 key bytes (encryption key, then HMAC key); found \(bytes.count)")
            }
            let keys = try RNCryptor.Keys(encryptionKey: Array(bytes[0..<32]), hmacKey: Array(bytes[32...]))
            try RNCryptor.encrypt(source: reader, with: .keys(keys), progress: progress, output: output)
        case (.openssl, .some(let password), _):
            try OpenSSLEnc.encrypt(source: reader, password: password, iterations: openSSLIterations, progress: progress, output: output)
        default:
            throw CofferFormatsError(.invalidArgument, "\(format) needs a password\(format == .rncryptor ? " or a 64-byte key file" : "")")
        }
    }
}
