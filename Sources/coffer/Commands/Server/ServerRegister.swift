import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import Foundation

struct ServerRegister: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register this device's key with a server, proving that it holds the private half.",
        discussion: """
            Sends POST /register signed (RFC 9421) by -k itself, so that no one who merely copied the \
            public key can register it first (docs/SERVER.md, "Proof of possession"). Prints the key id \
            the device then signs its requests with: k_ and 16 bytes of its public key's SHA-256, hex.

            --encryption-key names the X25519 or P-256 public key the device's data keys are to be \
            sealed to. Registering a key again changes nothing: the same encryption key (or none) is \
            answered with the key id again; another one is refused (use 'coffer server \
            set-encryption-key').

            A server that registers by token needs one from its admin: --token-file FILE reads it from \
            the file's first line (--token puts it on the command line, where other users of this \
            machine may see it).

            Examples:
              coffer server register --server https://api.example -k device.key \\
                  --encryption-key device-x25519.pub --token-file token.txt --platform ios
              coffer server register --server https://api.example -k device.key --json
            """
    )

    @OptionGroup var device: DeviceOptions

    @Option(name: .customLong("encryption-key"), help: ArgumentHelp("The X25519 or P-256 public key data keys are sealed to.", valueName: "file"))
    var encryptionKey: String?

    @Option(help: ArgumentHelp("A registration token from the server's admin, rt_… (visible in the process list: prefer --token-file).", valueName: "token"))
    var token: String?

    @Option(name: .customLong("token-file"), help: ArgumentHelp("Read the registration token from this file's first line.", valueName: "file"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("The platform label a token may be bound to (1 to 32 of a-z, 0-9 and '-').", valueName: "label"))
    var platform: String?

    func validate() throws {
        if token != nil && tokenFile != nil { throw ValidationError("give the token once: --token or --token-file") }
    }

    func run() throws {
        let encryption = try encryptionKey.map(readEncryptionKey)
        let token = try tokenFile.map(Self.readToken) ?? token
        let platform = platform
        let registration = try device.run { client async throws(ServerClientError) in
            try await client.register(encryptionKey: encryption, token: token, platform: platform)
        }
        if device.json {
            try JSONLines.write(registration)
            return
        }
        Terminal.writeLine(registration.keyId)
        Terminal.writeError(registration.created ? "registered \(registration.keyId) (\(registration.algorithm))\n" : "\(registration.keyId) was already registered (\(registration.algorithm)); nothing changed\n")
    }

    /// A token file's first line, without its line ending.
    static func readToken(_ path: String) throws -> String {
        let bytes = try KeyFile(contentsOf: path).bytes
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CommandFailure("\(path): a token file is text") }
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard !line.isEmpty else { throw CommandFailure("\(path): the token file is empty") }
        return line
    }
}
