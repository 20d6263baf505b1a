import CofferCore

/// A token's PIN read from the file a URI's `pin-source=file:…` names: its first line, without the
/// line ending (as `openssl -pass file:` reads a password), and whether the file lets other users in.
///
/// ```swift
/// if var file = try uri.pinFile() {
///     defer { file.wipe() }
///     if file.isExposedToOtherUsers { print("chmod 600 \(file.path)") }
///     let key = try module.privateKey(uri, pin: file.pin)
/// }
/// ```
///
/// Library code reports and does not print: a caller that reads a PIN file others can read tells its
/// user (the `coffer` CLI warns on standard error).
public struct PKCS11PINFile: Sendable {
    /// The file's path, from the URI.
    public let path: String
    /// The PIN: the file's first line.
    public private(set) var pin: [UInt8]
    /// The file's permission bits as of reading it.
    public let permissions: UInt32?

    /// Whether users other than the owner may read or write the file (any of the `0o077` bits), which
    /// a file holding a PIN should not allow.
    public var isExposedToOtherUsers: Bool { (permissions ?? 0) & 0o077 != 0 }

    /// Reads the PIN file at `path`.
    /// - Throws: ``PKCS11Error`` `.pinSourceUnreadable` when the file cannot be read, is larger than a
    ///   key file may be, or its first line is empty.
    public init(path: String) throws(PKCS11Error) {
        var file: KeyFile
        do {
            file = try KeyFile(contentsOf: path)
        } catch {
            throw PKCS11Error(.pinSourceUnreadable, "the PIN file '\(path)' (pin-source) cannot be read: \(error.reason)", underlying: error)
        }
        defer { file.wipe() }
        pin = Array(file.bytes.prefix { $0 != 0x0A && $0 != 0x0D })
        guard !pin.isEmpty else { throw PKCS11Error(.pinSourceUnreadable, "the PIN file '\(path)' (pin-source) has an empty first line") }
        self.path = path
        permissions = file.permissions
    }

    /// Overwrites the PIN held in memory with zeros and empties it.
    public mutating func wipe() {
        SecretBytes.wipe(&pin)
        pin.removeAll()
    }
}

extension PKCS11URI {
    /// The PIN file the URI's `pin-source` names, read; nil when the URI has no `pin-source`.
    ///
    /// `pin-source` is a `file:` URI (`file:/etc/token-pin`, `file:///etc/token-pin`, or a path relative
    /// to the working folder, `file:pin.txt`); other sources (RFC 7512's `|program`) are refused.
    /// - Throws: ``PKCS11Error`` `.malformedURI` for a source that is not a local `file:` URI; the
    ///   errors of ``PKCS11PINFile/init(path:)``.
    public func pinFile() throws(PKCS11Error) -> PKCS11PINFile? {
        guard let source = pinSource else { return nil }
        guard source.lowercased().hasPrefix("file:") else {
            throw PKCS11Error(.malformedURI, "pin-source is a file: URI (pin-source=file:/path/to/pin); found '\(source)'")
        }
        var path = source.dropFirst("file:".count)
        if path.hasPrefix("//") {
            // file://host/path: only this machine's files (an empty host or localhost).
            let afterSlashes = path.dropFirst(2)
            let host = afterSlashes.prefix { $0 != "/" }
            guard host.isEmpty || host.lowercased() == "localhost" else {
                throw PKCS11Error(.malformedURI, "pin-source names a file on host '\(host)'; only this machine's files are read")
            }
            path = afterSlashes.dropFirst(host.count)
        }
        guard !path.isEmpty else { throw PKCS11Error(.malformedURI, "pin-source=file: names no file") }
        return try PKCS11PINFile(path: String(path))
    }
}
