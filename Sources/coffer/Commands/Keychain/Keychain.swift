// One file on purpose: `coffer keychain` and its item subcommands share KeychainOptions and ItemName,
// defined here; export and import live in KeychainTransfer.swift.

import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain",
        abstract: "Keep passwords, tokens and keys in an encrypted keychain (Keychain Services semantics).",
        discussion: """
            The keychain is one SQLite file, $XDG_DATA_HOME/coffer/keychain.db unless --keychain says otherwise, \
            created 0600 in a 0700 folder. Every secret is encrypted under a master key that only the keychain \
            password unwraps; names (service, account) are stored in clear so that they can be searched.

            The keychain password comes from a prompt without echo, --password-file FILE (its first line) or \
            --password-env VAR. Item secrets come from a prompt or --stdin, never from the command line.
            'coffer keychain unlock' keeps the keychain unlocked for later commands of this login session (in \
            the kernel's session keyring, not on disk) until --timeout or 'coffer keychain lock'. \
            'coffer keychain passwd' changes the password and re-encrypts every item under a new master key; \
            'coffer keychain rotate' does the re-encryption alone.

            Examples:
              coffer keychain create
              coffer keychain unlock --timeout 15m
              printf %s "$TOKEN" | coffer keychain add --service com.example.api \\
                  --account ci --stdin
              coffer keychain get --service com.example.api --account ci --reveal
              coffer keychain list --json
              coffer keychain export -o keychain-backup.coffer
            """,
        subcommands: [
            KeychainCreate.self, KeychainUnlock.self, KeychainLock.self, KeychainStatus.self, KeychainAdd.self, KeychainGet.self,
            KeychainUpdate.self, KeychainDelete.self, KeychainList.self, KeychainExport.self, KeychainImport.self, KeychainPasswd.self,
            KeychainRotate.self,
        ]
    )
}

/// `--keychain PATH` and the keychain password's source, shared by every keychain command.
struct KeychainOptions: ParsableArguments {
    @Option(name: .customLong("keychain"), help: ArgumentHelp("The keychain file (default: $XDG_DATA_HOME/coffer/keychain.db).", valueName: "path"))
    var path: String?

    @OptionGroup var password: PasswordOptions

    @Option(
        name: .customLong("max-scrypt-log-n"),
        help: ArgumentHelp(
            "Do the key-derivation work of scrypt up to N=2^N, r=8, p=1 (default 19) for a keychain password, and for an export's in 'keychain import'; a file asking for more is refused before any work. Raise it for a keychain made with a higher --scrypt-log-n by an earlier release.",
            valueName: "n"
        )
    )
    var maxScryptLogN: Int = 19

    /// The most work a password of the keychain (or an import's export) may ask for.
    var limits: PasswordKDFLimits { PasswordKDFLimits(scryptUpToLogN: maxScryptLogN) }

    var resolvedPath: String {
        get throws { if let path { path } else { try Keychain.defaultPath() } }
    }

    func open() throws -> Keychain {
        let keychain = try Keychain.open(at: try resolvedPath)
        keychain.passwordLimits = limits
        return keychain
    }

    /// Opens and unlocks: from the session keyring when `coffer keychain unlock` is in force, otherwise
    /// with the password.
    func openUnlocked() throws -> Keychain {
        try Self.openUnlocked(at: resolvedPath, password: password, limits: limits)
    }

    /// The keychain at `path`, unlocked from the session keyring when no password source is named,
    /// otherwise with the password from `password` (a file, a variable, or the terminal), doing at most
    /// the work `limits` admit.
    static func openUnlocked(at path: String, password: PasswordOptions, limits: PasswordKDFLimits = PasswordKDFLimits()) throws -> Keychain {
        let keychain = try Keychain.open(at: path)
        keychain.passwordLimits = limits
        if password.passwordFile == nil && password.passwordEnvironmentVariable == nil && KeychainSession.restore(keychain) {
            return keychain
        }
        var secret = try password.read(prompt: "Keychain password: ")
        defer { SecretBytes.wipe(&secret) }
        do {
            try keychain.unlock(password: String(decoding: secret, as: UTF8.self))
        } catch {
            let tooCostly = (error.underlying as? CofferCryptoError)?.code == .costTooHigh
            guard tooCostly else { throw error }
            throw CommandFailure(
                "\(path): \(error.reason)",
                hint: "if this is your keychain, made with a higher --scrypt-log-n, raise the limit with --max-scrypt-log-n; a keychain file someone else wrote can ask for any amount of work"
            )
        }
        return keychain
    }
}

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

struct KeychainCreate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a keychain and set its password.", discussion: """
            Examples:
              coffer keychain create
              coffer keychain create --keychain ./app.db --password-file pass.txt
            """)

    @OptionGroup var options: KeychainOptions

    @Option(
        name: .customLong("scrypt-log-n"),
        help: "scrypt cost of the keychain password, as a power of two (N=2^n, r=8, p=1): 10 to 19 (every keychain command's limit; more with --max-scrypt-log-n, which every command on this keychain then needs)."
    )
    var scryptLogN = 17

    func validate() throws {
        guard scryptLogN <= options.maxScryptLogN else {
            throw ValidationError(
                "--scrypt-log-n \(scryptLogN) is above the \(options.maxScryptLogN) keychain commands do by default; add --max-scrypt-log-n \(scryptLogN) here and to every command on this keychain"
            )
        }
    }

    func run() throws {
        let path = try options.resolvedPath
        if FileManager.default.fileExists(atPath: path), (try? Keychain.open(at: path).isCreated) == true {
            throw CommandFailure("a keychain already exists at '\(path)'", hint: "use it, or choose another file with --keychain")
        }
        var secret = try options.password.read(prompt: "New keychain password: ", confirm: true)
        defer { SecretBytes.wipe(&secret) }
        let keychain = try Keychain.open(at: path, create: true)
        keychain.passwordLimits = options.limits
        try keychain.create(password: String(decoding: secret, as: UTF8.self), kdf: .scrypt(logN: scryptLogN, r: 8, p: 1))
        Terminal.writeError("created keychain \(path)\n")
    }
}

struct KeychainUnlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Keep the keychain unlocked for this login session.",
        discussion: """
            The unlocked state lives in the kernel's session keyring (not on disk), named by the keychain's \
            identity rather than its path, and expires after --timeout. A process without a login-session \
            keyring (no pam_keyinit, as in many containers and CI jobs) would put it in the user-wide \
            keyring instead, which every session of the user shares: that is refused unless --user-keyring \
            says so ('keyctl session' starts a session keyring).

            Examples:
              coffer keychain unlock
              coffer keychain unlock --timeout 15m
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: ArgumentHelp("How long to stay unlocked: seconds, or with s, m or h (15m, 1h).", valueName: "duration"))
    var timeout = "15m"

    @Flag(name: .customLong("user-keyring"), help: "Accept the user-wide keyring when there is no login-session keyring.")
    var userKeyring = false

    func run() throws {
        guard let seconds = Self.seconds(timeout), seconds > 0, seconds <= 7 * 86_400 else {
            throw ValidationError("--timeout expects a duration such as 90s, 15m or 2h (at most 7 days), not '\(timeout)'")
        }
        let keychain = try options.open()
        var secret = try options.password.read(prompt: "Keychain password: ")
        defer { SecretBytes.wipe(&secret) }
        try keychain.unlock(password: String(decoding: secret, as: UTF8.self))
        let keyring = try KeychainSession.keepUnlocked(keychain, for: UInt32(seconds), allowingUserWideKeyring: userKeyring)
        Terminal.writeError("keychain unlocked for \(timeout) in \(keyring.description)\n")
    }

    static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        if let last = text.last, let unit = units[last] { return Int(text.dropLast()).map { $0 * unit } }
        return Int(text)
    }
}

struct KeychainLock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock", abstract: "End the unlocked session started by 'unlock' (whichever spelling of the path unlocked it).",
        discussion: """
            Example:
              coffer keychain lock
            """
    )

    @OptionGroup var options: KeychainOptions

    func run() throws {
        let keychain = try options.open()
        let ended = KeychainSession.end(keychain, path: try options.resolvedPath)
        Terminal.writeError(ended ? "keychain locked\n" : "keychain was not unlocked\n")
    }
}

/// What `keychain status --json` prints.
struct KeychainStatusReport: Encodable {
    let path: String
    let unlocked: Bool
    let items: Int
}

struct KeychainStatus: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show where the keychain is, whether it is unlocked, and how many items it holds.", discussion: """
            Examples:
              coffer keychain status
              coffer keychain status --json
            """)

    @OptionGroup var options: KeychainOptions

    @Flag(help: "One JSON object: path, unlocked, items.")
    var json = false

    func run() throws {
        let path = try options.resolvedPath
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no keychain at '\(path)'", hint: "create one with 'coffer keychain create'")
        }
        let keychain = try options.open()
        var count = 0
        for itemClass in ItemClass.allCases { count += try keychain.items(matching: KeychainQuery(itemClass: itemClass)).count }
        if json {
            try JSONLines.write(KeychainStatusReport(path: path, unlocked: KeychainSession.exists(keychain), items: count))
            return
        }
        Terminal.writeLine("keychain: \(path)")
        Terminal.writeLine("state:    \(KeychainSession.exists(keychain) ? "unlocked (this session)" : "locked")")
        Terminal.writeLine("items:    \(count)")
    }
}

struct KeychainAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a generic password, an internet password, a key or a certificate.",
        discussion: """
            The secret comes from a prompt (asked twice) or --stdin. A private key file (PEM, DER, \
            JWK...) is stored under --tag with -k/--key: its class, type, size and public-key fingerprint \
            become the item's attributes, as for a signing key an app stores with Coffer's library.

            Examples:
              coffer keychain add --service com.example.app --account ada@example.com
              coffer keychain add --server db.example --protocol postgres --account app
              coffer keychain add --tag com.example.release-signing -k release.key
              coffer keychain add --certificate ca.pem --label "Example CA"
            """
    )

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    @Option(help: "A name for people.") var label: String?
    @Option(help: "A note for people.") var comment: String?

    @Option(help: ArgumentHelp("When the secret is readable: when-unlocked, after-first-unlock, or either with -this-device-only (never exported).", valueName: "class"))
    var accessibility = "when-unlocked"

    @Flag(name: .customLong("stdin"), help: "Read the secret from standard input instead of a prompt.")
    var secretFromStandardInputFlag = false

    /// `--secret-stdin`, the spelling before the flags became one language (docs/CLI.md).
    @Flag(name: .customLong("secret-stdin"), help: .hidden)
    var deprecatedSecretStdin = false

    var secretFromStandardInput: Bool { secretFromStandardInputFlag || deprecatedSecretStdin }

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Store this private key file under --tag (a pkcs11: URI stores a reference to a key on a token).", valueName: "file"))
    var keyPath: String?

    /// `--key-file`, the spelling before the flags became one language (docs/CLI.md).
    @Option(name: .customLong("key-file"), help: .hidden)
    var deprecatedKeyFile: String?

    var keyFile: String? { keyPath ?? deprecatedKeyFile }

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("For -k pkcs11:…: the token's PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    func validate() throws {
        Deprecation.warn("--secret-stdin", "--stdin", used: deprecatedSecretStdin)
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        if keyFile != nil && (name.tag == nil || secretFromStandardInput || name.keyClass != nil || name.keyType != nil) {
            throw ValidationError("-k/--key goes with --tag alone: the key's class and type come from the file")
        }
    }

    func run() throws {
        let accessibility = try parseAccessibility(accessibility)
        if let keyFile, let tag = name.tag {
            try addKeyFile(keyFile, tag: tag, accessibility: accessibility)
            return
        }
        if let identity = try name.certificateIdentity() {
            try addCertificate(identity, accessibility: accessibility)
            return
        }
        var item = try name.newItem(accessibility: accessibility)
        item.label = label
        item.comment = comment
        let keychain = try options.openUnlocked()
        var secret = try readItemSecret(fromStandardInput: secretFromStandardInput)
        defer { SecretBytes.wipe(&secret) }
        do {
            try keychain.add(item, secret: secret)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("an item for \(name) already exists", hint: "change it with 'coffer keychain update'")
        }
    }

    private func addCertificate(_ identity: CertificateIdentity, accessibility: Accessibility) throws {
        guard !secretFromStandardInput else { throw ValidationError("a certificate's data is its file; --stdin does not apply") }
        var item = KeychainItem.certificate(issuer: identity.issuer, serialNumber: identity.serialNumber, accessibility: accessibility)
        item.label = label
        item.comment = comment
        let keychain = try options.openUnlocked()
        do {
            try keychain.add(item, secret: identity.der)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("this certificate (serial \(Hex.encode(identity.serialNumber))) is already in the keychain")
        }
        Terminal.writeError("stored certificate with serial \(Hex.encode(identity.serialNumber))\n")
    }

    private func addKeyFile(_ path: String, tag: String, accessibility: Accessibility) throws {
        if HardwareKeys.isURI(path) { return try addTokenKeyReference(path, tag: tag, accessibility: accessibility) }
        let bytes = try KeyFile(contentsOf: path).bytes
        let key: SigningKey
        do {
            let imported = try ImportedKey(importing: bytes, password: { try options.password.read(prompt: "Password for \(path): ") })
            guard let signingKey = imported.signingKey else {
                throw CommandFailure("'\(path)' holds a public key; the keychain keeps private keys under a tag")
            }
            key = signingKey
        } catch let error as CofferFormatsError {
            throw CommandFailure("\(path): \(error.reason)")
        }
        let keychain = try options.openUnlocked()
        do {
            try keychain.add(key, tag: tag, label: label, accessibility: accessibility)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("\(Article.indefinite("\(key.algorithm)")) private key with tag '\(tag)' already exists", hint: "delete it first with 'coffer keychain delete --tag \(tag)'")
        }
        Terminal.note("stored \(key.algorithm) key \(key.verifyingKey.fingerprint.keyID) under tag '\(tag)'")
    }

    /// A key on a token: its public key is read from the token (no PIN: public objects are readable),
    /// and the keychain keeps its pkcs11: URI under the tag — never key material.
    private func addTokenKeyReference(_ text: String, tag: String, accessibility: Accessibility) throws {
        let uri = try HardwareKeys.failing { () throws(PKCS11Error) in try PKCS11URI(text) }
        let module = try HardwareKeys.module(pkcs11Module, uri: uri)
        let found = try HardwareKeys.failing { () throws(PKCS11Error) in try module.publicKey(uri) }
        let publicKey = found.verifyingKey
        // The reference names the key exactly (its token's serial, its id), and keeps where the module is.
        var exact = found.uri
        (exact.modulePath, exact.moduleName, exact.pinSource) = (uri.modulePath, uri.moduleName, uri.pinSource)
        let keychain = try options.openUnlocked()
        do {
            try keychain.addTokenKeyReference(exact.description, publicKey: publicKey, tag: tag, label: label, accessibility: accessibility)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("\(Article.indefinite("\(publicKey.algorithm)")) private key with tag '\(tag)' already exists", hint: "delete it first with 'coffer keychain delete --tag \(tag)'")
        }
        Terminal.note("stored a reference to \(publicKey.algorithm) key \(publicKey.fingerprint.keyID) on token '\(exact.token ?? "")' (serial \(exact.serial ?? "")) under tag '\(tag)'")
    }
}

struct KeychainGet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Read an item's secret.",
        discussion: """
            The secret is printed when standard output is a pipe or a file, or with --reveal; on a \
            terminal only its attributes are shown.

            Examples:
              coffer keychain get --service com.example.api --account ci
              TOKEN=$(coffer keychain get --service com.example.api --account ci)
            """
    )

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    @Flag(help: "Print the secret even on a terminal.") var reveal = false

    func run() throws {
        let keychain = try options.openUnlocked()
        var secret = try keychain.secret(matching: try name.query())
        defer { SecretBytes.wipe(&secret) }
        if reveal || !Terminal.standardOutputIsTerminal {
            try secret.withUnsafeBytes { try Terminal.writeData($0) }
            if Terminal.standardOutputIsTerminal { Terminal.writeOut("\n") }
        } else {
            Terminal.writeLine("item:   \(name)\nsecret: \(secret.count) bytes (hidden; pass --reveal or pipe the output)")
        }
    }
}

struct KeychainUpdate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "Change an item's secret, label, account or accessibility.", discussion: """
            Examples:
              coffer keychain update --service com.example.api --account ci --secret
              printf %s "$NEW" | coffer keychain update --service com.example.api \\
                  --account ci --stdin
            """)

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    @Flag(name: .customLong("secret"), help: "Replace the secret (asked at a prompt).") var newSecret = false
    @Flag(name: .customLong("stdin"), help: "Replace the secret with standard input.") var secretFromStandardInputFlag = false
    /// `--secret-stdin`, the spelling before the flags became one language (docs/CLI.md).
    @Flag(name: .customLong("secret-stdin"), help: .hidden) var deprecatedSecretStdin = false
    var secretFromStandardInput: Bool { secretFromStandardInputFlag || deprecatedSecretStdin }
    @Option(help: "A new label.") var label: String?
    @Option(name: .customLong("new-account"), help: "Rename the account.") var newAccount: String?
    @Option(help: ArgumentHelp("A new accessibility class.", valueName: "class")) var accessibility: String?

    func run() throws {
        Deprecation.warn("--secret-stdin", "--stdin", used: deprecatedSecretStdin)
        var changes = KeychainChanges()
        if newSecret || secretFromStandardInput { changes.secret = try readItemSecret(fromStandardInput: secretFromStandardInput) }
        if let label { changes.label = .some(label) }
        changes.account = newAccount
        changes.accessibility = try accessibility.map(parseAccessibility)
        guard changes != KeychainChanges() else {
            throw ValidationError("nothing to change: pass --secret, --stdin, --label, --new-account or --accessibility")
        }
        let keychain = try options.openUnlocked()
        try keychain.update(matching: try name.query(), with: changes)
        if var secret = changes.secret { SecretBytes.wipe(&secret) }
    }
}

struct KeychainDelete: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an item (generic password, internet password, or every key under a tag).", discussion: """
            Examples:
              coffer keychain delete --service com.example.api --account ci
              coffer keychain delete --tag com.example.release-signing
            """)

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    func run() throws {
        let keychain = try options.open()
        var query = try name.query()
        query.matchLimit = .all
        let count = try keychain.delete(matching: query)
        Terminal.writeError("deleted \(count) item\(count == 1 ? "" : "s")\n")
    }
}

struct KeychainList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List items' attributes (never their secrets); works while locked.", discussion: """
            Examples:
              coffer keychain list
              coffer keychain list --service com.example.api --json
            """)

    @OptionGroup var options: KeychainOptions

    @Option(help: "Only this service's generic passwords.") var service: String?
    @Flag(help: "One JSON array of objects.") var json = false

    func run() throws {
        let keychain = try options.open()
        var items: [KeychainItem] = []
        if let service {
            items = try keychain.items(matching: .genericPassword(service: service))
        } else {
            for itemClass in ItemClass.allCases { items += try keychain.items(matching: KeychainQuery(itemClass: itemClass)) }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(items)
            Terminal.writeLine(String(decoding: data, as: UTF8.self))
            return
        }
        for item in items {
            let kind: String = item.itemClass.description
            let name: String = Self.name(of: item)
            let access: String = item.accessibility.description
            var line = "\(kind)  \(name)  \(access)"
            if let label = item.label { line += "  \"\(label)\"" }
            Terminal.writeLine(line)
        }
    }

    static func name(of item: KeychainItem) -> String {
        let account: String = item.account ?? ""
        switch item.itemClass {
        case .genericPassword:
            let service: String = item.service ?? ""
            return "\(service)  \(account)"
        case .internetPassword:
            let scheme: String = item.protocol ?? ""
            let server: String = item.server ?? ""
            let port: String = item.port.map { ":\($0)" } ?? ""
            let path: String = item.path ?? ""
            return "\(scheme)://\(account)@\(server)\(port)\(path)"
        case .key:
            // Text as it reads; a binary tag (or one that would print invisible or control characters
            // to the terminal) in hex, as 0x….
            let tag = item.applicationTagText ?? item.applicationTag.map { "0x" + Hex.encode($0) } ?? ""
            let keyClass: String = item.keyClass?.rawValue ?? ""
            let keyType: String = item.keyType ?? ""
            return "tag \(tag)  \(keyClass) \(keyType)"
        case .certificate:
            let serial: String = Hex.encode(item.serialNumber ?? [])
            return "serial \(serial)"
        }
    }
}

struct KeychainPasswd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the keychain password and re-encrypt every item under a new master key.",
        discussion: """
            Every item is re-encrypted in one transaction under a new random master key wrapped by the new \
            password, and the old wrapped key is overwritten in the file. A copy of the keychain taken before \
            the change still opens, with the old password, what it held then; it opens nothing added or \
            changed since (docs/KEYCHAIN.md). The current password comes from --password-file/--password-env \
            or a prompt; the new one from --new-password-file/--new-password-env or a prompt.

            Examples:
              coffer keychain passwd
              coffer keychain passwd --password-file old.txt --new-password-file new.txt
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new password from this file's first line.", valueName: "file"))
    var newPasswordFile: String?
    @Option(name: .customLong("new-password-env"), help: ArgumentHelp("Read the new password from this environment variable.", valueName: "var"))
    var newPasswordEnvironmentVariable: String?

    func run() throws {
        let keychain = try options.open()
        var old = try options.password.read(prompt: "Current keychain password: ")
        defer { SecretBytes.wipe(&old) }
        var new = try PasswordOptions(file: newPasswordFile, environmentVariable: newPasswordEnvironmentVariable).read(prompt: "New keychain password: ", confirm: true)
        defer { SecretBytes.wipe(&new) }
        try keychain.changePassword(from: String(decoding: old, as: UTF8.self), to: String(decoding: new, as: UTF8.self))
        KeychainSession.end(keychain, path: try options.resolvedPath)
        Terminal.writeError("keychain password changed; every item re-encrypted under a new master key\n")
    }
}

struct KeychainRotate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Re-encrypt every item under a new master key (the password stays).",
        discussion: """
            For when a copy of the keychain file may have leaked together with its password, or on a \
            schedule: after the rotation, that copy's master key opens nothing of today's file. One \
            transaction; an unlocked session ends.

            Example:
              coffer keychain rotate
            """
    )

    @OptionGroup var options: KeychainOptions

    func run() throws {
        let keychain = try options.open()
        var password = try options.password.read(prompt: "Keychain password: ")
        defer { SecretBytes.wipe(&password) }
        try keychain.rotateMasterKey(password: String(decoding: password, as: UTF8.self))
        KeychainSession.end(keychain, path: try options.resolvedPath)
        Terminal.writeError("every item re-encrypted under a new master key\n")
    }
}
