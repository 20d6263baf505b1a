import ArgumentParser
import CofferCore
import CofferFormats

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe an encrypted file without decrypting it.",
        discussion: """
            Prints the format, version, key derivation and cost, cipher, segment size and the key ids of \
            the keys or recipients that can open it. Nothing secret is needed or shown.

            Examples:
              coffer inspect backup.tar.coffer
              coffer inspect --json backup.tar.coffer
            """
    )

    @Argument(help: "The encrypted file ('-' for standard input).")
    var file: String

    @Flag(help: "One JSON object: format, armored, cipher, segmentBytes, opensWith, plaintextBytes.")
    var json = false

    func run() throws {
        let reader = try FileReader.open(file)
        let prefix = try reader.readPrefix(upTo: 16)
        let armored = CofferArmor.mayBeArmor(prefix)
        guard let format = armored ? .coffer : EncryptedFormat.detect(prefix) else {
            throw CommandFailure("'\(file)' is not a Coffer, RNCryptor v3 or OpenSSL Salted__ file")
        }
        var description = EncryptedFileDescription(format: format.description, armored: armored)
        switch format {
        case .coffer:
            let header: EncryptedFileHeader
            do {
                header = try EncryptedFileHeader.parse(prefix: prefix, reader: reader)
            } catch let error as CofferFormatsError {
                throw CommandFailure("\(file): \(error.reason)")
            }
            description.cipher = header.cipher.description
            description.segmentBytes = header.segmentSize
            description.opensWith = header.stanzas.map(\.summary)
            if let size = reader.size, !armored {
                let headerSize = Int64(header.encodedSize)
                let sealed = max(0, size - headerSize)
                let full = Int64(header.segmentSize + 16)
                let segments = max(1, (sealed + full - 1) / full)
                description.plaintextBytes = max(0, sealed - 16 * segments)
            }
        case .rncryptor:
            let mode = prefix.count > 1 && prefix[1] == 1 ? "password (PBKDF2-HMAC-SHA-1, 10,000 iterations)" : "key (encryption and HMAC keys)"
            description.opensWith = [mode]
            description.cipher = "AES-256-CBC with HMAC-SHA-256"
        case .openssl:
            description.opensWith = ["password (PBKDF2-HMAC-SHA-256; the iteration count is not stored: OpenSSL's default is 10,000)"]
            description.cipher = "AES-256-CBC, NOT authenticated"
            description.salt = Hex.encode(prefix.dropFirst(8))
        }
        if json {
            try JSONLines.write(description)
            return
        }
        Terminal.writeLine("format:       \(description.format)\(armored ? " (armoured text)" : "")")
        if let cipher = description.cipher, format != .coffer { Terminal.writeLine("cipher:       \(cipher)") }
        if format == .coffer {
            Terminal.writeLine("cipher:       \(description.cipher ?? "")")
            Terminal.writeLine("segments:     \(formatBytes(Int64(description.segmentBytes ?? 0))) of plaintext each")
        }
        for opener in description.opensWith { Terminal.writeLine("opens with:   \(opener)") }
        if let plaintext = description.plaintextBytes { Terminal.writeLine("plaintext:    \(formatBytes(plaintext)) (from the file size)") }
        if let salt = description.salt { Terminal.writeLine("salt:         \(salt)") }
    }
}

/// What `inspect --json` prints.
struct EncryptedFileDescription: Encodable {
    let format: String
    let armored: Bool
    var cipher: String?
    var segmentBytes: Int?
    var opensWith: [String] = []
    var plaintextBytes: Int64?
    var salt: String?
}
