import ArgumentParser
import AsyncHTTPClient
import CofferCore
import CofferHTTPClient
import CofferHTTPSignatures
import CofferPinning
import Foundation
import HTTPTypes
import NIOCore

struct RequestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Sign an HTTP request and send it: a small curl for trying a signed API by hand.",
        discussion: """
            The response body goes to standard output and the status line to standard error; with -i \
            the status line and the header fields go to standard output before the body, as curl -i \
            prints them. Without -k the request is sent unsigned. Exit 0 for a 2xx status, 1 for any \
            other status (or a server that fails its pins), 2 when the request could not be made.

            The body as curl takes it: -d TEXT, or -d @FILE (@- for standard input) with carriage \
            returns and newlines removed, as curl -d does; --data-binary @FILE sends a file's bytes \
            exactly (as --data-file FILE does), and --data-raw TEXT sends TEXT even when it starts \
            with @. A signed request covers @method, @target-uri and the Content-Digest of its body, \
            an empty body included (what Coffer's server asks of every signed route), and \
            Content-Type when it has one.

            A redirect is never followed (as curl without -L): the status line, then where the server \
            pointed (its Location) on standard error, and exit 1. A signed request is signed for its \
            URL only; sending it, its signature and its body to another address is for you to decide: \
            run the command again with that URL.

            TLS as curl's --cacert and --pinnedpubkey: --ca FILE trusts only the certificates in FILE \
            (a private CA, a self-signed server) instead of the system roots; --pin PIN (repeatable) \
            requires the server's validated chain to contain one of these SPKI pins ('coffer pin of', \
            'coffer pin fetch'). Pins are checked after chain and host-name validation, never instead of \
            it, for the URL's host (not for the names the server's certificate carries), through the \
            library's AsyncHTTPClient integration bound to that host.

            Examples:
              coffer request -X POST -d '{"algorithm": "hmac-sha256"}' \\
                  https://api.example/register
              coffer request -k app.key --keyid k_3f… -X POST \\
                  -H 'Content-Type: application/json' \\
                  -d '{"email": "ada@example.com", "name": "Ada"}' \\
                  https://api.example/register_user
              coffer request -k secret.b64 --alg hmac-sha256 --keyid h_… \\
                  https://api.example/health
              coffer request -i -k admin.key --keyid 3f… https://keys.example/admin/keys
              coffer request -k app.key --keyid k_3f… -d @order.json \\
                  https://api.example/orders
              coffer request --ca internal-ca.pem --pin CURRENT= --pin BACKUP= \\
                  https://api.internal/health
            """
    )

    @Argument(help: "The absolute URL.")
    var url: String

    @Option(name: .customShort("X"), help: ArgumentHelp("The method (default GET, or POST with a body).", valueName: "method"))
    var method: String?

    @Option(name: .customShort("H"), help: ArgumentHelp("A header field (repeat).", valueName: "Name: value"))
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("The body: TEXT, or @FILE (@- standard input) without its line breaks, as curl -d.", valueName: "text|@file"))
    var data: [String] = []

    @Option(name: .customLong("data-binary"), help: ArgumentHelp("The body: TEXT, or @FILE's bytes exactly, as curl --data-binary.", valueName: "text|@file"))
    var dataBinary: [String] = []

    @Option(name: .customLong("data-raw"), help: ArgumentHelp("The body: TEXT as it is, even when it starts with @.", valueName: "text"))
    var dataRaw: [String] = []

    @Option(name: .customLong("data-file"), help: ArgumentHelp("The body, from a file's bytes exactly ('-' for standard input).", valueName: "file"))
    var dataFile: [String] = []

    @Flag(name: .shortAndLong, help: "Print the status line and the response's header fields on standard output before the body, as curl -i.")
    var include = false

    @Option(help: ArgumentHelp("Give up after this many seconds.", valueName: "seconds"))
    var timeout: Int64 = 30

    @Option(help: ArgumentHelp("Trust only the certificates in this PEM/DER file instead of the system roots.", valueName: "file"))
    var ca: String?

    @Option(name: .customLong("pin"), help: ArgumentHelp("Require this SPKI pin in the server's validated chain (repeat for a backup).", valueName: "pin"))
    var pins: [String] = []

    @OptionGroup(title: "Signing")
    var signing: HTTPSigningOptions

    func validate() throws {
        let bodies = [("-d", data), ("--data-binary", dataBinary), ("--data-raw", dataRaw), ("--data-file", dataFile)].filter { !$0.1.isEmpty }
        if bodies.count > 1 { throw ValidationError("\(bodies.map(\.0).joined(separator: " and ")) each give the body; give one") }
        if dataFile.count > 1 { throw ValidationError("--data-file names the one file the body is; give it once") }
        if (ca != nil || !pins.isEmpty) && !url.lowercased().hasPrefix("https://") {
            throw ValidationError("--ca and --pin apply to https URLs")
        }
    }

    /// The client configuration for --ca and --pin (bound to the URL's host), or AsyncHTTPClient's
    /// usual one; redirects are never followed.
    private func clientConfiguration() throws -> HTTPClient.Configuration {
        guard ca != nil || !pins.isEmpty else {
            var configuration = HTTPClient.Configuration.singletonConfiguration
            configuration.redirectConfiguration = .disallow
            return configuration
        }
        let anchors = try ca.map(readCertificates)
        if let anchors, anchors.isEmpty { throw CommandFailure("'\(ca ?? "")' holds no certificate") }
        do {
            let parsed = try pins.map { text throws(PinningError) in try Pin(text) }
            let host = try ServerAddress(url).host
            let rules = parsed.isEmpty ? [] : [try HostPins(host: host, pins: parsed, allowingSinglePin: true)]
            let evaluator = PinningEvaluator(policy: try PinningPolicy(hosts: rules, trust: anchors.map { .only($0.map(\.certificate)) } ?? .system))
            return try .pinned(by: evaluator, host: host)
        } catch let error as PinningError {
            // Building the configuration refuses only pins and rules, never a connection.
            throw CommandFailure(reporting: error)
        }
    }

    /// The body the options give, read as curl reads it; nil for none.
    func requestBody() throws -> [UInt8]? {
        func file(_ path: String) throws -> [UInt8] {
            guard let bytes = try FileReader.open(path).readAll(limit: Self.bodyLimit) else { throw CommandFailure("the body is larger than 64 MiB") }
            return bytes
        }
        // Given more than once, the pieces are joined with '&', as curl joins them.
        func joined(_ pieces: [[UInt8]]) -> [UInt8] { Array(pieces.joined(separator: [UInt8(ascii: "&")])) }
        if !data.isEmpty {
            // curl -d @FILE: the file without its carriage returns and newlines.
            return joined(try data.map { piece in
                guard piece.hasPrefix("@") else { return Array(piece.utf8) }
                return try file(String(piece.dropFirst())).filter { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
            })
        }
        if !dataBinary.isEmpty {
            return joined(try dataBinary.map { $0.hasPrefix("@") ? try file(String($0.dropFirst())) : Array($0.utf8) })
        }
        if !dataRaw.isEmpty { return joined(dataRaw.map { Array($0.utf8) }) }
        return try dataFile.first.map(file)
    }

    static let bodyLimit = 64 << 20

    func run() throws {
        let body = try requestBody()
        var request = try makeRequest(method: method ?? (body == nil ? "GET" : "POST"), url: url, headers: headers)
        if body != nil && request.headerFields[.contentType] == nil && (body?.first == UInt8(ascii: "{") || body?.first == UInt8(ascii: "[")) {
            request.headerFields[.contentType] = "application/json"
        }
        let signer = signing.isSigning ? try signing.signer() : nil
        if let signer {
            // An empty body is a body too: its Content-Digest is covered, as Coffer's server asks of
            // every signed request (a signed GET to the admin API needed --cover before). Components
            // named with --cover must include it when there is a body: a body the signature does not
            // cover could be swapped on the way.
            let coversDigest = signer.components?.contains(.field("content-digest")) ?? true
            if !coversDigest, let body, !body.isEmpty {
                throw CommandFailure(
                    "the request has a body and --cover leaves out content-digest, so the signature would not cover the body",
                    hint: "add --cover content-digest"
                )
            }
            do {
                try signer.sign(&request, body: coversDigest ? (body ?? []) : nil)
            } catch {
                throw CommandFailure(reporting: error)
            }
        }
        let clientRequest = try HTTPClient.clientRequest(request, body: body)
        let (timeout, include, usedCA) = (timeout, include, ca != nil)
        let target = try ServerURL(url, defaultScheme: nil)
        let (host, port) = (target.host, target.effectivePort)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try clientConfiguration())
        defer { try? runBlocking { try await client.shutdown() } }
        let (status, location): (Int, String?) = try runBlocking {
            let response: HTTPClientResponse
            do {
                response = try await client.execute(clientRequest, timeout: .seconds(timeout))
            } catch let error as PinningError {
                throw error
            } catch {
                throw NetworkFailure.describe(error, host: host, port: port, timeout: timeout, usedCA: usedCA)
            }
            if include {
                // curl -i: the status line and the fields as received, CRLF-ended, a blank line, the body.
                var head = "HTTP/\(response.version.major).\(response.version.minor) \(response.status.code) \(response.status.reasonPhrase)\r\n"
                for header in response.headers { head += "\(Terminal.shown(header.name)): \(Terminal.shown(header.value))\r\n" }
                head += "\r\n"
                try Array(head.utf8).withUnsafeBytes { try Terminal.writeData($0) }
            } else {
                Terminal.writeError("HTTP \(response.status.code) \(response.status.reasonPhrase)\n")
            }
            for try await chunk in response.body {
                try chunk.withUnsafeReadableBytes { try Terminal.writeData($0) }
            }
            Terminal.flushStandardOutput()
            return (Int(response.status.code), response.redirectLocation)
        }
        if let location {
            throw CommandFailure(
                "the server redirected the request to \(location) (HTTP \(status)); not followed",
                hint: signer == nil ? "to go there, run the command again with that URL" : "a signed request is signed for its URL only; to send it there, run the command again with that URL",
                exitCode: ExitStatus.checkFailed
            )
        }
        if !(200..<300).contains(status) { throw ExitCode(ExitStatus.checkFailed) }
    }
}
