import ArgumentParser
import CofferCore
import CofferCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How key bytes are written in a key file or variable.
enum KeyEncoding: String, ExpressibleByArgument, CaseIterable {
    /// The bytes exactly as stored (a file written by `coffer random --raw`).
    case raw
    /// Hex text; one trailing line break is ignored.
    case hex
    /// Standard base64 text; one trailing line break is ignored.
    case base64
}

/// Where a secret key comes from. Never argv: command lines show up in `ps` and shell history.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp("Read the key from this file.", valueName: "file"))
    var keyFile: String?

    @Option(name: .customLong("key-env"), help: ArgumentHelp("Read the key from this environment variable.", valueName: "var"))
    var keyEnvironmentVariable: String?

    @Option(name: .customLong("key-encoding"), help: "How the key is written: raw, hex or base64.")
    var keyEncoding: KeyEncoding = .raw

    /// Key files larger than this are certainly not keys.
    static let maximumKeyFileSize = 64 * 1024

    func validate() throws {
        switch (keyFile, keyEnvironmentVariable) {
        case (nil, nil):
            throw ValidationError("a key is required: pass --key-file FILE or --key-env VAR (keys are never read from the command line)")
        case (.some, .some):
            throw ValidationError("--key-file and --key-env are alternatives; pass one")
        default: break
        }
    }

    /// Reads and decodes the key.
    func load() throws -> MACKey {
        if let keyFile { return try Self.loadFile(keyFile, encoding: keyEncoding) }
        guard let name = keyEnvironmentVariable else {
            throw CommandFailure("a key is required: pass --key-file FILE or --key-env VAR")
        }
        guard let value = getenv(name) else {
            throw CommandFailure("environment variable \(name) is not set", hint: "export \(name) first, or use --key-file")
        }
        var bytes = Array(String(cString: value).utf8)
        defer { SecretBytes.wipe(&bytes) }
        return try Self.decode(bytes, encoding: keyEncoding, source: "environment variable \(name)", fromFile: false)
    }

    /// Reads a key file (warning when other users can read it) and decodes it; also the HMAC secrets
    /// of `coffer http sign|verify`.
    static func loadFile(_ path: String, encoding: KeyEncoding) throws -> MACKey {
        var bytes = try readKeyFile(path)
        defer { SecretBytes.wipe(&bytes) }
        return try decode(bytes, encoding: encoding, source: "key file '\(path)'", fromFile: true)
    }

    /// Key bytes as `encoding` writes them; for text, one trailing line break is ignored.
    private static func decode(_ bytes: [UInt8], encoding: KeyEncoding, source: String, fromFile: Bool) throws -> MACKey {
        switch encoding {
        case .raw:
            if bytes.last == UInt8(ascii: "\n") && fromFile {
                Terminal.warn("the \(source) ends with a line feed, which is part of a raw key; if the file holds hex or base64 text, pass --key-encoding")
            }
            return try key(bytes, source: source)
        case .hex, .base64:
            var text = bytes[...]
            if text.last == UInt8(ascii: "\n") { text = text.dropLast() }
            if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
            let string = String(decoding: text, as: UTF8.self)
            do {
                var decoded = encoding == .hex ? try Hex.decode(string) : try Base64.decode(string)
                defer { SecretBytes.wipe(&decoded) }
                return try key(decoded, source: source)
            } catch let error as CofferCoreError {
                throw CommandFailure("the \(source) is not valid \(encoding.rawValue): \(error.reason)")
            }
        }
    }

    private static func key(_ bytes: [UInt8], source: String) throws -> MACKey {
        do {
            return try MACKey(bytes: bytes)
        } catch {
            throw CommandFailure("the \(source) is empty", hint: "make a key with 'coffer random --raw --output FILE'")
        }
    }

    private static func readKeyFile(_ path: String) throws -> [UInt8] {
        let reader = try FileReader(path: path)
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            Terminal.warn("key file '\(path)' is accessible by other users (mode \(mode)); restrict it with 'chmod 600 \(path)'")
        }
        guard let bytes = try reader.readAll(limit: maximumKeyFileSize) else {
            throw CommandFailure("key file '\(path)' is larger than \(maximumKeyFileSize / 1024) KiB; it does not look like a key")
        }
        return bytes
    }
}
