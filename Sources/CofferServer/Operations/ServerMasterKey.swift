import CofferCore
import CofferCrypto
import CofferFormats
import Crypto
import Foundation

/// A key that wraps stored data keys and HMAC secrets (envelope encryption): 32 bytes from a file or the
/// environment, never in the database. Each stored row names the master key that wrapped it; an
/// instance holds one or more of them in a ``ServerMasterKeyring`` (docs/SERVER.md, "The master keyring").
public struct ServerMasterKey: Sendable {
    private let key: SymmetricKey
    /// The key that authenticates key records (docs/SERVER.md, "Authenticated key records"): HKDF-SHA256
    /// of the master key, so that no tag is ever made with the key that wraps.
    private let recordKey: SymmetricKey
    /// A public name for this key: the first 8 bytes of SHA-256 over a label and the key, hex. Stored
    /// beside each data key; reveals nothing of the key.
    public let keyID: String

    /// A master key from its 32 bytes.
    /// - Throws: ``ServerConfigurationError`` `.invalidMasterKey` for another length.
    public init(bytes: [UInt8]) throws(ServerConfigurationError) {
        guard bytes.count == 32 else {
            throw ServerConfigurationError(.invalidMasterKey, "the master key must be 32 bytes, found \(bytes.count)", hint: "32 random bytes, kept out of the database")
        }
        key = SymmetricKey(data: bytes)
        recordKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Array("coffer-key-record-tag v1".utf8), outputByteCount: 32)
        keyID = Hex.encode(DigestAlgorithm.sha256.hash(Array("coffer-master-key-id".utf8) + bytes).bytes.prefix(8))
    }

    /// The master key in the file at `path`: exactly 32 raw bytes, in a file only its owner can read
    /// (mode 0600 or 0400, checked on the file as opened), owned by the user the server runs as or by
    /// root, in folders that no one else can change (each folder up to `/`, along the path as written and
    /// with its links resolved, owned by that user or root and not writable by others unless sticky, as
    /// `/tmp` is: `ssh` holds its keys to the same rules).
    /// A file others can read has been exposed to them, and one others could replace, by owning it or
    /// a folder above it, is theirs: both are refused.
    /// - Throws: ``ServerConfigurationError`` `.exposedMasterKeyFile` for another mode, another owner
    ///   or a folder others can change (its hint is the `chmod` or `chown` to run); `.invalidMasterKey`
    ///   when the file cannot be read or is not 32 bytes.
    public init(contentsOf path: String) throws(ServerConfigurationError) {
        var file: KeyFile
        do {
            file = try KeyFile(contentsOf: path)
        } catch {
            throw ServerConfigurationError(.invalidMasterKey, "cannot read the master key file '\(path)': \(error.reason)", underlying: error)
        }
        defer { file.wipe() }
        if let mode = file.permissions.map({ $0 & 0o777 }), mode != 0o600 && mode != 0o400 {
            let octal = String(mode, radix: 8)
            throw ServerConfigurationError(
                .exposedMasterKeyFile,
                "the master key file '\(path)' has mode \(String(repeating: "0", count: 4 - octal.count) + octal); expected 0600 or 0400 (its owner alone reads it)",
                hint: "chmod 600 '\(path)'"
            )
        }
        let user = UInt32(geteuid())
        if let owner = file.owner, owner != user && owner != 0 {
            throw ServerConfigurationError(
                .exposedMasterKeyFile,
                "the master key file '\(path)' belongs to user \(owner); expected the user the server runs as (\(user)) or root, the only ones who may hold it",
                hint: "chown \(user) '\(path)'"
            )
        }
        if path != "-", let folder = Self.folderOthersCanChange(above: path, user: user) {
            throw ServerConfigurationError(
                .exposedMasterKeyFile,
                "the master key file '\(path)' is in '\(folder.path)', which \(folder.why): whoever can change the folder can replace the key",
                hint: folder.hint
            )
        }
        do {
            try self.init(bytes: file.bytes)
        } catch {
            throw ServerConfigurationError(.invalidMasterKey, "the master key file '\(path)' holds \(file.bytes.count) bytes; expected 32 raw bytes", hint: error.hint)
        }
    }

    /// The first folder that someone other than `user` and root could change, from the file's up to `/`,
    /// along the path as written and along the path with its links resolved (a link in a folder others
    /// can write is theirs to point elsewhere): one owned by another user, or writable by its group or
    /// by others without the sticky bit (which keeps others from replacing what they do not own). Nil
    /// when there is none.
    static func folderOthersCanChange(above path: String, user: UInt32) -> (path: String, why: String, hint: String)? {
        var files = [URL(fileURLWithPath: path).standardizedFileURL.path]
        if let resolved = realpath(path, nil) {
            files.append(String(cString: resolved))
            free(resolved)
        }
        for file in files {
            var folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
            while true {
                var info = stat()
                guard stat(folder, &info) == 0 else { break }
                let mode = UInt32(info.st_mode) & 0o7777
                if info.st_uid != user && info.st_uid != 0 {
                    return (folder, "belongs to user \(info.st_uid)", "keep the key in a folder of the server's user or root")
                }
                if mode & 0o022 != 0 && mode & UInt32(S_ISVTX) == 0 {
                    let octal = String(mode, radix: 8)
                    return (folder, "others can write to (mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal))", "chmod go-w '\(folder)'")
                }
                guard folder != "/" else { break }
                folder = URL(fileURLWithPath: folder).deletingLastPathComponent().path
            }
        }
        return nil
    }

    /// A master key from its 32 bytes in base64 (surrounding white space ignored), as an environment
    /// variable carries it.
    /// - Throws: ``ServerConfigurationError`` `.invalidMasterKey` for text that is not base64 of 32 bytes.
    public init(base64Encoded text: String) throws(ServerConfigurationError) {
        guard var bytes = try? Base64.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ServerConfigurationError(.invalidMasterKey, "the master key is not base64", hint: "32 random bytes in base64")
        }
        defer { SecretBytes.wipe(&bytes) }
        try self.init(bytes: bytes)
    }

    /// AES-256-GCM of `dataKey` bound to `context`: nonce ‖ ciphertext ‖ tag, base64.
    func wrap(_ dataKey: [UInt8], context: [UInt8]) throws -> String {
        let box = try AES.GCM.seal(dataKey, using: key, authenticating: context)
        return Base64.encode(Array(box.combined ?? Data()))
    }

    /// The data key a row holds, or nil when it does not open (another master key, a changed row).
    func unwrap(_ wrapped: String, context: [UInt8]) -> [UInt8]? {
        guard let bytes = try? Base64.decode(wrapped), let box = try? AES.GCM.SealedBox(combined: bytes),
              let opened = try? AES.GCM.open(box, using: key, authenticating: context) else { return nil }
        return Array(opened)
    }

    /// HMAC-SHA256 of `message` under the key-record key.
    func recordTag(_ message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: recordKey))
    }

    /// Whether `tag` is the key-record tag of `message` (compared in constant time).
    func isRecordTag(_ tag: [UInt8], of message: [UInt8]) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: message, using: recordKey)
    }
}
