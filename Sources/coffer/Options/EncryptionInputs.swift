import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a symmetric key file: 32 raw bytes (64 for RNCryptor's two keys), or the same as hex or
/// base64 text. The lengths never collide, so no flag is needed.
func readKeyFile(_ path: String) throws -> [UInt8] {
    var file = try KeyFile(contentsOf: path)
    defer { file.wipe() }
    if let key = SecretEncoding.detect(file.bytes, lengths: [32, 64]) { return key }
    throw CommandFailure(
        "key file '\(path)' does not hold a 32-byte key (raw, hex or base64)",
        hint: "make one with 'coffer random --raw --output \(path)'"
    )
}

/// Writes plaintext or ciphertext to its destination: a file that appears whole or not at all (0600,
/// unnamed until complete, never replacing a file that appeared meanwhile without `overwrite`), or
/// standard output, every write checked.
struct OutputTarget {
    let path: String
    let overwrite: Bool
    /// Whether success waits for the output to reach stable storage (file and folder; standard output
    /// when it is a regular file): for outputs that may be the only copy of their data.
    let durable: Bool

    /// What a producer writes to: the atomic file writer itself (so that a cipher can seal straight into
    /// its buffers), or a stream of bytes.
    enum Destination {
        case file(AtomicFileWriter)
        case stream((UnsafeRawBufferPointer) throws -> Void)

        /// Passes bytes on, whichever the destination.
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            switch self {
            case .file(let writer): try writer.write(bytes)
            case .stream(let output): try output(bytes)
            }
        }
    }

    func write(_ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        try write { (destination: Destination) in try produce(destination.write) }
    }

    /// Names of standard output that are paths (`-o /dev/stdout`): written as `-` is.
    static let standardOutputNames: Set<String> = ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]

    /// Whether `path` names a stream rather than a file: standard output, or a character device
    /// (`/dev/null`, a terminal). A stream is written as it is, never made or replaced.
    static func isStream(_ path: String) -> Bool {
        if standardOutputNames.contains(path) { return true }
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR
    }

    func write(_ produce: (Destination) throws -> Void) throws {
        if Self.standardOutputNames.contains(path) {
            try produce(.stream { try Terminal.writeData($0) })
            if durable { try Terminal.syncStandardOutput() } else { try Terminal.flush() }
            return
        }
        if Self.isStream(path) {
            let device: FileHandle
            do {
                device = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            } catch {
                throw CommandFailure("cannot write to '\(path)': \(error.localizedDescription)")
            }
            defer { try? device.close() }
            try produce(.stream { bytes in
                do {
                    try device.write(contentsOf: Data(bytes))
                } catch {
                    throw CommandFailure("cannot write to '\(path)': \(error.localizedDescription)")
                }
            })
            return
        }
        if !overwrite && KeyFiles.exists(path) {
            throw CommandFailure("'\(path)' already exists", hint: "choose another name with -o, or pass --force to replace it")
        }
        let writer = try AtomicFileWriter(destination: path, overwrite: overwrite, durable: durable, background: true)
        try produce(.file(writer))
        try writer.commit()
    }
}

extension EncryptionCipher {
    static func parse(_ name: String) throws -> EncryptionCipher {
        switch name.lowercased() {
        case "aes-gcm", "aes256-gcm", "aes-256-gcm": return .aes256GCM
        case "chacha", "chacha20-poly1305", "chachapoly": return .chaCha20Poly1305
        default: throw ValidationError("unknown cipher '\(name)'; expected aes-gcm or chacha")
        }
    }
}

func parseEncryptedFormat(_ name: String) throws -> EncryptedFormat {
    guard let format = EncryptedFormat(rawValue: name.lowercased()) else {
        throw ValidationError("unknown format '\(name)'; expected coffer, rncryptor or openssl")
    }
    return format
}

/// Reads `-r` recipient public-key files (X25519 or P-256), naming the file in any error. A private key
/// is refused: the public half is what others are given, and a private key passed where a public one
/// belongs is one step from being sent along with it.
func readRecipients(_ paths: [String]) throws -> [RecipientPublicKey] {
    try paths.map { path in
        let bytes = try KeyFile(contentsOf: path).bytes
        try refusePrivateKeys(in: bytes, path: path)
        do {
            return try RecipientPublicKey(importing: bytes)
        } catch let error as CofferFormatsError {
            throw CommandFailure("\(path): \(error.reason)")
        }
    }
}

/// Refuses a recipient file that holds a private key anywhere: a key any reader imports as private,
/// a PEM block labelled as one (PKCS #8, SEC1, OpenSSH), or a JWK line with a private member `d`.
/// The same rule for `-r` files and `-R` lists.
func refusePrivateKeys(in bytes: [UInt8], path: String) throws {
    let text = String(decoding: bytes.prefix(1 << 20), as: UTF8.self)
    let jwkWithPrivatePart = text.split(whereSeparator: \.isNewline).contains { line in
        guard line.contains("\"d\""), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return false }
        return object["d"] != nil
    }
    guard (try? RecipientPrivateKey(importing: bytes)) != nil || text.contains("PRIVATE KEY") || jwkWithPrivatePart else { return }
    throw CommandFailure(
        "'\(path)' holds a private key; a recipient is given by its public key",
        hint: "write the public half with 'coffer key convert KEY --to pem --public-only -o KEY.pub' and pass that"
    )
}

/// `keys` without repeats (the same key given twice, by -r and -R or twice in a list, is one
/// recipient), in the order first given.
func distinctRecipients(_ keys: [RecipientPublicKey]) -> [RecipientPublicKey] {
    var seen: Set<[UInt8]> = []
    return keys.filter { seen.insert($0.derRepresentation).inserted }
}

/// Reads the keys `-R` recipients files list (``RecipientList``).
func readRecipientFiles(_ paths: [String]) throws -> [RecipientPublicKey] {
    var recipients: [RecipientPublicKey] = []
    for path in paths {
        let bytes = try KeyFile(contentsOf: path).bytes
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CommandFailure("\(path): a recipients file is text (UTF-8)") }
        try refusePrivateKeys(in: bytes, path: path)
        do {
            recipients += try RecipientList.parse(text)
        } catch {
            throw CommandFailure("\(path)\(error.line.map { ":\($0)" } ?? ""): \(error.reason)")
        }
    }
    return recipients
}

/// Reads an `-i` identity (a recipient private key); `password` is asked only for an encrypted key.
func readIdentity(_ path: String, password: @escaping ImportedKey.PasswordProvider) throws -> RecipientPrivateKey {
    let bytes = try KeyFile(contentsOf: path).bytes
    do {
        return try RecipientPrivateKey(importing: bytes, password: password)
    } catch {
        // A wrong password is a check that failed (exit 1), as it is on decryption.
        throw CommandFailure("\(path): \(error.reason)", exitCode: error.code == .wrongPassword ? ExitStatus.checkFailed : ExitStatus.inputError)
    }
}

/// The 32 key bytes stored in the keychain under `tag` (`coffer server data-key fetch --keychain-tag`):
/// the keychain at `path` (or the default), unlocked by the session from `coffer keychain unlock` or
/// by its password asked on the terminal.
func readKeychainKey(tag: String, path: String?, passwords: PasswordOptions, limits: PasswordKDFLimits = PasswordKDFLimits()) throws -> [UInt8] {
    let keychain = try KeychainOptions.openUnlocked(at: try path ?? Keychain.defaultPath(), password: passwords, limits: limits)
    do {
        return try keychain.encryptionKey(tag: tag).withUnsafeKeyBytes { Array($0) }
    } catch {
        throw CommandFailure(error.reason, hint: error.code == .itemNotFound ? "store one with 'coffer server data-key fetch --keychain-tag \(tag)'" : nil)
    }
}
