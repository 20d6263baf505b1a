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
        keyID = Hex.encode(DigestAlgorithm.sha256.hash(Array("coffer-master-key-id".utf8) + bytes).bytes.prefix(8))
    }

    /// The master key in the file at `path`: exactly 32 raw bytes, in a file only its owner can read
    /// (mode 0600 or 0400, checked on the file as opened). A file others can read has been exposed to
    /// them, whatever else protects the host, and is refused.
    /// - Throws: ``ServerConfigurationError`` `.exposedMasterKeyFile` for another mode (its hint is the
    ///   `chmod` to run); `.invalidMasterKey` when the file cannot be read or is not 32 bytes.
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
        do {
            try self.init(bytes: file.bytes)
        } catch {
            throw ServerConfigurationError(.invalidMasterKey, "the master key file '\(path)' holds \(file.bytes.count) bytes; expected 32 raw bytes", hint: error.hint)
        }
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
}
