import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import Foundation

/// Where an export's own password comes from: `--export-password-file` or `--export-password-env`,
/// else a prompt.
struct ExportPasswordOptions: ParsableArguments {
    @Option(name: .customLong("export-password-file"), help: ArgumentHelp("Read the export's password from this file's first line.", valueName: "file"))
    var file: String?

    @Option(name: .customLong("export-password-env"), help: ArgumentHelp("Read the export's password from this environment variable.", valueName: "var"))
    var environmentVariable: String?

    var isGiven: Bool { file != nil || environmentVariable != nil }

    func read(prompt: String, confirm: Bool) throws -> [UInt8] {
        let source = PasswordOptions(file: file, environmentVariable: environmentVariable)
        try source.validate()
        return try source.read(prompt: prompt, confirm: confirm)
    }
}

struct KeychainExport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every item that may leave this device to one encrypted file.",
        discussion: """
            The export is a Coffer encrypted file (docs/KEYCHAIN.md, "Export file") holding every item's \
            attributes and secret; *-this-device-only items are left out. It is protected by its own \
            password (asked twice, or --export-password-file/--export-password-env), a 32-byte key (-k/--key), \
            or -r recipients' public keys. The keychain password is asked for even when the keychain is \
            unlocked: an export reveals every secret. Items with an application password stay sealed under it.

            Examples:
              coffer keychain export -o keychain-backup.coffer
              coffer keychain export -r backup.pub -o keychain-backup.coffer
              coffer keychain import keychain-backup.coffer --keychain new.db
            """
    )

    @OptionGroup var options: KeychainOptions
    @OptionGroup(title: "Export password") var exportPassword: ExportPasswordOptions

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Protect the export with the 32-byte key in this file.", valueName: "file"))
    var keyPath: String?

    /// `--key-file`, the spelling before the flags became one language (docs/CLI.md).
    @Option(name: .customLong("key-file"), help: .hidden)
    var deprecatedKeyFile: String?

    var keyFile: String? { keyPath ?? deprecatedKeyFile }

    @Option(name: [.customShort("r"), .customLong("recipient")], help: ArgumentHelp("Encrypt the export for this public key (repeatable).", valueName: "pub"))
    var recipients: [String] = []

    @Option(name: .shortAndLong, help: ArgumentHelp("The export file ('-': standard output, never a terminal).", valueName: "file"))
    var output: String

    @Flag(help: "Replace an existing output file.") var force = false

    func validate() throws {
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        if [keyFile != nil, !recipients.isEmpty, exportPassword.isGiven].filter({ $0 }).count > 1 {
            throw ValidationError("protect the export one way: its own password, -k/--key, or -r recipients")
        }
    }

    func run() throws {
        if output == "-" && Terminal.standardOutputIsTerminal {
            throw CommandFailure("refusing to write the export to a terminal", hint: "redirect to a file, or use -o FILE")
        }
        if output != "-" && !force && KeyFiles.exists(output) {
            throw CommandFailure("'\(output)' already exists", hint: "choose another name with -o, or pass --force to replace it")
        }
        let keychain = try options.open()
        var keychainPassword = try options.password.read(prompt: "Keychain password: ")
        defer { SecretBytes.wipe(&keychainPassword) }
        var exportSecret: [UInt8] = []
        defer { SecretBytes.wipe(&exportSecret) }
        let protection: EncryptionProtection
        if let keyFile {
            protection = .key(try EncryptionKey(bytes: try readKeyFile(keyFile)))
        } else if !recipients.isEmpty {
            protection = .recipients(try readRecipients(recipients))
        } else {
            exportSecret = try exportPassword.read(prompt: "Password for the export: ", confirm: true)
            protection = .password(exportSecret)
        }
        let (file, summary) = try keychain.exportItems(keychainPassword: String(decoding: keychainPassword, as: UTF8.self), protection: protection)
        try OutputTarget(path: output, overwrite: force, durable: true).write { write in
            try file.withUnsafeBytes { try write($0) }
        }
        var message = "exported \(summary.exported) item\(summary.exported == 1 ? "" : "s")"
        if output != "-" { message += " to \(output)" }
        if summary.skippedThisDeviceOnly > 0 { message += "; \(summary.skippedThisDeviceOnly) this-device-only left out" }
        Terminal.writeError(message + "\n")
    }
}

struct KeychainImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the items of an export made by 'coffer keychain export'.",
        discussion: """
            All items are added in one transaction, or none: an item that exists already (same service and \
            account, server and account, tag and key type...) stops the import unless --skip-existing keeps \
            the keychain's own. Items keep their attributes, dates, accessibility and application passwords.
            The export opens with its password (a prompt, --export-password-file, --export-password-env), \
            -k/--key or -i identity.

            Examples:
              coffer keychain import backup.coffer
              coffer keychain import -i me.key --skip-existing team.coffer
            """
    )

    @OptionGroup var options: KeychainOptions
    @OptionGroup(title: "Export password") var exportPassword: ExportPasswordOptions

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Open the export with the 32-byte key in this file.", valueName: "file"))
    var keyPath: String?

    /// `--key-file`, the spelling before the flags became one language (docs/CLI.md).
    @Option(name: .customLong("key-file"), help: .hidden)
    var deprecatedKeyFile: String?

    var keyFile: String? { keyPath ?? deprecatedKeyFile }

    @Option(name: [.customShort("i"), .customLong("identity")], help: ArgumentHelp("Open the export with this private key.", valueName: "key"))
    var identity: String?

    @Flag(name: .customLong("skip-existing"), help: "Keep items the keychain already has and import the rest.")
    var skipExisting = false

    @Option(help: ArgumentHelp("Accept scrypt costs up to 2^N (default 20).", valueName: "n"))
    var maxScryptLogN: Int = 20

    @Argument(help: "The export file ('-': standard input).")
    var input: String

    func validate() throws {
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        if [keyFile != nil, identity != nil, exportPassword.isGiven].filter({ $0 }).count > 1 {
            throw ValidationError("open the export one way: its password, -k/--key, or -i identity")
        }
    }

    func run() throws {
        guard let bytes = try FileReader.open(input).readAll(limit: Keychain.maximumExportFileSize) else {
            throw CommandFailure("'\(input)' is larger than 1 GiB: not a keychain export")
        }
        let credential: DecryptionCredential
        var secret: [UInt8] = []
        defer { SecretBytes.wipe(&secret) }
        if let keyFile {
            credential = .key(try EncryptionKey(bytes: try readKeyFile(keyFile)))
        } else if let identity {
            credential = .identity(try readIdentity(identity, password: { try TerminalPrompt.readSecret("Password for \(identity): ") }))
        } else {
            secret = try exportPassword.read(prompt: "Password of the export: ", confirm: false)
            credential = .password(secret)
        }
        let keychain = try options.openUnlocked()
        let limits = PasswordKDFLimits(maximumScryptLogN: maxScryptLogN)
        let summary: KeychainImportSummary
        do {
            summary = try keychain.importItems(bytes, credential: credential, limits: limits, ifExists: skipExisting ? .skipExisting : .fail)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("the keychain already has an item of the export; nothing was imported", hint: "pass --skip-existing to keep yours and import the rest")
        }
        var message = "imported \(summary.imported) item\(summary.imported == 1 ? "" : "s")"
        if summary.skippedExisting > 0 { message += "; \(summary.skippedExisting) already present, kept as they were" }
        Terminal.writeError(message + "\n")
    }
}
