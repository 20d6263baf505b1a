import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

struct Encrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a file with a password, a key, or for public-key recipients.",
        discussion: """
            Coffer's format (docs/FORMAT-ENCRYPTION.md) authenticates everything and streams any size in \
            constant memory: 64 KiB segments of AES-256-GCM (or --cipher chacha), each detected if \
            altered, reordered, truncated or extended.

            Who can open the file:
              -P, --password-file F, --password-env VAR
                  a password (scrypt N=2^17 by default)
              -k/--key K
                  a 32-byte key ('coffer random --raw --output K')
              -r PUB (repeatable)
                  holders of these X25519 or P-256 private keys
                  ('coffer key generate -t x25519')
              -R FILE
                  every key a recipients file lists

            Legacy formats for existing apps and tools: --format rncryptor (RNCryptor v3, authenticated) \
            and --format openssl ('openssl enc -aes-256-cbc -pbkdf2 -iter N' files; NOT authenticated, \
            with a warning). Without -o the output goes to standard output unless that is a terminal (a \
            pipe, a file, /dev/null: as age does), else to IN.coffer; never to a terminal, unless -a/--armor \
            makes it text. -o /dev/stdout and devices such as -o /dev/null are written as streams.

            The output file appears whole or not at all: it has no name until the last byte is written, \
            so Ctrl-C, a kill or a full disk leaves nothing behind, and a file that appears at the \
            destination meanwhile is never replaced (without --force). Success means durable: the file \
            and its folder (or standard output, when it is a file) are flushed to disk before coffer \
            exits 0, so 'coffer encrypt F && rm F' is safe. --no-sync skips the flush (as age and \
            openssl do), for outputs that are not the only copy.

            Examples:
              coffer encrypt -P backup.tar
              coffer encrypt -r alice.pub -r bob.pub report.pdf -o report.pdf.coffer
              coffer encrypt -R team.recipients notes.txt -o notes.txt.coffer
              coffer encrypt -a -r alice.pub secret.txt
              tar c photos | coffer encrypt -k photos.key > photos.tar.coffer
            """
    )

    @Flag(name: [.customShort("P"), .customLong("passphrase")], help: "Ask for a password (without echo, twice).")
    var asksForPassword = false

    /// `-p`, the spelling before the flags became one language (docs/CLI.md: -p is a public key).
    @Flag(name: .customShort("p"), help: .hidden)
    var deprecatedAskPassword = false

    private var askPassword: Bool { asksForPassword || deprecatedAskPassword }

    @OptionGroup(title: "Password")
    var passwords: PasswordOptions

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Encrypt with the 32-byte key in this file.", valueName: "file"))
    var keyPath: String?

    /// `--key-file`, the spelling before the flags became one language (docs/CLI.md).
    @Option(name: .customLong("key-file"), help: .hidden)
    var deprecatedKeyFile: String?

    private var keyFile: String? { keyPath ?? deprecatedKeyFile }

    @Option(name: .customLong("keychain-key"), help: ArgumentHelp("Encrypt with the 32-byte key stored in the keychain under this tag ('coffer server data-key fetch'); --password-file/--password-env then give the keychain's password.", valueName: "tag"))
    var keychainKey: String?

    @Option(name: .customLong("keychain"), help: ArgumentHelp("The keychain for --keychain-key (default: $XDG_DATA_HOME/coffer/keychain.db).", valueName: "path"))
    var keychainPath: String?

    @Option(name: .customLong("max-scrypt-log-n"), help: ArgumentHelp("With --keychain-key: do the keychain password's key derivation up to the work of scrypt N=2^N, r=8, p=1 (default 19), for a keychain made with a higher --scrypt-log-n.", valueName: "n"))
    var maxScryptLogN = 19

    @Option(name: [.customShort("r"), .customLong("recipient")], help: ArgumentHelp("Encrypt for this public key (repeatable).", valueName: "pub"))
    var recipients: [String] = []

    @Option(name: [.customShort("R"), .customLong("recipients-file")], help: ArgumentHelp("Encrypt for every public key this file lists: PEM blocks or one key per line (JWK, OpenSSH, base64 DER), '#' comments (repeatable).", valueName: "file"))
    var recipientFiles: [String] = []

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write ('-': standard output; default: standard output unless it is a terminal, else IN.coffer).", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("coffer (default), rncryptor or openssl.", valueName: "format"), transform: parseEncryptedFormat)
    var format: EncryptedFormat = .coffer

    @Option(help: ArgumentHelp("aes-gcm (default) or chacha.", valueName: "cipher"), completion: .list(["aes-gcm", "chacha"]), transform: EncryptionCipher.parse)
    var cipher: EncryptionCipher = .aes256GCM

    @Option(help: ArgumentHelp("Password KDF: scrypt (default) or pbkdf2.", valueName: "kdf"))
    var kdf: String = "scrypt"

    @Option(help: ArgumentHelp("scrypt cost as log2 N (default 17: 128 MiB; at most 19, what readers open by default).", valueName: "n"))
    var scryptLogN: Int = 17

    @Option(help: ArgumentHelp("PBKDF2 iterations (at least and by default 600,000; at most 2,000,000).", valueName: "n"))
    var iterations: Int = PasswordKDF.minimumPBKDF2Iterations

    @Option(help: ArgumentHelp("OpenSSL format: PBKDF2 iterations, as 'openssl enc -iter' (default 10,000).", valueName: "n"))
    var iter: Int = OpenSSLEnc.defaultIterations

    @Flag(name: [.customShort("a"), .customLong("armor")], help: "Write the file as text: base64 between BEGIN/END lines (as age -a; decrypt detects it).")
    var armor = false

    @Flag(help: "Replace an existing output file.")
    var force = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Say where the output went, standard output included (to standard output, nothing is said otherwise).")
    var verbose = false

    @Flag(name: .customLong("no-sync"), help: "Do not wait for the output to reach the disk (faster; not for the only copy).")
    var noSync = false

    @Argument(help: "The file to encrypt ('-' or nothing: standard input).")
    var input: String = "-"

    /// Whether a password protects the file (with --keychain-key, the password options are the keychain's).
    private var usesPassword: Bool { keychainKey == nil && (askPassword || passwords.passwordFile != nil || passwords.passwordEnvironmentVariable != nil) }

    func validate() throws {
        Deprecation.warn("-p", "-P/--passphrase", used: deprecatedAskPassword)
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        let modes = [usesPassword, keyFile != nil, keychainKey != nil, !recipients.isEmpty || !recipientFiles.isEmpty].filter { $0 }.count
        guard modes == 1 else {
            throw ValidationError("say who can open the file: a password (-P, --password-file, --password-env), -k/--key, --keychain-key, or recipients (-r, -R); exactly one of them")
        }
        guard kdf == "scrypt" || kdf == "pbkdf2" else { throw ValidationError("--kdf must be scrypt or pbkdf2, found '\(kdf)'") }
        if format != .coffer && !(recipients.isEmpty && recipientFiles.isEmpty) { throw ValidationError("recipients need the coffer format") }
        if format == .openssl && (keyFile != nil || keychainKey != nil) { throw ValidationError("the openssl format takes a password, not a key file") }
        if format != .coffer && armor { throw ValidationError("--armor writes the coffer format only") }
    }

    func run() throws {
        // Without -o: standard output unless it is a terminal (`tar c docs | coffer encrypt -r KEY > docs.tar.coffer`,
        // as age does), else IN with the format's suffix.
        let suffix = format == .coffer ? ".coffer" : format == .rncryptor ? ".rncryptor" : ".enc"
        let destination = output ?? (input == "-" || Terminal.standardOutputTakesData ? "-" : input + suffix)
        if destination == "-" && Terminal.standardOutputIsTerminal && !armor {
            throw CommandFailure("refusing to write ciphertext to a terminal", hint: "redirect to a file, or use -o FILE")
        }
        if !OutputTarget.isStream(destination) && !force && KeyFiles.exists(destination) {
            throw CommandFailure("'\(destination)' already exists", hint: "choose another name with -o, or pass --force to replace it")
        }
        if format == .openssl {
            Terminal.warn("the OpenSSL enc format is not authenticated: anyone can alter the file undetected; use it only for tools that read nothing else")
        }
        let passwordKDF: PasswordKDF = kdf == "scrypt" ? .scrypt(logN: scryptLogN, r: 8, p: 1) : .pbkdf2(iterations: iterations)
        if usesPassword && format != .rncryptor {
            // A cost the default readers would refuse is refused before the password is asked for.
            let cost = format == .openssl ? PasswordKDF.pbkdf2(iterations: iter) : passwordKDF
            do {
                try PasswordKDFLimits().check(cost, subject: "the chosen cost")
            } catch {
                throw CommandFailure("\(error.reason): readers with the default limits would refuse the file", hint: Hint.writingCost)
            }
        }
        // Wiped in place on the way out; empty when no password is used.
        var secret = usesPassword ? try passwords.read(prompt: "Password: ", confirm: true) : []
        defer { SecretBytes.wipe(&secret) }
        let keyBytes = try keyFile.map(readKeyFile) ?? keychainKey.map {
            try readKeychainKey(tag: $0, path: keychainPath, passwords: passwords, limits: PasswordKDFLimits(scryptUpToLogN: maxScryptLogN))
        }
        let reader = try FileReader.open(input)
        let progress = ProgressBar(total: reader.size, label: input)
        defer { progress.finish() }

        let target = OutputTarget(path: destination, overwrite: force, durable: !noSync)
        try target.write { (destination: OutputTarget.Destination) in
            if format == .coffer {
                let protection: EncryptionProtection
                if usesPassword {
                    protection = .password(secret, passwordKDF)
                } else if let keyBytes {
                    protection = .key(try EncryptionKey(bytes: keyBytes))
                } else {
                    protection = .recipients(distinctRecipients(try readRecipients(recipients) + readRecipientFiles(recipientFiles)))
                }
                switch destination {
                case _ where armor:
                    try withoutActuallyEscaping(destination.write) { write in
                        let armored = ArmorWriter(output: write)
                        try CofferEncryption.encrypt(reader: reader, to: protection, cipher: cipher, progress: { progress.update($0) }, output: armored.write)
                        try armored.finish()
                    }
                case .file(let writer):
                    try CofferEncryption.encrypt(reader: reader, to: protection, cipher: cipher, progress: { progress.update($0) }, writer: writer)
                case .stream(let output):
                    try CofferEncryption.encrypt(reader: reader, to: protection, cipher: cipher, progress: { progress.update($0) }, output: output)
                }
            } else {
                try CofferEncryption.encryptLegacy(
                    reader: reader, format: format, password: usesPassword ? secret : nil, keyBytes: keyBytes, openSSLIterations: iter,
                    progress: { progress.update($0) }, output: destination.write
                )
            }
        }
        progress.finish()
        if !OutputTarget.standardOutputNames.contains(destination) {
            Terminal.writeError("encrypted \(input == "-" ? "standard input" : input) -> \(destination) (\(format)\(armor ? ", armoured" : ""))\n")
        } else if verbose {
            Terminal.writeError("encrypted \(input == "-" ? "standard input" : input) -> standard output (\(format)); -o FILE writes a file\n")
        }
    }
}
