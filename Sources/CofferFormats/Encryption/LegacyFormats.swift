import CofferCore
public import CofferCrypto
import Crypto
import _CryptoExtras
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RNCryptor v3 (RNCryptor-Spec-v3.md), the format many iOS apps store: AES-256-CBC with PKCS#7
/// padding and an HMAC-SHA-256 over header and ciphertext; in password mode both keys come from
/// PBKDF2-HMAC-SHA-1 at 10,000 iterations with separate 8-byte salts.
///
/// Decryption checks the HMAC, in constant time, before any plaintext is released: in memory it is
/// checked before decrypting; for files the plaintext goes to a temporary file that is renamed only
/// once the HMAC matched.
public enum RNCryptor {
    /// The two keys of key mode.
    public struct Keys: Sendable {
        let encryption: SymmetricKey
        let hmac: SymmetricKey

        /// 32 bytes each. - Throws: ``CofferFormatsError`` for other lengths.
        public init(encryptionKey: [UInt8], hmacKey: [UInt8]) throws(CofferFormatsError) {
            guard encryptionKey.count == 32, hmacKey.count == 32 else {
                throw CofferFormatsError(.invalidArgument, "RNCryptor keys are 32 bytes each; found \(encryptionKey.count) and \(hmacKey.count)")
            }
            encryption = SymmetricKey(data: encryptionKey)
            hmac = SymmetricKey(data: hmacKey)
        }

        init(encryption: SymmetricKey, hmac: SymmetricKey) {
            self.encryption = encryption
            self.hmac = hmac
        }
    }

    /// What opens an RNCryptor message.
    public enum Credential: Sendable {
        /// The password (its UTF-8 bytes).
        case password([UInt8])
        /// The encryption and HMAC keys themselves.
        case keys(Keys)
    }

    static let iterations = 10_000

    /// PBKDF2-HMAC-SHA-1, 10,000 iterations, 32 bytes: RNCryptor's KDF.
    public static func deriveKeyBytes(password: [UInt8], salt: [UInt8]) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("deriving the key") { () throws -> [UInt8] in
            try deriveKey(password: password, salt: salt, limits: nil).withUnsafeBytes { Array($0) }
        }
    }

    /// The KDF, within `limits` when reading (nil when writing). RNCryptor v3 fixes its cost, so no
    /// message can ask for more; the limits still apply, as they do to every reader.
    static func deriveKey(password: [UInt8], salt: [UInt8], limits: PasswordKDFLimits?) throws(CofferFormatsError) -> SymmetricKey {
        try PasswordKDF.pbkdf2(.hmacSHA1, iterations: iterations)
            .deriveForPeerFormat("the RNCryptor message", password: password, salt: salt, limits: limits)
    }

    /// Encrypts bytes in memory.
    public static func encrypt(_ plaintext: [UInt8], with credential: Credential) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("encrypting") { () throws -> [UInt8] in
            var output: [UInt8] = []
            try encrypt(source: MemorySource(plaintext), with: credential) { output.append(contentsOf: $0) }
            return output
        }
    }

    /// Decrypts bytes in memory, checking the HMAC before decrypting anything.
    /// - Parameters:
    ///   - message: the RNCryptor v3 message.
    ///   - credential: its password or its two keys.
    ///   - limits: the most key-derivation work to accept (RNCryptor's fixed cost passes the defaults).
    /// - Throws: ``CofferFormatsError``: `.costTooHigh` above `limits`, `.authenticationFailed` for a
    ///   wrong password or key or a changed message, `.malformedCiphertext` for what is not one.
    public static func decrypt(
        _ message: [UInt8], with credential: Credential, limits: PasswordKDFLimits = PasswordKDFLimits()
    ) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("decrypting") { () throws -> [UInt8] in
            let (header, keys) = try parseHeader(MemorySource(message), with: credential, limits: limits)
            guard message.count >= header.count + 16 + 32 else { throw truncated }
            let expected = HMAC<SHA256>.authenticationCode(for: message.dropLast(32), using: keys.hmac)
            guard ConstantTime.equals(Array(expected), message.suffix(32)) else { throw CofferEncryption.authenticationFailure }
            var output: [UInt8] = []
            try decrypt(source: MemorySource(message), with: credential, limits: limits) { output.append(contentsOf: $0) }
            return output
        }
    }

    /// Encrypts with fixed salts and IV, for test vectors only.
    static func encrypt(
        _ plaintext: [UInt8], with credential: Credential, encryptionSalt: [UInt8], hmacSalt: [UInt8], iv: [UInt8]
    ) throws -> [UInt8] {
        var output: [UInt8] = []
        try encrypt(source: MemorySource(plaintext), with: credential, salts: (encryptionSalt, hmacSalt), iv: iv) { output.append(contentsOf: $0) }
        return output
    }

    static func encrypt(
        source: some ByteSource,
        with credential: Credential,
        salts: ([UInt8], [UInt8])? = nil,
        iv fixedIV: [UInt8]? = nil,
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let iv = try fixedIV ?? SecureRandom.bytes(count: 16)
        var header: [UInt8]
        let keys: Keys
        switch credential {
        case .password(let password):
            let encryptionSalt = try salts?.0 ?? SecureRandom.bytes(count: 8)
            let hmacSalt = try salts?.1 ?? SecureRandom.bytes(count: 8)
            keys = Keys(
                encryption: try deriveKey(password: password, salt: encryptionSalt, limits: nil),
                hmac: try deriveKey(password: password, salt: hmacSalt, limits: nil)
            )
            header = [3, 1] + encryptionSalt + hmacSalt + iv
        case .keys(let given):
            keys = given
            header = [3, 0] + iv
        }
        var mac = HMAC<SHA256>(key: keys.hmac)
        mac.update(data: header)
        try header.withUnsafeBytes(output)
        var encryptor = CBCEncryptor(key: keys.encryption, iv: iv)
        var done: Int64 = 0
        try withoutActuallyEscaping(output) { output in
            let emit: (UnsafeRawBufferPointer) throws -> Void = { ciphertext in
                mac.update(data: ciphertext)
                try output(ciphertext)
            }
            try source.forEachChunk(chunkSize: 1 << 16) { chunk in
                try encryptor.update(chunk, output: emit)
                done += Int64(chunk.count)
                progress?(done)
            }
            try encryptor.finish(output: emit)
        }
        header = Array(mac.finalize())
        try header.withUnsafeBytes(output)
    }

    static func decrypt(
        source: some ByteSource,
        with credential: Credential,
        limits: PasswordKDFLimits = PasswordKDFLimits(),
        progress: ((Int64) -> Void)? = nil,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let (header, keys) = try parseHeader(source, with: credential, limits: limits)
        var mac = HMAC<SHA256>(key: keys.hmac)
        mac.update(data: header)
        var decryptor = CBCDecryptor(key: keys.encryption, iv: Array(header.suffix(16)), trailer: 32)
        var done: Int64 = 0
        try source.forEachChunk(chunkSize: 1 << 16) { chunk in
            try decryptor.update(chunk, consumed: { mac.update(data: $0) }, output: output)
            done += Int64(chunk.count)
            progress?(done)
        }
        // The HMAC is checked before the final block is decrypted and before the caller may keep anything.
        let body = decryptor.carry.count - 32
        guard body >= 16 else { throw truncated }
        var finalMAC = mac
        decryptor.carry[0..<body].withUnsafeBytes { finalMAC.update(data: $0) }
        guard ConstantTime.equals(Array(finalMAC.finalize()), decryptor.carry.suffix(32)) else { throw CofferEncryption.authenticationFailure }
        do {
            _ = try decryptor.finish(consumed: { _ in }, output: output)
        } catch {
            throw CofferEncryption.authenticationFailure
        }
    }

    static var truncated: CofferFormatsError { CofferFormatsError(.malformedCiphertext, "the RNCryptor message is truncated") }

    private static func parseHeader(_ source: some ByteSource, with credential: Credential, limits: PasswordKDFLimits) throws -> ([UInt8], Keys) {
        let start = try source.readPrefix(upTo: 2)
        guard start.count == 2, start[0] == 3 else {
            throw CofferFormatsError(.malformedCiphertext, start.first.map { "unsupported RNCryptor version \($0); Coffer reads version 3" } ?? "the input is empty")
        }
        switch (start[1], credential) {
        case (1, .password(let password)):
            let rest = try source.readPrefix(upTo: 32)
            guard rest.count == 32 else { throw truncated }
            let keys = Keys(
                encryption: try deriveKey(password: password, salt: Array(rest[0..<8]), limits: limits),
                hmac: try deriveKey(password: password, salt: Array(rest[8..<16]), limits: limits)
            )
            return (start + rest, keys)
        case (0, .keys(let keys)):
            let iv = try source.readPrefix(upTo: 16)
            guard iv.count == 16 else { throw truncated }
            return (start + iv, keys)
        case (1, .keys):
            throw CofferFormatsError(.noMatchingKey, "this RNCryptor message is password-encrypted; give the password, not keys")
        case (0, .password):
            throw CofferFormatsError(.noMatchingKey, "this RNCryptor message is key-encrypted; give the encryption and HMAC keys, not a password")
        default:
            throw CofferFormatsError(.malformedCiphertext, "unknown RNCryptor options byte \(start[1])")
        }
    }
}

/// The `Salted__` files of `openssl enc -aes-256-cbc -pbkdf2 -iter N` (PBKDF2-HMAC-SHA-256 derives key and
/// IV from the password and an 8-byte salt). - Warning: unauthenticated: anyone can alter the data
/// undetected. Read old files with it; write it only for a peer that knows nothing better.
public enum OpenSSLEnc {
    /// OpenSSL's default iteration count for `-pbkdf2`.
    public static let defaultIterations = 10_000

    /// Why a `Salted__` file did not decrypt: its padding did not check, which is all this format can
    /// say, and which a wrong password and a file written with other settings cause alike.
    public static let settingsMismatch = """
        this OpenSSL file does not open with the password and settings given: the file records neither \
        how its key was derived nor how many iterations made it, and Coffer reads 'openssl enc -pbkdf2' \
        files with -md sha256 and the iteration count given; otherwise the password is wrong or the data \
        is corrupted
        """
    static let magic = Array("Salted__".utf8)

    /// Key and IV from the password, within `limits` when reading (nil when writing: then within the
    /// defaults, so that Coffer never writes what it would refuse to read).
    static func keyAndIV(
        password: [UInt8], salt: [UInt8], iterations: Int, limits: PasswordKDFLimits?
    ) throws(CofferFormatsError) -> (SymmetricKey, [UInt8]) {
        let material = try PasswordKDF.pbkdf2(iterations: iterations)
            .deriveForPeerFormat("this decryption", password: password, salt: salt, byteCount: 48, limits: limits)
            .withUnsafeBytes { Array($0) }
        return (SymmetricKey(data: material[0..<32]), Array(material[32..<48]))
    }

    /// Encrypts bytes in memory.
    /// - Throws: ``CofferFormatsError`` `.costTooHigh` for more iterations than a reader with the default
    ///   `PasswordKDFLimits` accepts, `.invalidArgument` for fewer than one.
    public static func encrypt(_ plaintext: [UInt8], password: [UInt8], iterations: Int = defaultIterations) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("encrypting") { () throws -> [UInt8] in
            var output: [UInt8] = []
            try encrypt(source: MemorySource(plaintext), password: password, iterations: iterations) { output.append(contentsOf: $0) }
            return output
        }
    }

    /// Decrypts bytes in memory.
    /// - Parameters:
    ///   - data: the `Salted__` file.
    ///   - password: its password.
    ///   - iterations: the iteration count it was encrypted with (the file does not record it).
    ///   - limits: the most key-derivation work to accept.
    /// - Throws: ``CofferFormatsError``: `.costTooHigh` for `iterations` above `limits` (before any
    ///   work), `.authenticationFailed` when the padding is wrong, `.malformedCiphertext` for what is not one.
    public static func decrypt(
        _ data: [UInt8], password: [UInt8], iterations: Int = defaultIterations, limits: PasswordKDFLimits = PasswordKDFLimits()
    ) throws(CofferFormatsError) -> [UInt8] {
        try CofferFormatsError.wrapping("decrypting") { () throws -> [UInt8] in
            var output: [UInt8] = []
            try decrypt(source: MemorySource(data), password: password, iterations: iterations, limits: limits) { output.append(contentsOf: $0) }
            return output
        }
    }

    static func encrypt(
        source: some ByteSource, password: [UInt8], iterations: Int,
        progress: ((Int64) -> Void)? = nil, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard iterations >= 1 else { throw CofferFormatsError(.invalidArgument, "expected a positive iteration count") }
        let salt = try SecureRandom.bytes(count: 8)
        let (key, iv) = try keyAndIV(password: password, salt: salt, iterations: iterations, limits: nil)
        try (magic + salt).withUnsafeBytes(output)
        var encryptor = CBCEncryptor(key: key, iv: iv)
        var done: Int64 = 0
        try source.forEachChunk(chunkSize: 1 << 16) { chunk in
            try encryptor.update(chunk, output: output)
            done += Int64(chunk.count)
            progress?(done)
        }
        try encryptor.finish(output: output)
    }

    static func decrypt(
        source: some ByteSource, password: [UInt8], iterations: Int, limits: PasswordKDFLimits = PasswordKDFLimits(),
        progress: ((Int64) -> Void)? = nil, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard iterations >= 1 else { throw CofferFormatsError(.invalidArgument, "expected a positive iteration count, found \(iterations)") }
        do {
            // OpenSSL derives the key and the IV together: 48 bytes, two blocks of SHA-256.
            try limits.check(.pbkdf2(iterations: iterations), deriving: 48, subject: "this decryption")
        } catch {
            throw CofferFormatsError(.costTooHigh, error.reason, underlying: error)
        }
        let header = try source.readPrefix(upTo: 16)
        guard header.count == 16, header.starts(with: magic) else {
            throw CofferFormatsError(.malformedCiphertext, "this is not an OpenSSL 'Salted__' file (was it written with -nosalt or -a?)")
        }
        let (key, iv) = try keyAndIV(password: password, salt: Array(header[8..<16]), iterations: iterations, limits: limits)
        var decryptor = CBCDecryptor(key: key, iv: iv, trailer: 0)
        var done: Int64 = 0
        try source.forEachChunk(chunkSize: 1 << 16) { chunk in
            try decryptor.update(chunk, consumed: { _ in }, output: output)
            done += Int64(chunk.count)
            progress?(done)
        }
        do {
            _ = try decryptor.finish(consumed: { _ in }, output: output)
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            // Bad padding: the only sign of a wrong password this unauthenticated format gives, and the
            // same sign of a file written with other settings, which the format does not record.
            throw CofferFormatsError(.authenticationFailed, Self.settingsMismatch)
        }
    }
}
