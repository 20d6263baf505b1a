import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

/// Names an item the way its class does: `--service S --account A` a generic password; `--server H
/// --account A` (with `--protocol`, `--port`, `--path`) an internet password; `--tag T` (with
/// `--key-class`, `--key-type`) a key; `--certificate FILE` or `--serial HEX` a certificate.
struct ItemName: ParsableArguments, CustomStringConvertible {
    @Option(help: ArgumentHelp("Generic password: the service, usually the app's reverse-DNS name.", valueName: "service"))
    var service: String?

    @Option(help: ArgumentHelp("Generic or internet password: the account, such as the user's email.", valueName: "account"))
    var account: String?

    @Option(help: ArgumentHelp("Internet password: the host.", valueName: "host"))
    var server: String?

    @Option(name: .customLong("protocol"), help: ArgumentHelp("Internet password: the protocol (default https).", valueName: "protocol"))
    var serverProtocol: String?

    @Option(help: ArgumentHelp("Internet password: the port.", valueName: "port"))
    var port: Int?

    @Option(help: ArgumentHelp("Internet password: the path.", valueName: "path"))
    var path: String?

    @Option(help: ArgumentHelp("Key: the application tag.", valueName: "tag"))
    var tag: String?

    @Option(name: .customLong("key-class"), help: ArgumentHelp("Key: private, public or symmetric.", valueName: "class"))
    var keyClass: String?

    @Option(name: .customLong("key-type"), help: ArgumentHelp("Key: its algorithm (ec-p256, ed25519, rsa, aes, ...).", valueName: "type"))
    var keyType: String?

    @Option(help: ArgumentHelp("Certificate: a certificate file (PEM or DER); its issuer and serial number name the item.", valueName: "file"))
    var certificate: String?

    @Option(help: ArgumentHelp("Certificate: the serial number, in hex.", valueName: "hex"))
    var serial: String?

    func validate() throws {
        let classes = [service != nil, server != nil, tag != nil, certificate != nil || serial != nil].filter { $0 }.count
        guard classes == 1, certificate == nil || serial == nil else {
            throw ValidationError(
                "name one item: --service and --account (generic password), --server and --account (internet password), --tag (key), or --certificate/--serial"
            )
        }
        if let serial, (try? Hex.decode(serial)).map({ $0.isEmpty }) ?? true { throw ValidationError("--serial expects hex digits, not '\(serial)'") }
        if (service != nil || server != nil) && account == nil { throw ValidationError("--account is needed with --\(service != nil ? "service" : "server")") }
        if let keyClass, KeyClass(rawValue: keyClass) == nil { throw ValidationError("--key-class must be private, public or symmetric, not '\(keyClass)'") }
        if server == nil && (serverProtocol != nil || port != nil || path != nil) {
            throw ValidationError("--protocol, --port and --path name internet passwords: pass --server too")
        }
        if tag == nil && (keyClass != nil || keyType != nil) { throw ValidationError("--key-class and --key-type name keys: pass --tag too") }
    }

    var itemClass: ItemClass {
        if service != nil { return .genericPassword }
        if server != nil { return .internetPassword }
        return tag != nil ? .key : .certificate
    }

    /// The certificate file's identity.
    func certificateIdentity() throws -> CertificateIdentity? {
        guard let certificate else { return nil }
        do {
            return try CertificateIdentity(certificate: KeyFile(contentsOf: certificate).bytes)
        } catch let error as CofferFormatsError {
            throw CommandFailure("\(certificate): \(error.reason)")
        }
    }

    func query() throws -> KeychainQuery {
        var query = KeychainQuery(itemClass: itemClass)
        if let identity = try certificateIdentity() {
            query.issuer = identity.issuer
            query.serialNumber = identity.serialNumber
        }
        if let serial { query.serialNumber = CertificateIdentity.serialNumber(unsignedBigEndian: try Hex.decode(serial)) }
        query.service = service
        query.account = account
        query.server = server
        query.protocol = server == nil ? nil : serverProtocol ?? "https"
        query.port = port
        query.path = path
        query.applicationTag = tag.map { Array($0.utf8) }
        query.keyClass = keyClass.flatMap(KeyClass.init(rawValue:))
        query.keyType = keyType
        return query
    }

    /// A new item with these attributes. - Throws: when a key lacks its class or type.
    func newItem(accessibility: Accessibility) throws -> KeychainItem {
        if let service, let account { return .genericPassword(service: service, account: account, accessibility: accessibility) }
        if let server, let account {
            return .internetPassword(server: server, account: account, protocol: serverProtocol ?? "https", port: port, path: path, accessibility: accessibility)
        }
        if certificate != nil || serial != nil {
            throw ValidationError("add a certificate with --certificate FILE alone: the file is the item's data")
        }
        guard let keyClass = keyClass.flatMap(KeyClass.init(rawValue:)), let keyType else {
            throw ValidationError("a new key item needs --key-class and --key-type (or -k/--key to store a private key file)")
        }
        return .key(applicationTag: Array((tag ?? "").utf8), keyClass: keyClass, keyType: keyType, accessibility: accessibility)
    }

    /// How messages name the item.
    var description: String {
        if let service { return "service '\(service)' and account '\(account ?? "")'" }
        if let server { return "server '\(server)' and account '\(account ?? "")'" }
        if let tag { return "tag '\(tag)'" }
        return certificate.map { "certificate '\($0)'" } ?? "serial \(serial ?? "")"
    }
}

/// Reads an item's secret: all of standard input with --stdin (one trailing newline removed),
/// else a prompt without echo, asked twice.
func readItemSecret(fromStandardInput: Bool) throws -> [UInt8] {
    if fromStandardInput {
        var bytes = try FileReader.standardInput().readAll(limit: 1 << 20) ?? []
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.count <= 1 << 20 else { throw CommandFailure("a secret is at most 1 MiB") }
        return bytes
    }
    let first = try TerminalPrompt.readSecret("Secret: ")
    let second = try TerminalPrompt.readSecret("Repeat the secret: ")
    guard ConstantTime.equals(first, second) else { throw CommandFailure("the two entries differ; nothing was stored") }
    return first
}

func parseAccessibility(_ text: String) throws -> Accessibility {
    guard let value = Accessibility(text) else {
        throw ValidationError("unknown accessibility '\(text)'; expected one of \(Accessibility.allCases.map(\.description).joined(separator: ", "))")
    }
    return value
}
