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

            An export to -r recipients is signed with --signing-key (a private key file, or a key on a token \
            as a pkcs11: URI): a recipient's public key is public, so only your signature tells the importer \
            the items are yours. The importer names your public key with 'keychain import -p'. The \
            signature covers the items and the recipients, so a recipient cannot pass the export on as \
            made for someone else. A password or key export may be signed too.

            Examples:
              coffer keychain export -o keychain-backup.coffer
              coffer keychain export -r bob.pub --signing-key me.key -o for-bob.coffer
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

    @Option(name: .customLong("signing-key"), help: ArgumentHelp("Sign the export with this private key (required with -r); importers name its public key.", valueName: "key"))
    var signingKey: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("The export file ('-': standard output, never a terminal).", valueName: "file"))
    var output: String

    @Flag(help: "Replace an existing output file.") var force = false

    func validate() throws {
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        if [keyFile != nil, !recipients.isEmpty, exportPassword.isGiven].filter({ $0 }).count > 1 {
            throw ValidationError("protect the export one way: its own password, -k/--key, or -r recipients")
        }
        if !recipients.isEmpty && signingKey == nil {
            throw ValidationError(
                "an export to -r recipients must be signed: pass --signing-key KEY (your private key; the importer names its public key with 'keychain import -p')"
            )
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
        // The signing key first: its password or PIN is asked before the keychain's.
        let signer = try signingKey.map { try KeyFiles.signer($0, passwords: .prompting, pkcs11Module: nil) }
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
        let (file, summary) = try keychain.exportItems(
            keychainPassword: String(decoding: keychainPassword, as: UTF8.self), protection: protection, signedBy: signer
        )
        try OutputTarget(path: output, overwrite: force, durable: true).write { write in
            try file.withUnsafeBytes { try write($0) }
        }
        var message = "exported \(summary.exported) item\(summary.exported == 1 ? "" : "s")"
        if output != "-" { message += " to \(output)" }
        if summary.skippedThisDeviceOnly > 0 { message += "; \(summary.skippedThisDeviceOnly) this-device-only left out" }
        if let signer { message += "; signed by key \(signer.verifyingKey.fingerprint.keyID)" }
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

            Who wrote the export: a password or key is known only to you and the exporter, so an export \
            that opens with one is theirs. Your public key is not secret: anyone who has it can make a \
            file that opens with -i and plant passwords and keys in your keychain. So an export that \
            opens with -i is imported only when it is signed by the key you name with -p (the exporter's \
            public key; compare its key id with theirs, 'coffer key show') and was made for you; anything \
            else is refused (exit 1) and nothing is imported. Exports made for recipients by Coffer 1.0.0 \
            are not signed: --insecure-accept-unsigned imports one anyway, only for a file whose origin \
            you checked another way.

            Deleted items stay deleted: a signed export carries the time it was made, and an item this \
            keychain deleted after that time (or, for an export that does not say when it was made, at \
            all) stops the import (exit 1), so an old export cannot bring back a secret you removed. \
            --skip-existing leaves such items out; --restore-deleted imports them.

            Examples:
              coffer keychain import backup.coffer
              coffer keychain import -i me.key -p alice.pub from-alice.coffer
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

    @Option(name: [.customShort("p"), .customLong("public-key")], help: ArgumentHelp("Import only an export signed by this public key (the exporter's); needed with -i.", valueName: "file"))
    var publicKey: String?

    @Flag(name: .customLong("insecure-accept-unsigned"), help: "With -i, import an unsigned export (Coffer 1.0.0's): anyone with your public key can write one.")
    var insecureAcceptUnsigned = false

    @Flag(name: .customLong("skip-existing"), help: "Keep items the keychain already has (or deleted after the export was made) and import the rest.")
    var skipExisting = false

    @Flag(name: .customLong("restore-deleted"), help: "Import items this keychain deleted after the export was made (refused by default: an old export would bring back a deleted secret).")
    var restoreDeleted = false

    @Argument(help: "The export file ('-': standard input).")
    var input: String

    func validate() throws {
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        if [keyFile != nil, identity != nil, exportPassword.isGiven].filter({ $0 }).count > 1 {
            throw ValidationError("open the export one way: its password, -k/--key, or -i identity")
        }
        if publicKey != nil && insecureAcceptUnsigned {
            throw ValidationError("-p accepts only exports signed by that key; --insecure-accept-unsigned accepts any: pass one")
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
        let author: KeychainExportAuthor
        if let publicKey {
            author = .signer(try KeyFiles.importKey(publicKey, passwords: .prompting).verifyingKey)
        } else {
            author = insecureAcceptUnsigned ? .insecureAnyone : .credentialHolder
        }
        let keychain = try options.openUnlocked()
        let limits = options.limits
        let summary: KeychainImportSummary
        do {
            summary = try keychain.importItems(
                bytes, credential: credential, author: author, limits: limits, ifExists: skipExisting ? .skipExisting : .fail, restoringDeleted: restoreDeleted
            )
        } catch {
            switch error.code {
            case KeychainError.Code.duplicateItem:
                throw CommandFailure("the keychain already has an item of the export; nothing was imported", hint: "pass --skip-existing to keep yours and import the rest")
            case KeychainError.Code.untrustedExport where error.reason.contains("was deleted from this keychain"):
                throw CommandFailure(
                    "\(error.reason); nothing was imported",
                    hint: "pass --restore-deleted to bring back what was deleted, or --skip-existing to import the rest", exitCode: ExitStatus.checkFailed
                )
            case KeychainError.Code.untrustedExport:
                throw CommandFailure("\(error.reason); nothing was imported", hint: untrustedHint, exitCode: ExitStatus.checkFailed)
            case KeychainError.Code.badParameter where (error.underlying as? CofferFormatsError)?.code == .costTooHigh:
                throw CommandFailure(error.reason, hint: "if you trust the export, raise the limit with --max-scrypt-log-n; a hostile file can ask for any amount of work")
            default:
                throw error
            }
        }
        var message = "imported \(summary.imported) item\(summary.imported == 1 ? "" : "s")"
        if summary.skippedExisting > 0 { message += "; \(summary.skippedExisting) already present, kept as they were" }
        if summary.skippedDeleted > 0 { message += "; \(summary.skippedDeleted) deleted here after the export was made, left out" }
        Terminal.writeError(message + "\n")
    }

    /// What to do about an export whose author is not proven, by what was given.
    private var untrustedHint: String {
        publicKey == nil
            ? "pass the exporter's public key with -p FILE (they sign with 'keychain export --signing-key'); --insecure-accept-unsigned imports an unsigned export anyway, for a file whose origin you checked"
            : "check that -p names the exporter's public key, and that the export was made for your key"
    }
}
