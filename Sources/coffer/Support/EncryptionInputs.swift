import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a symmetric key file: 32 raw bytes (64 for RNCryptor's two keys), or the same as hex or
/// base64 text. The lengths never collide, so no flag is needed.
func readKeyFile(_ path: String) throws -> [UInt8] {
    var bytes = try KeyFiles.readSmallFile(path, what: "key file")
    defer { _ = bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
    if bytes.count == 32 || bytes.count == 64 { return bytes }
    var text = bytes[...]
    while let last = text.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { text = text.dropLast() }
    let string = String(decoding: text, as: UTF8.self)
    if let decoded = try? Hex.decode(string), decoded.count == 32 || decoded.count == 64 { return decoded }
    if let decoded = try? Base64.decode(string), decoded.count == 32 || decoded.count == 64 { return decoded }
    throw CommandFailure(
        "key file '\(path)' does not hold a 32-byte key (raw, hex or base64)",
        hint: "make one with 'coffer random --raw --output \(path)'"
    )
}

/// Writes plaintext or ciphertext to its destination: a file written atomically (0600), or standard
/// output. For standard output the data is first collected in a private temporary file, so that nothing
/// reaches the next program before the whole input authenticated.
struct OutputTarget {
    let path: String
    let overwrite: Bool
    let holdUntilComplete: Bool

    func write(_ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        if path == "-" && !holdUntilComplete {
            try produce { Terminal.writeOut($0) }
            return
        }
        let destination = path == "-" ? temporaryPath() : path
        if path != "-" && !overwrite && KeyFiles.exists(path) {
            throw CommandFailure("'\(path)' already exists", hint: "choose another name with -o, or pass --force to replace it")
        }
        let writer = try AtomicFileWriter(destination: destination, overwrite: overwrite || path == "-", durable: false, background: true)
        try produce { try writer.write($0) }
        try writer.commit()
        if path == "-" {
            defer { unlink(destination) }
            let reader = try FileReader(path: destination)
            try reader.forEachChunk { Terminal.writeOut($0) }
        }
    }

    private func temporaryPath() -> String {
        let folder = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        let random = (try? SecureRandom.bytes(count: 8)).map { Hex.encode($0) } ?? "\(getpid())"
        return "\(folder)/.coffer-plaintext-\(random)"
    }
}

extension EncryptionCipher {
    static func parse(_ name: String) throws -> EncryptionCipher {
        switch name.lowercased() {
        case "aes-gcm", "aes256-gcm", "aes-256-gcm": return .aes256GCM
        case "chacha", "chacha20-poly1305", "chachapoly": return .chaCha20Poly1305
        default: throw ValidationError("unknown cipher '\(name)'; expected aes-gcm or chacha")
        }
    }
}

func parseEncryptedFormat(_ name: String) throws -> EncryptedFormat {
    guard let format = EncryptedFormat(rawValue: name.lowercased()) else {
        throw ValidationError("unknown format '\(name)'; expected coffer, rncryptor or openssl")
    }
    return format
}
