import ArgumentParser
import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferKeychain
import Foundation

/// The options every admin command takes.
struct AdminOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server's URL.", valueName: "url"))
    var server: String

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("An admin's private key file.", valueName: "file"))
    var key: String

    @Flag(help: "Print JSON instead of text: a list as one array ('[]' when empty), anything else as one object.")
    var json = false

    @OptionGroup(title: "Password (for an encrypted key)")
    var passwords: PasswordOptions

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("For -k pkcs11:…: the token's PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    @OptionGroup var trust: ServerCAOption

    /// The client, through `http` (a client trusting --ca) or the shared one; or a command failure
    /// naming what is wrong.
    func client(_ http: HTTPClient? = nil) throws -> AdminClient {
        let signing = try KeyFiles.signer(key, passwords: passwords, pkcs11Module: pkcs11Module)
        do {
            return try AdminClient(server: server, key: signing, client: http ?? .shared)
        } catch {
            throw CommandFailure("cannot use \(server) with that key: \(error)")
        }
    }

    /// Runs one admin exchange, turning the client's errors into the CLI's.
    func run<Value: Sendable>(_ body: @escaping @Sendable (AdminClient) async throws(ServerClientError) -> Value) throws -> Value {
        let http = try trustingClient(server: server, ca: trust.ca)
        defer { try? http?.syncShutdown() }
        return try runExchange(with: client(http), at: server, usedCA: http != nil, body) { error in
            guard error.problemReason == "not-found", error.status == 404 else { return nil }
            return """
                the server answers 404 to everything under /admin/ that is not verified as an admin's request: \
                check --server, that the server was started with --admin-key for -k's public half, and the clocks; \
                the server's log says why ('admin request refused')
                """
        }
    }
}

/// A UNIX time as ISO 8601 in UTC, to the second.
func formatTimestamp(_ seconds: Int64) -> String {
    Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
}
