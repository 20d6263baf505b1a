import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading key files and writing key and signature files the way the CLI promises: whole small files,
/// atomic writes, 0600 for secrets.
enum KeyFiles {
    /// Reads a key file, asking for a password only if the key is encrypted.
    static func importKey(
        _ path: String,
        passwords: PasswordOptions,
        appleKeyClass: AppleKeyClass? = nil,
        allowingLegacyRSA: Bool = false,
        password once: PasswordOnce? = nil
    ) throws -> ImportedKey {
        let bytes = try KeyFile(contentsOf: path).bytes
        do {
            return try ImportedKey(
                importing: bytes,
                password: once?.get ?? { try passwords.read(prompt: "Password for \(path): ") },
                appleKeyClass: appleKeyClass,
                allowingLegacyRSA: allowingLegacyRSA
            )
        } catch {
            let hint: String? = switch error.code {
            case .passwordRequired: "pass --password-file FILE or --password-env VAR"
            case .ambiguousKey: "say which with --apple-key-class private or --apple-key-class public"
            case .costTooHigh: "the key demands more work than Coffer allows by default; re-encrypt it with lower cost"
            default: nil
            }
            // A wrong password is a check that failed (exit 1), as a wrong decryption password is.
            throw CommandFailure("\(path): \(error.reason)", hint: hint, exitCode: error.code == .wrongPassword ? ExitStatus.checkFailed : ExitStatus.inputError)
        }
    }

    /// Warns on standard error when a file that holds a secret is open to other users (any of the
    /// `0o077` bits in `permissions`, as `KeyFile.isExposedToOtherUsers` reports them), naming the
    /// `chmod` that fixes it. The file is still used: refusing is the caller's decision.
    static func warnIfExposed(_ what: String, path: String, permissions: UInt32?) {
        guard let permissions, permissions & 0o077 != 0 else { return }
        Terminal.warn("\(what) '\(path)' is accessible by other users (mode \(String(permissions & 0o777, radix: 8))); restrict it with 'chmod 600 \(path)'")
    }

    /// Whether anything exists at `path`.
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Writes bytes atomically; `secret` files get mode 0600, others 0644.
    static func write(_ bytes: [UInt8], to path: String, secret: Bool, overwrite: Bool) throws {
        if path == "-" {
            try bytes.withUnsafeBytes { try Terminal.writeData($0) }
            return
        }
        try prepared(bytes, to: path, secret: secret, overwrite: overwrite).commit()
    }

    /// `bytes` written in full to a file that has no name yet: `commit()` names it `path`, and a writer
    /// released without a commit leaves nothing behind. For outputs that appear together or not at all.
    static func prepared(_ bytes: [UInt8], to path: String, secret: Bool, overwrite: Bool) throws -> AtomicFileWriter {
        if !overwrite && access(path, F_OK) == 0 {
            throw CommandFailure("'\(path)' already exists", hint: "choose another name, or pass --force to replace it")
        }
        let writer = try AtomicFileWriter(destination: path, overwrite: overwrite)
        try writer.write(bytes)
        if !secret { try writer.setPermissions(0o644) }
        return writer
    }
}

/// A password asked for once, however many readers need it: a key file read as one kind of key and
/// then another asks (and, at a terminal, prompts) only once. Wiped when released.
final class PasswordOnce {
    private let read: () throws -> [UInt8]
    private var value: [UInt8]?

    init(_ read: @escaping () throws -> [UInt8]) {
        self.read = read
    }

    /// The password, read the first time it is asked for.
    func get() throws -> [UInt8] {
        if let value { return value }
        let read = try read()
        value = read
        return read
    }

    deinit {
        if var value { SecretBytes.wipe(&value) }
    }
}
