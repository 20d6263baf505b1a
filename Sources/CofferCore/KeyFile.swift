/// A key, certificate or secret file read whole, under one set of rules for every Coffer module and
/// command: at most ``maximumSize`` bytes, `-` for standard input, typed errors that name the path.
///
/// ```swift
/// var file = try KeyFile(contentsOf: "hmac.key")
/// defer { file.wipe() }
/// if file.isExposedToOtherUsers { log("chmod 600 hmac.key") }
/// let key = try SecretEncoding.hex.decode(file.bytes)
/// ```
public struct KeyFile: Sendable {
    /// The most a key, certificate or secret file may hold: 1 MiB. Anything larger is not one, and is
    /// refused before it is read whole.
    public static let maximumSize = 1 << 20

    /// The path as given (`-` for standard input).
    public let path: String
    /// The file's contents.
    public private(set) var bytes: [UInt8]
    /// The file's permission bits as of reading it; nil for standard input.
    public let permissions: UInt32?
    /// The user id owning the file as of reading it; nil for standard input.
    public let owner: UInt32?

    /// Reads the file at `path`, or standard input for `-`.
    /// - Throws: ``CofferCoreError`` `.invalidArgument` when it holds more than ``maximumSize`` bytes;
    ///   `.fileNotFound`, `.permissionDenied`, `.isDirectory` or `.ioFailure` when it cannot be read.
    public init(contentsOf path: String) throws(CofferCoreError) {
        let reader = try FileReader.open(path)
        guard let read = try reader.readAll(limit: Self.maximumSize) else {
            throw CofferCoreError(.invalidArgument, "'\(path)' is larger than 1 MiB; it is not a key, certificate or secret file")
        }
        self.path = path
        self.bytes = read
        self.permissions = reader.permissions
        self.owner = reader.owner
    }

    /// Whether users other than the owner may read or write the file (any of the `0o077` bits), which
    /// a file holding a secret should not allow.
    public var isExposedToOtherUsers: Bool { (permissions ?? 0) & 0o077 != 0 }

    /// Overwrites the contents held in memory with zeros and empties them.
    public mutating func wipe() {
        SecretBytes.wipe(&bytes)
        bytes.removeAll()
    }
}

/// How a secret is written in a file or variable: its bytes as they are, or text.
public enum SecretEncoding: String, Sendable, Hashable, CaseIterable {
    /// The bytes exactly as stored (a file written by `coffer random --raw`).
    case raw
    /// Hex text (either case).
    case hex
    /// Standard base64 text, padded.
    case base64

    /// The secret's bytes. For text, one trailing line break (LF or CRLF) is ignored; raw bytes are
    /// taken as they are, line feed included.
    /// - Throws: ``CofferCoreError`` when the text is not valid in this encoding.
    public func decode(_ stored: [UInt8]) throws(CofferCoreError) -> [UInt8] {
        guard self != .raw else { return stored }
        var text = stored[...]
        if text.last == UInt8(ascii: "\n") { text = text.dropLast() }
        if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
        let string = String(decoding: text, as: UTF8.self)
        return self == .hex ? try Hex.decode(string) : try Base64.decode(string)
    }

    /// A secret of one of `lengths` bytes, in whichever encoding yields such a length: raw bytes of such
    /// a length, else hex, else base64 text (trailing line breaks ignored). The lengths of the three
    /// never collide for keys of 16 bytes and more, so no encoding need be named. Nil when none does.
    public static func detect(_ stored: [UInt8], lengths: Set<Int>) -> [UInt8]? {
        if lengths.contains(stored.count) { return stored }
        var text = stored[...]
        while let last = text.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { text = text.dropLast() }
        let string = String(decoding: text, as: UTF8.self)
        if let decoded = try? Hex.decode(string), lengths.contains(decoded.count) { return decoded }
        if let decoded = try? Base64.decode(string), lengths.contains(decoded.count) { return decoded }
        return nil
    }
}
