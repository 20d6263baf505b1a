import ArgumentParser
import CofferCore
import CofferCrypto

struct Random: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print random bytes from the system's secure generator, for keys, salts and tokens.",
        discussion: """
            Bytes come from the operating system's cryptographically secure generator (getrandom on \
            Linux) through swift-crypto. Text forms end with a line feed; --raw writes bytes only and \
            refuses to write them to a terminal.

            With --output the bytes go to a new file created with mode 0600 and written atomically, the \
            safe way to make a key file.

            Examples:
              coffer random                       # 32 bytes as hex
              coffer random 16 --base64url
              coffer random --raw --output mac.key
            """
    )

    enum Encoding: String, EnumerableFlag {
        case hex, base64, base64url, raw

        static func help(for value: Encoding) -> ArgumentHelp? {
            switch value {
            case .hex: "Lower-case hex."
            case .base64: "Standard base64 with padding."
            case .base64url: "URL-safe base64 without padding (for tokens in URLs and headers)."
            case .raw: "The bytes themselves."
            }
        }
    }

    /// The most `--bytes` accepts: 1 GiB is far beyond any key, and bounds a typo.
    static let maximumByteCount = 1 << 30

    @Option(name: .customLong("bytes"), help: ArgumentHelp("How many random bytes (default: 32).", valueName: "n"))
    var bytesOption: Int?

    @Argument(help: ArgumentHelp("How many random bytes, as --bytes ('coffer random 16', as 'openssl rand -hex 16').", valueName: "n"))
    var count: Int?

    /// How many bytes: the argument or --bytes (which must agree when both are given), else 32.
    var bytes: Int { count ?? bytesOption ?? 32 }

    @Flag(exclusivity: .exclusive)
    var encoding: Encoding = .hex

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this new file (mode 0600) instead of standard output.", valueName: "file"))
    var output: String?

    @Flag(help: "With --output, replace an existing file.")
    var force = false

    func validate() throws {
        if let count, let bytesOption, count != bytesOption {
            throw ValidationError("the count \(count) and --bytes \(bytesOption) disagree; give one")
        }
        guard (1...Self.maximumByteCount).contains(bytes) else {
            throw ValidationError("--bytes must be from 1 to \(Self.maximumByteCount), found \(bytes)")
        }
        if force && output == nil { throw ValidationError("--force only applies with --output") }
    }

    func run() throws {
        if output == nil && encoding == .raw && Terminal.standardOutputIsTerminal {
            throw CommandFailure("refusing to write raw random bytes to a terminal", hint: "redirect to a file, use --output FILE, or choose --hex")
        }
        let writer = try output.map { try AtomicFileWriter(destination: $0, overwrite: force) }
        // 48 KiB is a multiple of 3, so base64 chunks join without padding in between.
        let chunkSize = 48 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        var remaining = bytes
        while remaining > 0 {
            let count = min(remaining, chunkSize)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            SecureRandom.fill(chunk)
            try emit(UnsafeRawBufferPointer(chunk), to: writer)
            remaining -= count
        }
        if encoding != .raw { try emit(text: "\n", to: writer) }
        try writer?.commit()
    }

    private func emit(_ chunk: UnsafeRawBufferPointer, to writer: AtomicFileWriter?) throws {
        switch encoding {
        case .raw:
            if let writer { try writer.write(chunk) } else { try Terminal.writeData(chunk) }
        case .hex: try emit(text: Hex.encode(chunk), to: writer)
        case .base64: try emit(text: Base64.encode(chunk), to: writer)
        case .base64url: try emit(text: Base64.encodeURLSafe(chunk), to: writer)
        }
    }

    private func emit(text: String, to writer: AtomicFileWriter?) throws {
        var text = text
        if let writer { try writer.write(Array(text.utf8)) } else { try text.withUTF8 { try Terminal.writeData(UnsafeRawBufferPointer($0)) } }
    }
}
