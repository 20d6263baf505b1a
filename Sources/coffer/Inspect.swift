import ArgumentParser
import CofferCore
import CofferFormats

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe an encrypted file without decrypting it.",
        discussion: """
            Prints the format, version, key derivation and cost, cipher, segment size and the key ids of \
            the keys or recipients that can open it. Nothing secret is needed or shown.

            Example:
              coffer inspect backup.tar.coffer
            """
    )

    @Argument(help: "The encrypted file ('-' for standard input).")
    var file: String

    func run() throws {
        let reader = try FileReader.open(file)
        let prefix = try reader.readPrefix(upTo: 16)
        guard let format = EncryptedFormat.detect(prefix) else {
            throw CommandFailure("'\(file)' is not a Coffer, RNCryptor v3 or OpenSSL Salted__ file")
        }
        Terminal.writeLine("format:       \(format)")
        switch format {
        case .coffer:
            let header: EncryptedFileHeader
            do {
                header = try EncryptedFileHeader.parse(prefix: prefix, reader: reader)
            } catch let error as CofferFormatsError {
                throw CommandFailure("\(file): \(error.reason)")
            }
            Terminal.writeLine("cipher:       \(header.cipher)")
            Terminal.writeLine("segments:     \(formatBytes(Int64(header.segmentSize))) of plaintext each")
            for stanza in header.stanzas { Terminal.writeLine("opens with:   \(stanza.summary)") }
            if let size = reader.size {
                let headerSize = Int64(header.encodedSize)
                let sealed = max(0, size - headerSize)
                let full = Int64(header.segmentSize + 16)
                let segments = max(1, (sealed + full - 1) / full)
                Terminal.writeLine("plaintext:    \(formatBytes(max(0, sealed - 16 * segments))) (from the file size)")
            }
        case .rncryptor:
            let mode = prefix.count > 1 && prefix[1] == 1 ? "password (PBKDF2-HMAC-SHA-1, 10,000 iterations)" : "key (encryption and HMAC keys)"
            Terminal.writeLine("opens with:   \(mode)")
            Terminal.writeLine("cipher:       AES-256-CBC with HMAC-SHA-256")
        case .openssl:
            Terminal.writeLine("opens with:   password (PBKDF2-HMAC-SHA-256; the iteration count is not stored: OpenSSL's default is 10,000)")
            Terminal.writeLine("cipher:       AES-256-CBC, NOT authenticated")
            Terminal.writeLine("salt:         \(Hex.encode(prefix.dropFirst(8)))")
        }
    }
}
