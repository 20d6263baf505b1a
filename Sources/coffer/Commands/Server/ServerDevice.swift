import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import Foundation

/// The options a device's commands take: the server, and the device's own private key.
struct DeviceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server's URL.", valueName: "url"))
    var server: String

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("The device's private key file (or a pkcs11: URI).", valueName: "file"))
    var key: String

    @Option(name: .customLong("alg"), help: ArgumentHelp("For an RSA key: rsa-pss-sha512 or rsa-v1_5-sha256.", valueName: "algorithm"))
    var algorithm: String?

    @Flag(help: "Print the server's answer as JSON instead of text.")
    var json = false

    @OptionGroup(title: "Password (for an encrypted key)")
    var passwords: PasswordOptions

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("For -k pkcs11:…: the token's PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    /// The device's client, or a command failure naming what is wrong.
    func client() throws -> DeviceClient {
        let signing = try KeyFiles.signer(key, passwords: passwords, pkcs11Module: pkcs11Module)
        let algorithm = try algorithm.map(parseHTTPSignatureAlgorithm)
        do {
            return try DeviceClient(server: server, key: signing, algorithm: algorithm)
        } catch let error as HTTPSignatureError {
            throw CommandFailure("\(key) cannot sign HTTP requests: \(error.reason)", hint: "pass --alg rsa-pss-sha512 or --alg rsa-v1_5-sha256 for an RSA key")
        } catch {
            throw CommandFailure("cannot use \(server): \(error)")
        }
    }

    /// Runs one exchange, turning the client's errors into the CLI's, with a hint where there is one.
    func run<Value: Sendable>(_ body: @escaping @Sendable (DeviceClient) async throws(ServerClientError) -> Value) throws -> Value {
        try runExchange(with: client(), at: server, body) { error in
            switch error.problemReason {
            case "encryption-key-mismatch": "change a registered key's encryption key with 'coffer server set-encryption-key'"
            case "token-required", "invalid-token": "ask the server's admin for a registration token ('coffer server tokens create') and pass it with --token-file"
            case "proof-required": "the server expects the registration signed by the key it registers, as this command signs it: check that --server is the URL the server's clients use"
            default: nil
            }
        }
    }
}

/// Runs one signed exchange with the server at `server` through `client`, turning a
/// ``ServerClientError`` into a command failure with the hint `hint` has for it (and, for any command,
/// how to answer a replay refusal); a connection that failed is said as what happened, naming the host
/// and port.
func runExchange<Client: Sendable, Value: Sendable>(
    with client: Client,
    at server: String,
    _ body: @escaping @Sendable (Client) async throws(ServerClientError) -> Value,
    hint: @escaping @Sendable (ServerClientError) -> String?
) throws -> Value {
    try runBlocking {
        do throws(ServerClientError) {
            return try await body(client)
        } catch {
            if error.code == .unreachable, let underlying = error.underlying, let url = URL(string: server), let host = url.host {
                let port = url.port ?? (url.scheme == "https" ? 443 : 80)
                throw NetworkFailure.describe(underlying, host: host, port: port, timeout: 30, usedCA: false)
            }
            let hint = error.problemReason == "replayed" ? "send the command again: each signed request is accepted once" : hint(error)
            throw CommandFailure(error.reason, hint: hint)
        }
    }
}

/// Reads the `--encryption-key` public key (X25519 or P-256), naming the file in any error.
func readEncryptionKey(_ path: String) throws -> RecipientPublicKey {
    guard let key = try readRecipients([path]).first else { throw CommandFailure("\(path): no public key") }
    return key
}

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

struct ServerSetEncryptionKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-encryption-key",
        abstract: "Add or replace the encryption key a registered device's data keys are sealed to.",
        discussion: """
            Sends POST /encryption-key signed by the device's registered key (-k). The server logs the \
            change and keeps it in the key's history ('coffer server keys events'); it allows a few \
            changes per key an hour. Data keys fetched afterwards are sealed to the new key only.

            Example:
              coffer server set-encryption-key --server https://api.example \\
                  -k device.key \\
                  --encryption-key device-x25519.pub
            """
    )

    @OptionGroup var device: DeviceOptions

    @Option(name: .customLong("encryption-key"), help: ArgumentHelp("The X25519 or P-256 public key data keys are sealed to.", valueName: "file"))
    var encryptionKey: String

    func run() throws {
        let encryption = try readEncryptionKey(encryptionKey)
        let change = try device.run { client async throws(ServerClientError) in try await client.setEncryptionKey(encryption) }
        if device.json {
            try JSONLines.write(change)
            return
        }
        Terminal.writeLine("\(change.keyId) encryption key \(change.encryptionKeyId)\(change.changed ? "" : " (unchanged)")")
    }
}
