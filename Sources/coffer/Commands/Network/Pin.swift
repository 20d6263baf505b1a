import ArgumentParser
import CofferCore
import CofferFormats
import CofferPinning
import Foundation
import NIOCore
import X509

struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "TLS public-key pins: discover a server's, compute a file's, check a server against yours.",
        discussion: """
            A pin is the base64 SHA-256 of a certificate's SubjectPublicKeyInfo — the form TrustKit, HPKP \
            and OkHttp use, and what 'openssl x509 -pubkey | openssl pkey -pubin -outform DER | openssl \
            dgst -sha256 -binary | base64' prints. It stays the same when a certificate is re-issued for \
            the same key. Pin your server's current key and a backup key kept offline, or your CA's \
            intermediate; Coffer refuses a rule with a single pin unless told otherwise, so that a key \
            rotation cannot lock your clients out.

            Pinning never replaces validation: 'pin check' (like the library) validates the chain and \
            the host name first and consults the pins only for a chain that passed.

            Examples:
              coffer pin fetch example.com
              coffer pin fetch 127.0.0.1:8443 --servername api.internal
              coffer pin of server.crt
              coffer pin check https://api.example.com --pin CURRENT= --pin BACKUP=
            """,
        subcommands: [PinFetch.self, PinOf.self, PinCheck.self]
    )
}

/// `HOST[:PORT]` or an https URL, split by the library's ``ServerURL``; the port defaults to 443. Pins
/// apply to TLS, so an http URL is refused.
struct ServerAddress {
    let host: String
    let port: Int

    init(_ text: String) throws {
        let url = try ServerURL(text)
        guard url.scheme == "https" else {
            throw CommandFailure("'\(text)' is not an https URL", hint: "pins apply to TLS; use https://HOST[:PORT] or HOST[:PORT]")
        }
        host = url.host
        port = url.effectivePort
    }
}

/// Certificates from a PEM file (every CERTIFICATE block) or one DER certificate.
func readCertificates(_ path: String) throws -> [ChainCertificate] {
    let bytes = try KeyFile(contentsOf: path).bytes
    if bytes.first == 0x30 {
        do { return [try ChainCertificate(der: bytes)] } catch { throw CommandFailure("\(path): \(error.reason)") }
    }
    let blocks: [PEMBlock]
    do { blocks = try PEMBlock.blocks(in: String(decoding: bytes, as: UTF8.self)) } catch { throw CommandFailure("\(path): \(error.description)") }
    let certificates = blocks.filter { $0.label == "CERTIFICATE" || $0.label == "TRUSTED CERTIFICATE" }
    do {
        return try certificates.map { block throws(PinningError) in try ChainCertificate(der: block.der) }
    } catch {
        throw CommandFailure("\(path): \(error.reason)")
    }
}

/// The connection flags `pin fetch` and `pin check` share.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The TLS server name (SNI) to ask for and validate, when it differs from the host (e.g. connecting to an IP address).", valueName: "name"))
    var servername: String?

    @Option(help: ArgumentHelp("Seconds to wait for the connection and handshake.", valueName: "s"))
    var timeout: Int = 10

    var timeoutAmount: TimeAmount { .seconds(Int64(max(1, timeout))) }
}

/// Prints one certificate of a chain.
func describe(_ certificate: ChainCertificate, index: Int, matched: Bool = false) {
    let formatter = ISO8601DateFormatter()
    let days = Int(certificate.notValidAfter.timeIntervalSinceNow / 86_400)
    let left = certificate.notValidAfter < Date() ? "expired" : "in \(days) day\(days == 1 ? "" : "s")"
    Terminal.writeLine("\(index) subject: \(certificate.subject)")
    Terminal.writeLine("  issuer:  \(certificate.issuer)")
    Terminal.writeLine("  expires: \(formatter.string(from: certificate.notValidAfter)) (\(left))")
    Terminal.writeLine("  pin:     \(certificate.publicKeyPin.base64)\(matched ? "   ← matches" : "")")
}

/// One certificate of a chain, as `pin fetch --json` and `pin check --json` print it.
struct CertificateReport: Encodable {
    let subject: String
    let issuer: String
    let expires: String
    let pin: String
    var matches: Bool?

    init(_ certificate: ChainCertificate, matches: Bool? = nil) {
        subject = "\(certificate.subject)"
        issuer = "\(certificate.issuer)"
        expires = ISO8601DateFormatter().string(from: certificate.notValidAfter)
        pin = certificate.publicKeyPin.base64
        self.matches = matches
    }
}

/// What `pin fetch --json` and `pin check --json` print.
struct PinReport: Encodable {
    let host: String
    let certificates: [CertificateReport]
    /// fetch: whether the chain is trusted; check: whether the pins hold.
    let ok: Bool
    var reason: String?
    var root: CertificateReport?
}

struct PinFetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Connect to a TLS server and print each certificate it serves, with its SPKI pin.",
        discussion: """
            Prints, for each certificate of the served chain (leaf first): subject, issuer, expiry and \
            pin, then whether the chain is trusted for the name (by the system roots, or by --ca). \
            Nothing is sent after the handshake. The chain is shown even when it is not trusted: fetch \
            is for discovering pins; check them with 'coffer pin check'.

            Examples:
              coffer pin fetch example.com
              coffer pin fetch --ca internal-ca.pem api.internal:8443
            """
    )

    @Argument(help: ArgumentHelp("The server: HOST, HOST:PORT (default port 443) or an https URL.", valueName: "host[:port]"))
    var server: String

    @OptionGroup var connection: ConnectionOptions

    @Option(help: ArgumentHelp("Judge trust against the certificates in this PEM/DER file instead of the system roots.", valueName: "file"))
    var ca: String?

    @Flag(help: "One JSON object: host, certificates (subject, issuer, expires, pin), ok (trusted), reason, root.")
    var json = false

    func run() throws {
        let address = try ServerAddress(server)
        let anchors = try ca.map(readCertificates)
        let name = connection.servername ?? address.host
        let timeout = connection.timeoutAmount
        let sni = connection.servername
        let (chain, report) = try runBlocking { () async throws -> ([ChainCertificate], PinningReport) in
            let chain = try await TLSProbe.servedChain(host: address.host, port: address.port, serverName: sni, timeout: timeout)
            let policy = try PinningPolicy(hosts: [], trust: anchors.map { .only($0.map(\.certificate)) } ?? .system)
            return (chain, await PinningEvaluator(policy: policy).evaluate(servedChain: chain, hostname: name))
        }
        if json {
            var result = PinReport(host: name, certificates: chain.map { CertificateReport($0) }, ok: true)
            if case .chainNotTrusted(let reason) = report.verdict {
                result = PinReport(host: name, certificates: result.certificates, ok: false, reason: reason)
            } else if let anchor = report.validatedChain.last, report.validatedChain.count > chain.count {
                result.root = CertificateReport(anchor)
            }
            return try JSONLines.write(result)
        }
        for (index, certificate) in chain.enumerated() { describe(certificate, index: index) }
        if case .chainNotTrusted(let reason) = report.verdict {
            Terminal.writeLine("trusted for \(name) by \(ca ?? "the system roots"): no (\(reason))")
        } else {
            Terminal.writeLine("trusted for \(name) by \(ca ?? "the system roots"): yes, through \(report.validatedChain.count) certificate\(report.validatedChain.count == 1 ? "" : "s")")
            if let anchor = report.validatedChain.last, report.validatedChain.count > chain.count {
                Terminal.writeLine("  root (not served): \(anchor.subject)")
                Terminal.writeLine("  pin:               \(anchor.publicKeyPin.base64)")
            }
        }
    }
}

struct PinOf: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "of",
        abstract: "Print the SPKI pin of a certificate, public key or private key file (PEM or DER).",
        discussion: """
            Certificates: every CERTIFICATE block of a PEM file (a chain file gives one line per \
            certificate, with its subject), or one DER certificate. Keys: every format 'coffer key' \
            reads (SPKI, PKCS#8, PKCS#1, SEC1, JWK…); a private key's pin is that of its public key, \
            so you can pin a backup key that has never been in a certificate. --cert prints the pin of \
            the whole certificate instead ('cert-sha256/…').

            Examples:
              coffer pin of server-cert.pem
              coffer pin of backup.pub
            """
    )

    @Argument(help: ArgumentHelp("The certificate or key file.", valueName: "file"))
    var file: String

    @Flag(name: .customLong("cert"), help: "Print the certificate pin (SHA-256 of the whole certificate) instead of the SPKI pin.")
    var certificatePin = false

    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        let bytes = try KeyFile(contentsOf: file).bytes
        let text = String(decoding: bytes.prefix(1 << 20), as: UTF8.self)
        if text.contains("-----BEGIN CERTIFICATE-----") || text.contains("-----BEGIN TRUSTED CERTIFICATE-----") || (try? ChainCertificate(der: bytes)) != nil {
            let certificates = try readCertificates(file)
            for certificate in certificates {
                let pin = certificatePin ? certificate.certificatePin.description : certificate.publicKeyPin.base64
                Terminal.writeLine(certificates.count == 1 ? pin : "\(pin)  \(certificate.subject)")
            }
            return
        }
        guard !certificatePin else {
            throw CommandFailure("'\(file)' is a key, not a certificate; --cert needs a certificate")
        }
        let password = PasswordOnce { try passwords.read(prompt: "Password for \(file): ") }
        let spki: [UInt8]
        do {
            spki = try KeyFiles.importKey(file, passwords: passwords, password: password).verifyingKey.derRepresentation
        } catch let failure as CommandFailure {
            // An X25519 key (encryption): the signing-key reader does not know it; its SPKI pins the same way.
            // A wrong password is final (no second derivation, no second prompt).
            guard failure.exitCode != ExitStatus.checkFailed else { throw failure }
            if let recipient = try? RecipientPublicKey(importing: bytes), case .x25519 = recipient {
                spki = recipient.derRepresentation
            } else if let identity = try? RecipientPrivateKey(importing: bytes, password: password.get),
                case .x25519 = identity
            {
                spki = identity.publicKey.derRepresentation
            } else {
                throw failure
            }
        }
        Terminal.writeLine(Pin(subjectPublicKeyInfo: spki).base64)
    }
}

struct PinCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Connect with a pin policy and say whether it holds (exit 0) or not (exit 1).",
        discussion: """
            Validates the served chain and the host name (against the system roots, or only the \
            certificates of --ca), then requires one certificate of the validated chain to match one of \
            the --pin values (SPKI pins; 'cert-sha256/…' for certificate pins). Prints the chain with the \
            matching certificate marked, and the verdict.

            Exit status: 0 the pins hold; 1 the chain is not trusted or no pin matched; 2 usage errors \
            and connection failures.

            Examples:
              coffer pin check --pin CURRENT= --pin BACKUP= https://example.com
              coffer pin check --json --ca internal-ca.pem --pin PIN= api.internal:8443
            """
    )

    @Argument(help: ArgumentHelp("The server: an https URL, HOST or HOST:PORT.", valueName: "url"))
    var url: String

    @Option(name: .customLong("pin"), help: ArgumentHelp("An accepted pin (repeat for a backup pin).", valueName: "pin"))
    var pins: [String] = []

    @Option(help: ArgumentHelp("Trust only the certificates in this PEM/DER file (a private CA or a self-signed server) instead of the system roots.", valueName: "file"))
    var ca: String?

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "One JSON object: host, certificates (with matches), ok (the pins hold), reason; exit 1 as without it.")
    var json = false

    func validate() throws {
        guard !pins.isEmpty else { throw ValidationError("give at least one --pin") }
    }

    func run() throws {
        let address = try ServerAddress(url)
        let parsed: [Pin]
        do { parsed = try pins.map { text throws(PinningError) in try Pin(text) } } catch { throw CommandFailure(reporting: error) }
        let anchors = try ca.map(readCertificates)
        if let anchors, anchors.isEmpty { throw CommandFailure("'\(ca ?? "")' holds no certificate") }
        let name = connection.servername ?? address.host
        let rule: HostPins
        do {
            rule = try HostPins(host: name, pins: parsed, allowingSinglePin: true)
        } catch {
            throw CommandFailure(reporting: error)
        }
        let policy = try PinningPolicy(hosts: [rule], trust: anchors.map { .only($0.map(\.certificate)) } ?? .system)
        let timeout = connection.timeoutAmount
        let report = try runBlocking {
            try await TLSProbe.check(host: address.host, port: address.port, serverName: name, evaluator: PinningEvaluator(policy: policy), timeout: timeout)
        }
        let matched: Pin? = if case .matched(let pin) = report.verdict { pin } else { nil }
        let shown = report.validatedChain.isEmpty ? report.servedChain : report.validatedChain
        if json {
            let certificates = shown.map { certificate in CertificateReport(certificate, matches: matched.map { certificate.pin($0.kind) == $0 } ?? false) }
            switch report.verdict {
            case .matched:
                return try JSONLines.write(PinReport(host: name, certificates: certificates, ok: true))
            case .chainNotTrusted(let reason):
                try JSONLines.write(PinReport(host: name, certificates: certificates, ok: false, reason: "the chain is not trusted (\(reason)); pins were not consulted"))
            default:
                try JSONLines.write(PinReport(host: name, certificates: certificates, ok: false, reason: "no certificate of the validated chain matches a given pin"))
            }
            throw ExitCode(ExitStatus.checkFailed)
        }
        for (index, certificate) in shown.enumerated() {
            describe(certificate, index: index, matched: matched.map { certificate.pin($0.kind) == $0 } ?? false)
        }
        switch report.verdict {
        case .matched:
            Terminal.writeLine("\(name): pins hold")
        case .chainNotTrusted(let reason):
            throw CommandFailure("\(name): the chain is not trusted (\(reason)); pins were not consulted", hint: ca == nil ? "for a private CA or a self-signed server, pass --ca FILE" : nil, exitCode: ExitStatus.checkFailed)
        default:
            throw CommandFailure("\(name): no certificate of the validated chain matches a given pin", exitCode: ExitStatus.checkFailed)
        }
    }
}
