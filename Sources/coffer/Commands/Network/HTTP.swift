import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import Foundation
import HTTPTypes

struct HTTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "Sign HTTP requests and check their signatures (RFC 9421, with RFC 9530 Content-Digest).",
        discussion: """
            Examples:
              coffer http sign -k app.key --keyid k_3f… --method POST --url \\
                  https://api.example/register_user --body user.json
              coffer http sign -k secret.b64 --alg hmac-sha256 --keyid h_… --url \\
                  https://api.example/orders
              coffer http verify -p app.pub request.txt
            """,
        subcommands: [HTTPSign.self, HTTPVerify.self]
    )
}

struct HTTPSign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print the Content-Digest, Signature-Input and Signature fields for a request.",
        discussion: """
            The request is described by --method, --url, -H and --body; the fields to add to it are \
            printed one per line, ready for curl -H or a raw request. The signature carries created, a \
            random nonce, alg and keyid; it covers @method and @target-uri, and with a body also \
            content-digest (and content-type when -H sets one), unless --cover lists the components.

            The key implies the algorithm for EC (ecdsa-p256-sha256, ecdsa-p384-sha384) and Ed25519 \
            keys; RSA keys need --alg rsa-pss-sha512 or rsa-v1_5-sha256; a shared secret needs \
            --alg hmac-sha256 (the file holds the secret as /register returned it, base64).

            Examples:
              coffer http sign -k app.key --keyid k_3f… --method POST --url \\
                  https://api.example/register_user \\
                  -H 'Content-Type: application/json' --body user.json
              coffer http sign -k secret.b64 --alg hmac-sha256 --keyid h_… --url \\
                  'https://api.example/items?id=7' \\
                  --cover @method --cover @path --cover '@query-param;name="id"'
            """
    )

    @OptionGroup(title: "Key and signature")
    var signing: HTTPSigningOptions

    @Option(name: .customLong("method"), help: ArgumentHelp("The request method.", valueName: "method"))
    var method: String = "GET"

    @Option(help: ArgumentHelp("The absolute request URL.", valueName: "url"))
    var url: String

    @Option(name: .customShort("H"), help: ArgumentHelp("A header field of the request (repeat).", valueName: "Name: value"))
    var headers: [String] = []

    @Option(help: ArgumentHelp("The file holding the body ('-' for standard input).", valueName: "file"))
    var body: String?

    @Flag(name: .customLong("print-base"), help: "Also print the signature base (what was signed) to standard error.")
    var printBase = false

    func validate() throws {
        if signing.key == nil { throw ValidationError("-k/--key and --keyid are required") }
    }

    func run() throws {
        var request = try makeRequest(method: method, url: url, headers: headers)
        let bodyBytes = try body.map { try FileReader.open($0).readAll(limit: 256 << 20) ?? { throw CommandFailure("the body is larger than 256 MiB") }() }
        let signer = try signing.signer()
        let signature: HTTPMessageSignature
        do {
            signature = try signer.sign(&request, body: bodyBytes)
        } catch {
            throw CommandFailure(reporting: error)
        }
        if printBase {
            let base = try HTTPSignatureBase.make(for: request, covering: signature.components, parameters: signature.parameters)
            Terminal.writeError(base + "\n")
        }
        if let digest = request.headerFields[.contentDigest] { Terminal.writeOut("Content-Digest: \(digest)\n") }
        Terminal.writeOut("Signature-Input: \(request.headerFields[.signatureInput] ?? "")\n")
        Terminal.writeOut("Signature: \(request.headerFields[.signature] ?? "")\n")
    }
}

struct HTTPVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the signatures of a raw HTTP/1.1 request.",
        discussion: """
            Reads the request as it went over the wire (request line, header fields, empty line, body) \
            from FILE or standard input; lines may end in CRLF or LF. The body is checked against \
            Content-Digest when the signature covers it.

            The policy is a server's default: @method and @target-uri covered, content-digest covered \
            when there is a body, created at most --max-age seconds old (--ignore-time for captured \
            requests). Exit 0 when a signature holds, 1 when none does (the reason is printed), 2 for \
            unreadable input.

            Examples:
              coffer http verify -p app.pub request.txt
              coffer http verify -p secret.b64 --alg hmac-sha256 --ignore-time \\
                  --print-base < captured.txt
            """
    )

    @Option(name: [.customShort("p"), .customLong("public-key")], help: ArgumentHelp("The public key (PEM, DER, JWK), or with --alg hmac-sha256 the shared secret.", valueName: "file"))
    var publicKey: String

    @Option(name: .customLong("alg"), help: ArgumentHelp("The key's algorithm where the key does not imply it: hmac-sha256, rsa-pss-sha512 or rsa-v1_5-sha256.", valueName: "name"))
    var algorithm: String?

    @Option(name: .customLong("secret-encoding"), help: "How an HMAC secret file is written: base64, hex or raw.")
    var secretEncoding: SecretEncoding = .base64

    @Option(name: .customLong("keyid"), help: ArgumentHelp("Accept only signatures naming this keyid (default: any).", valueName: "id"))
    var keyID: String?

    @Option(help: ArgumentHelp("The scheme the client signed, https or http (the raw request does not say; a failure says when the other one verifies).", valueName: "scheme"))
    var scheme: String = "https"

    @Option(name: .customLong("require"), help: ArgumentHelp("A component the signature must cover (repeat; replaces the default @method @target-uri).", valueName: "component"))
    var require: [String] = []

    @Option(name: .customLong("max-age"), help: ArgumentHelp("The oldest created accepted, in seconds.", valueName: "seconds"))
    var maxAge: Int64 = 300

    @Flag(name: .customLong("ignore-time"), help: "Do not check created and expires (for captured requests).")
    var ignoreTime = false

    @Option(help: ArgumentHelp("Check only the signature with this label.", valueName: "label"))
    var label: String?

    @Option(help: ArgumentHelp("The tag the signature must carry.", valueName: "text"))
    var tag: String?

    @Flag(name: .customLong("print-base"), help: "Print the signature base of each signature to standard error.")
    var printBase = false

    @Flag(help: "One JSON object: ok, label, keyID, algorithm, covered, created, reason (also when no signature holds, exit 1).")
    var json = false

    @Argument(help: "The raw request ('-' for standard input).")
    var file: String = "-"

    func run() throws {
        do {
            try check()
        } catch let failure as CommandFailure where json && failure.exitCode == ExitStatus.checkFailed {
            try JSONLines.write(HTTPVerifyReport(ok: false, reason: failure.message, hint: failure.hint))
            throw failure
        }
    }

    private func check() throws {
        let algorithm = try algorithm.map(parseHTTPSignatureAlgorithm)
        let key: HTTPVerificationKey
        if algorithm == .hmacSHA256 {
            key = .hmacSHA256(secret: try KeyOptions.loadFile(publicKey, encoding: secretEncoding))
        } else {
            let imported = try KeyFiles.importKey(publicKey, passwords: .prompting)
            do {
                key = try HTTPVerificationKey(imported.verifyingKey, algorithm: algorithm)
            } catch {
                throw CommandFailure(error.reason, hint: "pass --alg rsa-pss-sha512 or --alg rsa-v1_5-sha256 for an RSA key")
            }
        }
        guard let bytes = try FileReader.open(file).readAll(limit: 17 << 20) else { throw CommandFailure("the request is larger than 17 MiB") }
        let (request, body) = try parse(bytes, scheme: scheme)
        var policy = HTTPSignaturePolicy()
        if !require.isEmpty { policy.requiredComponents = try require.map(parseComponent) }
        policy.maximumAge = ignoreTime ? nil : maxAge
        if ignoreTime { policy.clockSkew = Int64.max / 4 }
        policy.label = label
        policy.tag = tag
        if printBase {
            for signature in (try? HTTPSignatureFields.signatures(in: request.headerFields)) ?? [] {
                if let base = try? HTTPSignatureBase.make(for: request, covering: signature.components, parameters: signature.parameters) {
                    Terminal.writeError("# \(signature.label)\n\(base)\n")
                }
            }
        }
        let verifier = HTTPMessageVerifier(policy: policy, keys: AnyKeyID(key: key, only: keyID), replayCache: nil)
        let result = try verify(request, body: body, with: verifier)
        switch result {
        case .success(let verified) where json:
            try JSONLines.write(HTTPVerifyReport(
                ok: true, label: verified.label, keyID: verified.keyID, algorithm: "\(verified.algorithm)",
                covered: verified.components.map(Self.jsonName), created: verified.parameters.created
            ))
        case .success(let verified):
            let covered = verified.components.map(\.description).joined(separator: " ")
            var line = "verified: signature '\(verified.label)' by key '\(verified.keyID)' (\(verified.algorithm)) covering \(covered)"
            if let created = verified.parameters.created { line += "; created \(Date(timeIntervalSince1970: TimeInterval(created)))" }
            Terminal.writeOut(line + "\n")
        case .failure(let error):
            // A raw request does not say its scheme: one signed for the other one fails on @target-uri
            // (or @scheme) alone, and the person reading the failure cannot see why.
            let other = scheme.lowercased() == "https" ? "http" : "https"
            var hint: String?
            if let (otherRequest, _) = try? parse(bytes, scheme: other), case .success = try verify(otherRequest, body: body, with: verifier) {
                hint = "it verifies as a request to \(other)://, which the raw request cannot say; pass --scheme \(other)"
            }
            throw CommandFailure("signature not valid (\(error.code)): \(error.reason)", hint: hint, exitCode: ExitStatus.checkFailed)
        }
    }

    private func parse(_ bytes: [UInt8], scheme: String) throws -> (HTTPRequest, [UInt8]) {
        do {
            return try RawHTTPRequest.parse(bytes, scheme: scheme)
        } catch {
            throw CommandFailure("\(file == "-" ? "standard input" : file): \(error.reason)")
        }
    }

    private func verify(_ request: HTTPRequest, body: [UInt8], with verifier: HTTPMessageVerifier) throws -> Swift.Result<HTTPVerifiedSignature, HTTPSignatureError> {
        try runBlocking {
            do throws(HTTPSignatureError) {
                return .success(try await verifier.verify(request, body: body.isEmpty ? nil : body))
            } catch {
                return .failure(error)
            }
        }
    }
}

/// What `http verify --json` prints.
struct HTTPVerifyReport: Encodable {
    let ok: Bool
    var label: String?
    var keyID: String?
    var algorithm: String?
    var covered: [String]?
    var created: Int64?
    var reason: String?
    var hint: String?
}

/// The one key given on the command line, whatever keyid the signature names (or only `only`).
struct AnyKeyID: HTTPSignatureKeyProvider {
    let key: HTTPVerificationKey
    let only: String?

    func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey? {
        if let only, only != keyID { return nil }
        return key
    }
}

extension HTTPVerify {
    /// A covered component as JSON gives it: its name without the structured-field quotes the signature
    /// base puts around it, then its parameters (`@method`, `content-digest`, `@query-param;name="Pet"`).
    static func jsonName(_ component: HTTPSignatureComponent) -> String {
        component.name + component.description.dropFirst(component.name.utf8.count + 2)
    }
}
