import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

struct Decrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decrypt a Coffer, RNCryptor v3 or OpenSSL enc file (the format is detected).",
        discussion: """
            To a file, the plaintext appears only after all of it authenticated: it is written to a file \
            without a name, which is named at the end, so a failure, Ctrl-C or a kill leaves nothing \
            behind, and a file that appears at the destination meanwhile is never replaced (without \
            --force). The file is not flushed to disk before exit unless --sync is given: the ciphertext \
            remains.

            Without -o the plaintext goes to standard output unless that is a terminal (a pipe, a file, \
            /dev/null: as age and gpg do, 'coffer decrypt -i me.key docs.tar.coffer | tar x'); -o /dev/stdout \
            and devices such as -o /dev/null are written as streams. At a terminal it goes to IN without its \
            .coffer, .rncryptor or .enc suffix. To standard output, nothing touches the disk. A Coffer file streams as each segment \
            authenticates (as age does): if the rest turns out truncated or altered, coffer exits 1 and \
            what the reader received must be discarded. RNCryptor and OpenSSL files check their data only \
            at the end, so their plaintext is held in memory until then, up to 64 MiB; decrypt larger \
            ones to a file.

            Exit status: 0 decrypted; 1 wrong password or key, or the data was altered or truncated (one \
            message, which on purpose does not say which); 2 a usage or input error. An OpenSSL enc \
            file authenticates nothing: about one wrong password in 256 passes its padding check and \
            decrypts to noise with status 0 (with the warning every OpenSSL file gets).

            A password-protected file may ask for more work than this reader allows by default: the \
            memory and the work N·r·p of scrypt N=2^19, r=8, p=1 (however the file splits them), and 2 \
            million PBKDF2 iterations. Such a file is refused before any work is done; \
            --max-scrypt-log-n and --max-iterations raise the limits for files you trust. Everything \
            'coffer encrypt' writes opens without them.

            Examples:
              coffer decrypt -P backup.tar.coffer
              coffer decrypt -i alice.key report.pdf.coffer -o report.pdf
              coffer decrypt -i alice.key docs.tar.coffer | tar x
              coffer decrypt --password-file pass --iter 100000 legacy.enc -o legacy.txt
            """
    )

    @Flag(name: [.customShort("P"), .customLong("passphrase")], help: "Ask for the password (without echo).")
    var asksForPassword = false

    /// `-p`, the spelling before the flags became one language (docs/CLI.md: -p is a public key).
    @Flag(name: .customShort("p"), help: .hidden)
    var deprecatedAskPassword = false

    private var askPassword: Bool { asksForPassword || deprecatedAskPassword }

    @OptionGroup(title: "Password")
    var passwords: PasswordOptions

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Decrypt with the key in this file (32 bytes; 64 for RNCryptor).", valueName: "file"))
    var keyPath: String?

    /// `--key-file`, the spelling before the flags became one language (docs/CLI.md).
    @Option(name: .customLong("key-file"), help: .hidden)
    var deprecatedKeyFile: String?

    private var keyFile: String? { keyPath ?? deprecatedKeyFile }

    @Option(name: .customLong("keychain-key"), help: ArgumentHelp("Decrypt with the 32-byte key stored in the keychain under this tag ('coffer server data-key fetch'); --password-file/--password-env then give the keychain's password.", valueName: "tag"))
    var keychainKey: String?

    @Option(name: .customLong("keychain"), help: ArgumentHelp("The keychain for --keychain-key (default: $XDG_DATA_HOME/coffer/keychain.db).", valueName: "path"))
    var keychainPath: String?

    @Option(name: [.customShort("i"), .customLong("identity")], help: ArgumentHelp("Decrypt with this private key.", valueName: "key"))
    var identity: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write ('-': standard output; default: standard output unless it is a terminal, else IN without .coffer).", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("OpenSSL format: the iteration count used to encrypt (default 10,000).", valueName: "n"))
    var iter: Int = OpenSSLEnc.defaultIterations

    @Option(help: ArgumentHelp("Accept scrypt costs up to those of N=2^N, r=8, p=1 (default 19).", valueName: "n"))
    var maxScryptLogN: Int = 19

    @Option(help: ArgumentHelp("Accept up to this many PBKDF2 iterations (default 2,000,000).", valueName: "n"))
    var maxIterations: Int = 2_000_000

    @Flag(help: "Replace an existing output file.")
    var force = false

    @Flag(help: "Wait for the plaintext file to reach the disk before exiting.")
    var sync = false

    @Argument(help: "The file to decrypt ('-' or nothing: standard input).")
    var input: String = "-"

    /// Whether a password protects the file (with --keychain-key, the password options are the
    /// keychain's; with -i, the identity's when it is encrypted).
    private var usesPassword: Bool { keychainKey == nil && identity == nil && (askPassword || passwords.passwordFile != nil || passwords.passwordEnvironmentVariable != nil) }

    func validate() throws {
        Deprecation.warn("-p", "-P/--passphrase", used: deprecatedAskPassword)
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        let modes = [usesPassword, keyFile != nil, keychainKey != nil, identity != nil].filter { $0 }.count
        guard modes == 1 else {
            throw ValidationError("say how to open the file: a password (-P, --password-file, --password-env), -k/--key, --keychain-key, or -i identity; exactly one of them")
        }
    }

    func run() throws {
        let destination: String
        if let output {
            destination = output
        } else if input == "-" || Terminal.standardOutputTakesData {
            // As age and gpg do: `coffer decrypt -i key docs.tar.coffer | tar x`.
            destination = "-"
        } else if let stripped = [".coffer", ".rncryptor", ".enc"].first(where: { input.hasSuffix($0) }).map({ String(input.dropLast($0.count)) }) {
            destination = stripped
        } else {
            throw CommandFailure("cannot guess the output name for '\(input)'", hint: "name it with -o FILE, or -o - for standard output")
        }
        if !OutputTarget.isStream(destination) && !force && KeyFiles.exists(destination) {
            throw CommandFailure("'\(destination)' already exists", hint: "choose another name with -o, or pass --force to replace it")
        }
        let limits = PasswordKDFLimits(scryptUpToLogN: maxScryptLogN, pbkdf2Iterations: maxIterations)
        let credential: AnyDecryptionCredential
        if let identity {
            credential = .identity(try readIdentity(identity, password: { try passwords.read(prompt: "Password for \(identity): ") }))
        } else if let keyFile {
            credential = .keyBytes(try readKeyFile(keyFile))
        } else if let keychainKey {
            credential = .keyBytes(try readKeychainKey(tag: keychainKey, path: keychainPath, passwords: passwords, limits: limits))
        } else {
            credential = .password(try passwords.read(prompt: "Password: "), openSSLIterations: iter)
        }
        let reader = try FileReader.open(input)
        let progress = ProgressBar(total: reader.size, label: input)
        defer { progress.finish() }
        var found = EncryptedFormat.coffer
        var released: Int64 = 0
        do {
            if OutputTarget.isStream(destination) {
                // Standard output, or a device (`-o /dev/null`): released as it authenticates.
                try OutputTarget(path: destination, overwrite: force, durable: sync).write { (write: (UnsafeRawBufferPointer) throws -> Void) in
                    found = try AnyFormatDecryptor.decryptToStream(reader: reader, with: credential, limits: limits, progress: { progress.update($0) }) { bytes in
                        try write(bytes)
                        released += Int64(bytes.count)
                    }
                }
            } else {
                let writer = try AtomicFileWriter(destination: destination, overwrite: force, durable: sync, background: true)
                found = try AnyFormatDecryptor.decrypt(reader: reader, with: credential, limits: limits, progress: { progress.update($0) }, writer: writer)
                try writer.commit()
            }
        } catch let error as CofferFormatsError {
            progress.finish()
            let discard: String? = released > 0 ? "standard output already received \(released) authenticated bytes of an incomplete plaintext; discard them" : nil
            switch error.code {
            case .authenticationFailed where error.reason == OpenSSLEnc.settingsMismatch:
                throw CommandFailure(error.reason, hint: discard ?? Hint.openSSLSettings(iterations: iter), exitCode: ExitStatus.checkFailed)
            case .authenticationFailed, .noMatchingKey:
                throw CommandFailure(error.reason, hint: discard, exitCode: ExitStatus.checkFailed)
            case .costTooHigh:
                throw CommandFailure(error.reason, hint: Hint.decryptionCost)
            case .tooLarge:
                throw CommandFailure(error.reason, hint: "decrypt it to a file with -o FILE")
            default:
                throw CommandFailure("\(input == "-" ? "standard input" : input): \(error.reason)", hint: discard)
            }
        }
        progress.finish()
        if found == .openssl {
            Terminal.warn("the OpenSSL enc format is not authenticated; the data decrypted, but nothing proves it was not altered, nor even that the password was right (about one wrong password in 256 passes the only check the format has)")
        }
        if !OutputTarget.standardOutputNames.contains(destination) {
            Terminal.writeError("decrypted \(input == "-" ? "standard input" : input) (\(found)) -> \(destination)\n")
        } else if output == nil && input != "-" {
            Terminal.writeError("decrypted \(input) (\(found)) -> standard output; -o FILE writes a file\n")
        }
    }
}
