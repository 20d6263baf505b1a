public import ArgumentParser
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
extension SecretEncoding: ExpressibleByArgument {}

/// Where a secret key comes from. Never argv: command lines show up in `ps` and shell history.
struct KeyOptions: ParsableArguments {
    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Read the key from this file.", valueName: "file"))
    var keyPath: String?

    /// The spelling before the flags became one language (docs/CLI.md).
    @Option(name: .customLong("key-file"), help: .hidden)
    var deprecatedKeyFile: String?

    var keyFile: String? { keyPath ?? deprecatedKeyFile }

    @Option(name: .customLong("key-env"), help: ArgumentHelp("Read the key from this environment variable.", valueName: "var"))
    var keyEnvironmentVariable: String?

    @Option(name: .customLong("key-encoding"), help: "How the key is written: raw, hex or base64.")
    var keyEncoding: SecretEncoding = .raw

    func validate() throws {
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        switch (keyFile, keyEnvironmentVariable) {
        case (nil, nil):
            throw ValidationError("a key is required: pass -k/--key FILE or --key-env VAR (keys are never read from the command line)")
        case (.some, .some):
            throw ValidationError("-k/--key and --key-env are alternatives; pass one")
        default: break
        }
    }

    /// Reads and decodes the key.
    func load() throws -> MACKey {
        if let keyFile { return try Self.loadFile(keyFile, encoding: keyEncoding) }
        guard let name = keyEnvironmentVariable else {
            throw CommandFailure("a key is required: pass -k/--key FILE or --key-env VAR")
        }
        guard let value = getenv(name) else {
            throw CommandFailure("environment variable \(name) is not set", hint: "export \(name) first, or use -k/--key FILE")
        }
        var bytes = Array(String(cString: value).utf8)
        defer { SecretBytes.wipe(&bytes) }
        return try Self.decode(bytes, encoding: keyEncoding, source: "environment variable \(name)", fromFile: false)
    }

    /// Reads a key file (warning when other users can read it) and decodes it; also the HMAC secrets
    /// of `coffer http sign|verify`.
    static func loadFile(_ path: String, encoding: SecretEncoding) throws -> MACKey {
        var file = try KeyFile(contentsOf: path)
        defer { file.wipe() }
        KeyFiles.warnIfExposed("key file", path: path, permissions: file.permissions)
        return try decode(file.bytes, encoding: encoding, source: "key file '\(path)'", fromFile: true)
    }

    /// Key bytes as `encoding` writes them; for text, one trailing line break is ignored.
    private static func decode(_ bytes: [UInt8], encoding: SecretEncoding, source: String, fromFile: Bool) throws -> MACKey {
        switch encoding {
        case .raw:
            if bytes.last == UInt8(ascii: "\n") && fromFile {
                Terminal.warn("the \(source) ends with a line feed, which is part of a raw key; if the file holds hex or base64 text, pass --key-encoding")
            }
            return try key(bytes, source: source)
        case .hex, .base64:
            do {
                var decoded = try encoding.decode(bytes)
                defer { SecretBytes.wipe(&decoded) }
                return try key(decoded, source: source)
            } catch is CofferCoreError {
                // Not the decoder's reason: it quotes the first character it refused and says where,
                // which is part of the secret.
                throw CommandFailure("the \(source) is not valid \(encoding.rawValue)", hint: "give the encoding the key is written in with --key-encoding raw, hex or base64")
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
}
