import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

struct HMACCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hmac",
        abstract: "Compute or verify an HMAC of a file with a shared secret key.",
        discussion: """
            The key is read from a file (-k/--key) or an environment variable (--key-env), never from \
            the command line. By default its bytes are used as they are; --key-encoding hex|base64 \
            decodes text keys. Make a key with:
              coffer random --raw --output mac.key

            Output is 'TAG  NAME' in hex (or --base64, --json). With --verify TAG the command prints \
            'NAME: OK' and exits 0 when the tag matches, 'NAME: FAILED' and exits 1 when it does not. TAG \
            may be hex or base64; the comparison takes constant time. A truncated tag is accepted only \
            when --truncate says how long it must be (at least 10 bytes).

            Algorithms: sha256 (default), sha384, sha512; insecure-sha1 for legacy protocols.

            Examples:
              coffer hmac -k mac.key message.json
              COFFER_KEY=… coffer hmac --key-env COFFER_KEY --key-encoding hex -
              coffer hmac -k mac.key --verify 5d7c…e1 message.json
              coffer hmac -k mac.key --verify 5d7c…e1 --json message.json
            """
    )

    @Option(
        name: [.customShort("a"), .customLong("algorithm")],
        help: ArgumentHelp("The hash inside the HMAC (default: sha256).", valueName: "algorithm"),
        completion: .list(["sha256", "sha384", "sha512", "insecure-sha1"]),
        transform: parseMACAlgorithm
    )
    var algorithm: MACAlgorithm = .hmacSHA256

    @OptionGroup(title: "Key")
    var key: KeyOptions

    @Option(help: ArgumentHelp("Truncate the tag to this many bytes (10 or more).", valueName: "bytes"))
    var truncate: Int?

    @Option(help: ArgumentHelp("Check the file against this tag instead of printing one.", valueName: "tag"))
    var verify: String?

    @Flag(exclusivity: .exclusive)
    var encoding: DigestEncoding = .hex

    @Flag(help: "Print a JSON object: path, algorithm, hex, base64, size; with --verify, path, algorithm, size and ok.")
    var json = false

    @Argument(help: "The file to authenticate; '-' or nothing reads standard input.")
    var file: String = "-"

    func validate() throws {
        if let truncate, !(MACAlgorithm.minimumTagByteCount...algorithm.tagByteCount).contains(truncate) {
            throw ValidationError(
                "--truncate must be from \(MACAlgorithm.minimumTagByteCount) to \(algorithm.tagByteCount) bytes for \(algorithm.standardName), found \(truncate)"
            )
        }
        if json && encoding == .base64 {
            throw ValidationError("--json already carries hex and base64; drop --base64")
        }
        if verify != nil && encoding == .base64 {
            throw ValidationError("--verify prints OK or FAILED (or --json's verdict); --base64 does not apply to it")
        }
    }

    func run() throws {
        if algorithm.isInsecure {
            Terminal.warn("HMAC-SHA-1 is kept only for legacy protocols; prefer sha256")
        }
        let macKey = try key.load()
        let expectedLength = truncate ?? algorithm.tagByteCount
        let expected = try verify.map { try decodeTag($0, length: expectedLength) }

        let reader = try FileReader.open(file)
        let progress = ProgressBar(total: reader.size, label: file)
        var authenticator = MessageAuthenticator(algorithm, key: macKey)
        var size: Int64 = 0
        try reader.forEachChunk { chunk in
            authenticator.update(chunk)
            size += Int64(chunk.count)
            progress.update(size)
        }
        progress.finish()
        let tag = try authenticator.finalize(truncatedTo: truncate)
        let name = ChecksumList.displayName(file)

        if let expected {
            // The verdict only: the tag the key makes is never printed here, so a verifier fed
            // others' messages does not hand out valid tags for them.
            let matches = ConstantTime.equals(tag.bytes, expected)
            if json {
                try JSONLines.write(MACVerdict(path: file, algorithm: algorithm.rawValue, size: size, ok: matches))
            } else {
                Terminal.writeLine("\(name): \(matches ? "OK" : "FAILED")")
            }
            if !matches {
                throw CommandFailure("the \(algorithm.standardName) tag of \(file == "-" ? "standard input" : "'\(file)'") does not match", exitCode: ExitStatus.checkFailed)
            }
        } else if json {
            try JSONLines.write(DigestRecord(path: file, algorithm: algorithm.rawValue, hex: tag.hex, base64: tag.base64, size: size))
        } else {
            let text = encoding == .base64 ? tag.base64 : tag.hex
            Terminal.writeLine(name == file ? "\(text)  \(file)" : "\\\(text)  \(name.dropFirst())")
        }
    }

    /// Decodes a tag given as hex or base64, telling the two apart by the length the tag must have.
    private func decodeTag(_ text: String, length: Int) throws -> [UInt8] {
        let hexLength = length * 2
        let base64Length = (length + 2) / 3 * 4
        if text.utf8.count == hexLength, let bytes = try? Hex.decode(text) { return bytes }
        if text.utf8.count == base64Length, let bytes = try? Base64.decode(text), bytes.count == length { return bytes }
        if let bytes = try? Base64.decodeURLSafe(text), bytes.count == length { return bytes }
        let found = (try? Hex.decode(text)).map { "\($0.count) bytes of hex" } ?? "\(text.utf8.count) characters"
        var hint = "pass the full tag"
        if let decoded = (try? Hex.decode(text)) ?? (try? Base64.decode(text)), decoded.count < algorithm.tagByteCount,
            decoded.count >= MACAlgorithm.minimumTagByteCount, truncate == nil
        {
            hint = "if your protocol truncates tags, say --truncate \(decoded.count)"
        }
        throw CommandFailure(
            "expected a \(length)-byte \(algorithm.standardName) tag (\(hexLength) hex digits or \(base64Length) base64 characters) for --verify, found \(found)",
            hint: hint
        )
    }
}

/// What `coffer hmac --verify --json` prints: the verdict, never the tag the key makes.
struct MACVerdict: Encodable {
    let path: String
    let algorithm: String
    let size: Int64
    let ok: Bool
}
