import ArgumentParser
import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferPinning
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

    @OptionGroup var trust: ServerCAOption

    /// The device's client, through `http` (a client trusting --ca) or the shared one; or a command
    /// failure naming what is wrong.
    func client(_ http: HTTPClient? = nil) throws -> DeviceClient {
        let signing = try KeyFiles.signer(key, passwords: passwords, pkcs11Module: pkcs11Module)
        let algorithm = try algorithm.map(parseHTTPSignatureAlgorithm)
        do {
            return try DeviceClient(server: server, key: signing, algorithm: algorithm, client: http ?? .shared)
        } catch let error as HTTPSignatureError {
            throw CommandFailure("\(key) cannot sign HTTP requests: \(error.reason)", hint: "pass --alg rsa-pss-sha512 or --alg rsa-v1_5-sha256 for an RSA key")
        } catch {
            throw CommandFailure("cannot use \(server): \(error)")
        }
    }

    /// Runs one exchange, turning the client's errors into the CLI's, with a hint where there is one.
    func run<Value: Sendable>(_ body: @escaping @Sendable (DeviceClient) async throws(ServerClientError) -> Value) throws -> Value {
        let http = try trustingClient(server: server, ca: trust.ca)
        defer { try? http?.syncShutdown() }
        return try runExchange(with: client(http), at: server, usedCA: http != nil, body) { error in
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
    usedCA: Bool = false,
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
                throw NetworkFailure.describe(underlying, host: url.host, port: url.effectivePort, timeout: 30, usedCA: usedCA)
            }
            let hint = error.problemReason == "replayed" ? "send the command again: each signed request is accepted once" : hint(error)
            throw CommandFailure(error.reason, hint: hint)
        }
    }
}

/// A client that trusts only the certificates of `ca` (or of `$COFFER_CA_FILE`) for `server`'s TLS,
/// never following redirects; nil when neither names a file (the shared client, the system's roots).
/// The caller shuts it down.
func trustingClient(server: String, ca: String?) throws -> HTTPClient? {
    guard let path = ca ?? ProcessInfo.processInfo.environment["COFFER_CA_FILE"].flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
    let anchors = try readCertificates(path)
    if anchors.isEmpty { throw CommandFailure("'\(path)' holds no certificate", hint: ca == nil ? "COFFER_CA_FILE names it" : nil) }
    let host: String
    do {
        host = try ServerURL(server).host
    } catch {
        throw CommandFailure("'\(server)' is not a server URL: \(error.reason)")
    }
    do {
        let evaluator = PinningEvaluator(policy: try PinningPolicy(hosts: [], trust: .only(anchors.map(\.certificate))))
        var configuration = try HTTPClient.Configuration.pinned(by: evaluator, host: host)
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    } catch let error as PinningError {
        throw CommandFailure(reporting: error)
    }
}

/// Reads the `--encryption-key` public key (X25519 or P-256), naming the file in any error.
func readEncryptionKey(_ path: String) throws -> RecipientPublicKey {
    guard let key = try readRecipients([path]).first else { throw CommandFailure("\(path): no public key") }
    return key
}
