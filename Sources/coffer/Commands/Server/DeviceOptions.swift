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
            // The server read as the client reads it (a bare HOST:PORT is https), so that every failed
            // connection is said by NetworkFailure, never as the connection's raw error.
            if error.code == .unreachable, let underlying = error.underlying, let url = try? ServerURL(server) {
                throw NetworkFailure.describe(underlying, host: url.host, port: url.effectivePort, timeout: 30, usedCA: false)
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
