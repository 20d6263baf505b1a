// One file on purpose: `coffer key` and its four subcommands, which share the key-type and format
// parsing and the X25519 fallbacks defined here.

import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Generate, inspect and convert signing keys.",
        discussion: """
            Coffer reads keys in every format people meet and says which one it found: PEM or DER \
            SubjectPublicKeyInfo, PKCS#8 (plain or password-encrypted), PKCS#1 (RSA), SEC1 (EC), JWK, \
            Apple's SecKeyCopyExternalRepresentation bytes, and OpenSSH public-key lines.

            Every key is named by its key id (the first 16 hex digits of its fingerprint, the SHA-256 \
            of its SubjectPublicKeyInfo DER, the same value 'openssl pkey -pubout -outform DER | \
            openssl dgst -sha256' prints).
            """,
        subcommands: [KeyGenerate.self, KeyShow.self, KeyConvert.self, KeyList.self]
    )
}

/// What `coffer key generate` makes: a signing key, or an X25519 key for receiving encrypted files.
enum GeneratedKeyType: Equatable {
    case signing(KeyType)
    case x25519
}

/// ssh-keygen's names for the types it makes by default: `-t rsa` is RSA-3072, `-t ecdsa` P-256.
let sshKeygenTypeAliases: [String: KeyType] = ["rsa": .rsa3072, "ecdsa": .p256]

func parseKeyType(_ name: String) throws -> GeneratedKeyType {
    if name.lowercased() == "x25519" { return .x25519 }
    if let alias = sshKeygenTypeAliases[name.lowercased()] { return .signing(alias) }
    guard let type = KeyType(rawValue: name.lowercased()) else {
        throw ValidationError("unknown key type '\(name)'; expected one of: \((KeyType.allCases.map(\.rawValue) + ["x25519"]).joined(separator: ", "))")
    }
    return .signing(type)
}

func parseAppleKeyClass(_ name: String) throws -> AppleKeyClass {
    guard let keyClass = AppleKeyClass(rawValue: name.lowercased()) else {
        throw ValidationError("expected 'public' or 'private', found '\(name)'")
    }
    return keyClass
}

struct KeyGenerate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a key pair.",
        discussion: """
            Types: ed25519 (default), p256, p384, p521, rsa2048, rsa3072, rsa4096, mldsa65, mldsa87 \
            (post-quantum) for signing, with ssh-keygen's rsa (RSA-3072) and ecdsa (P-256); x25519 for receiving encrypted files ('coffer encrypt -r'; P-256 \
            keys can receive too). The private key is written as PKCS#8 PEM with mode 0600; with --encrypt it \
            is protected by a password (PBKDF2-HMAC-SHA-256, 600,000 iterations, AES-256-CBC — the form \
            'openssl pkey' reads). The public key is written beside it as NAME.pub (SubjectPublicKeyInfo \
            PEM), as ssh-keygen does; --public FILE names another file, --no-public writes none. With \
            -o - the private key goes to standard output (as openssl genpkey), the public key only where \
            --public says, and the summary to standard error.

            With --pkcs11-module, --token and --label the key pair is made on a PKCS #11 token (p256, \
            p384, ed25519 where the token has CKM_EDDSA, rsa2048/3072/4096): the private key is sensitive and not extractable, and is named by \
            the pkcs11: URI printed (the token's label, manufacturer, model and serial; the key's label \
            and id), which -k takes wherever it takes a key file. --token is the token's label or its \
            pkcs11: URI, and must match exactly one token: where two have the label, name one by its \
            serial ('coffer key list' shows it). The PIN comes from --password-file, --password-env, \
            the URI's pin-source or a prompt, and is sent only to the token selected.

            Examples:
              coffer key generate -o release.key          # and release.key.pub
              coffer key generate -t p256 -o - | coffer keychain add --tag release -k -
              coffer key generate -t p256 -o api.key --encrypt --password-file pass.txt
              coffer key generate --pkcs11-module /usr/lib/softhsm/libsofthsm2.so \\
                  --token release -t p256 --label signing-2026 --password-file pin.txt
              coffer key generate --token 'pkcs11:token=release;serial=d9d99d8799fe0a55' \\
                  -t p256 --label signing-2026 --password-file pin.txt
            """
    )

    @Option(
        name: [.customShort("t"), .customLong("type")],
        help: ArgumentHelp("The key type (default: ed25519).", valueName: "type"),
        completion: .list(KeyType.allCases.map(\.rawValue) + ["x25519"] + sshKeygenTypeAliases.keys.sorted()),
        transform: parseKeyType
    )
    var type: GeneratedKeyType = .signing(.ed25519)

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Where to write the private key (mode 0600); '-' standard output.", valueName: "file"))
    var outputPath: String?

    @OptionGroup(title: "On a PKCS #11 token (the private key never leaves it)")
    var token: TokenKeyOptions

    private var output: String { outputPath ?? "" }

    @Option(name: .customLong("public"), help: ArgumentHelp("Write the public key (SPKI PEM) here (default: the private key's name + .pub).", valueName: "file"))
    var publicOutput: String?

    @Flag(name: .customLong("no-public"), help: "Write no public key file.")
    var noPublic = false

    /// Where the public key goes: `--public`, else beside the private key file as ssh-keygen puts it.
    private var publicDestination: String? {
        if noPublic { return nil }
        if let publicOutput { return publicOutput }
        guard let outputPath, outputPath != "-", !token.isGiven else { return nil }
        return outputPath + ".pub"
    }

    @Flag(help: "Encrypt the private key with a password.")
    var encrypt = false

    @Flag(help: "With --encrypt, use scrypt (N=2^14, r=8, p=1) instead of PBKDF2.")
    var scrypt = false

    @OptionGroup(title: "Password (with --encrypt)")
    var passwords: PasswordOptions

    @Flag(help: "Replace existing files.")
    var force = false

    func validate() throws {
        if token.isGiven {
            guard token.tokenLabelOrURI != nil, token.label != nil else { throw ValidationError("a key on a token needs --token LABEL (or a token's pkcs11: URI) and --label NAME") }
            if outputPath != nil || encrypt { throw ValidationError("a key made on a token stays there: -o and --encrypt do not apply (--public FILE writes its public key)") }
            return
        }
        guard let outputPath else { throw ValidationError("say where to write the private key with -o FILE, or -o - for standard output (or make it on a token with --pkcs11-module)") }
        if scrypt && !encrypt { throw ValidationError("--scrypt only applies with --encrypt") }
        if noPublic && publicOutput != nil { throw ValidationError("--public and --no-public are alternatives") }
        if outputPath == "-" && publicOutput == "-" { throw ValidationError("the private key goes to standard output; give --public a file") }
        if publicDestination == outputPath { throw ValidationError("the private and public keys need two files") }
    }

    func run() throws {
        if token.isGiven { return try generateOnToken() }
        let toStandardOutput = output == "-"
        let publicOutput = publicDestination
        for path in (toStandardOutput ? [] : [output]) + (publicOutput.map { [$0] } ?? []) where !force && KeyFiles.exists(path) {
            throw CommandFailure("'\(path)' already exists", hint: "choose another name, or pass --force to replace it")
        }
        let password = encrypt ? try passwords.read(prompt: "New password for \(toStandardOutput ? "the key" : output): ", confirm: true) : nil
        let kdf: PasswordKDF = scrypt ? .openSSLCompatibleScrypt : .encryptedKeyDefault
        let privateBytes: [UInt8]
        let publicBytes: [UInt8]
        let fingerprint: KeyFingerprint
        let name: String
        switch type {
        case .signing(let keyType):
            let key = try SigningKey.generate(keyType)
            privateBytes = try password.map { try key.encryptedPKCS8Representation(password: $0, kdf: kdf) } ?? key.representation(as: .pkcs8)
            publicBytes = try key.verifyingKey.representation(as: .spki)
            fingerprint = key.verifyingKey.fingerprint
            name = key.algorithm.description
        case .x25519:
            let key = RecipientPrivateKey.generateX25519()
            privateBytes = try password.map { try key.encryptedPKCS8Representation(password: $0, kdf: kdf) } ?? Array((key.pemRepresentation + "\n").utf8)
            publicBytes = Array(PEMArmor.encode(key.publicKey.derRepresentation, label: "PUBLIC KEY").utf8)
            fingerprint = KeyFingerprint(subjectPublicKeyInfo: key.publicKey.derRepresentation)
            name = "X25519"
        }
        // Both files or neither: each is written in full under no name first (anything that can fail
        // fails there, before either destination changes), then both are named, the private key
        // first. To standard output, the public file is named only once the key was written out.
        let publicWriter = try publicOutput.map { path in
            let writer = try AtomicFileWriter(destination: path, overwrite: force)
            try writer.write(publicBytes)
            try writer.setPermissions(0o644)
            return writer
        }
        if toStandardOutput {
            try privateBytes.withUnsafeBytes { try Terminal.writeData($0) }
            try Terminal.flush()
        } else {
            let privateWriter = try AtomicFileWriter(destination: output, overwrite: force)
            try privateWriter.write(privateBytes)
            try privateWriter.commit()
        }
        try publicWriter?.commit()
        // The summary goes where the key does not: standard error when the key is on standard output.
        let say: (String) -> Void = toStandardOutput ? { Terminal.writeError($0 + "\n") } : { Terminal.writeLine($0) }
        say("generated \(name) key \(fingerprint.keyID)")
        say("  private key:  \(toStandardOutput ? "standard output" : output) (\(encrypt ? "encrypted " : "")PKCS#8 PEM\(toStandardOutput ? "" : ", mode 0600"))")
        if let publicOutput { say("  public key:   \(publicOutput) (SubjectPublicKeyInfo PEM)") }
        say("  fingerprint:  \(fingerprint.hex)")
        say("  read aloud:   \(fingerprint.readAloud)")
    }
}


struct KeyShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Describe a key: type, size, format found, fingerprint and key id.",
        discussion: """
            Reads any supported format, public or private. Encrypted keys ask for their password; \
            Apple's 97-byte EC data needs --apple-key-class, since it is a P-384 public key or a P-256 \
            private key.

            The fingerprint is Coffer's: SHA-256 of the key's SubjectPublicKeyInfo, the same whatever \
            file format holds the key, and what key ids and 'pin of' are made from. Keys that OpenSSH \
            knows also show the line 'ssh-keygen -lf' prints (its SHA256: fingerprint hashes the SSH \
            encoding, so it differs from Coffer's); --format ssh prints only that line.

            Examples:
              coffer key show release.pub
              coffer key show --format ssh ~/.ssh/id_ed25519.pub
              coffer key show --json app.pub
            """
    )

    @Argument(help: "The key file ('-' for standard input).")
    var file: String

    @OptionGroup(title: "Password (for encrypted keys)")
    var passwords: PasswordOptions

    @Option(help: ArgumentHelp("For Apple EC bytes: public or private.", valueName: "class"), transform: parseAppleKeyClass)
    var appleKeyClass: AppleKeyClass?

    @Flag(help: "Accept RSA keys of 1024 to 2047 bits (insecure; for old signatures only).")
    var insecureAllowLegacyRSA = false

    @Flag(help: "Print one JSON object.")
    var json = false

    @Option(help: ArgumentHelp("text, or ssh: only the line 'ssh-keygen -lf' prints for this key.", valueName: "format"))
    var format: KeyShowFormat = .text

    func validate() throws {
        if json && format == .ssh { throw ValidationError("--json and --format ssh each choose the output; give one") }
    }

    func run() throws {
        let password = PasswordOnce { try passwords.read(prompt: "Password for \(file): ") }
        let imported: ImportedKey
        do {
            imported = try KeyFiles.importKey(file, passwords: passwords, appleKeyClass: appleKeyClass, allowingLegacyRSA: insecureAllowLegacyRSA, password: password)
        } catch let failure as CommandFailure {
            // X25519 keys receive encrypted files; the signing-key reader does not know them. A wrong
            // password is final: trying it again as an X25519 key would derive (and prompt) twice.
            guard failure.exitCode != ExitStatus.checkFailed else { throw failure }
            let bytes = try KeyFile(contentsOf: file).bytes
            if let identity = try? RecipientPrivateKey(importing: bytes, password: password.get),
                case .x25519 = identity
            {
                try showRecipient(identity.publicKey, isPrivate: true)
            } else if let recipient = try? RecipientPublicKey(importing: bytes), case .x25519 = recipient {
                try showRecipient(recipient, isPrivate: false)
            } else {
                throw failure
            }
            return
        }
        let publicKey = imported.verifyingKey
        let fingerprint = publicKey.fingerprint
        let kind = imported.signingKey == nil ? "public" : "private"
        let size: Int = switch publicKey.algorithm {
        case .rsa(let bits): bits
        case .p256: 256
        case .p384: 384
        case .p521: 521
        case .ed25519: 256
        case .mldsa65: 1952 * 8
        case .mldsa87: 2592 * 8
        }
        // What ssh-keygen -lf prints, for keys OpenSSH has a form for (not ML-DSA).
        let sshLine = try? publicKey.sshKeygenFingerprintLine(comment: imported.comment)
        if format == .ssh {
            guard let sshLine else { throw CommandFailure("OpenSSH has no form for \(publicKey.algorithm) keys, so no ssh fingerprint") }
            Terminal.writeLine(sshLine)
            return
        }
        if json {
            try JSONLines.write(KeyDescription(
                type: publicKey.algorithm.description, kind: kind, bits: size, format: imported.formatDescription,
                keyID: fingerprint.keyID, fingerprint: fingerprint.hex, readAloud: fingerprint.readAloud,
                sshFingerprint: try? publicKey.sshFingerprint(), comment: imported.comment
            ))
            return
        }
        Terminal.writeLine("key:          \(publicKey.algorithm) \(kind) key")
        Terminal.writeLine("format:       \(imported.formatDescription)")
        if let comment = imported.comment { Terminal.writeLine("comment:      \(comment)") }
        Terminal.writeLine("key id:       \(fingerprint.keyID)")
        Terminal.writeLine("fingerprint:  \(fingerprint.hex) (Coffer's: SHA-256 of the SubjectPublicKeyInfo)")
        if let sshLine { Terminal.writeLine("ssh-keygen:   \(sshLine)") }
        Terminal.writeLine("read aloud:   \(fingerprint.readAloud)")
    }
}

extension KeyShow {
    func showRecipient(_ recipient: RecipientPublicKey, isPrivate: Bool) throws {
        let fingerprint = KeyFingerprint(subjectPublicKeyInfo: recipient.derRepresentation)
        if format == .ssh { throw CommandFailure("OpenSSH has no form for \(recipient.algorithmName) encryption keys, so no ssh fingerprint") }
        if json {
            try JSONLines.write(KeyDescription(
                type: recipient.algorithmName, kind: isPrivate ? "private" : "public", bits: 256, format: "X25519 (encryption recipient)",
                keyID: fingerprint.keyID, fingerprint: fingerprint.hex, readAloud: fingerprint.readAloud
            ))
            return
        }
        Terminal.writeLine("key:          \(recipient.algorithmName) \(isPrivate ? "private" : "public") key (encryption recipient)")
        Terminal.writeLine("key id:       \(fingerprint.keyID)")
        Terminal.writeLine("fingerprint:  \(fingerprint.hex)")
        Terminal.writeLine("read aloud:   \(fingerprint.readAloud)")
    }
}

/// What `key show` prints: the description, or the line ssh-keygen prints.
enum KeyShowFormat: String, ExpressibleByArgument, CaseIterable {
    case text, ssh
}

struct KeyDescription: Encodable {
    let type: String
    let kind: String
    let bits: Int
    let format: String
    let keyID: String
    let fingerprint: String
    let readAloud: String
    var sshFingerprint: String? = nil
    var comment: String? = nil
}

struct KeyConvert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a key to another format.",
        discussion: """
            Targets: pem (PKCS#8 for private keys, SubjectPublicKeyInfo for public), der (the same in \
            DER), pkcs1 (RSA), sec1 (EC private), jwk, apple (SecKeyCreateWithData bytes), ssh (an \
            OpenSSH public-key line), raw (the bare key: Ed25519 and X25519 32 bytes, an EC point or \
            scalar). --public-only converts the public half of a private key. X25519 encryption keys convert \
            to pem, der, jwk (OKP, X25519) and raw.

            A private key is written only to a file (-o, mode 0600), or to standard output with -o -. \
            With --encrypt the output is password-encrypted PKCS#8.

            Examples:
              coffer key convert release.key --to ssh --public-only
              coffer key convert app.pub --to jwk
              coffer key convert device.key --to apple -o device.bin
              coffer key convert bob.pub --to jwk
            """
    )

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case pem, der, pkcs1, sec1, jwk, apple, ssh, raw
    }

    @Argument(help: "The key file ('-' for standard input).")
    var file: String

    @Option(help: "The format to write.")
    var to: Target

    @Flag(name: .customLong("public-only"), help: "Write the public key of a private key.")
    var publicOnlyFlag = false

    /// `--public`, the spelling before the flags became one language (docs/CLI.md: `--public FILE` is
    /// where `key generate` writes the public key).
    @Flag(name: .customLong("public"), help: .hidden)
    var deprecatedPublic = false

    var publicOnly: Bool { publicOnlyFlag || deprecatedPublic }

    func validate() throws {
        Deprecation.warn("key convert --public", "--public-only", used: deprecatedPublic)
    }

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write (default: standard output for public keys).", valueName: "file"))
    var output: String?

    @Flag(help: "Encrypt the private key output (PKCS#8 PEM or DER) with a password.")
    var encrypt = false

    @OptionGroup(title: "Passwords (input key, and the new one with --encrypt)")
    var passwords: PasswordOptions

    @Option(help: ArgumentHelp("For Apple EC bytes: public or private.", valueName: "class"), transform: parseAppleKeyClass)
    var appleKeyClass: AppleKeyClass?

    @Option(help: ArgumentHelp("The comment of an OpenSSH line (default: coffer-KEYID).", valueName: "text"))
    var comment: String?

    @Flag(help: "Replace an existing output file.")
    var force = false

    func run() throws {
        let password = PasswordOnce { try passwords.read(prompt: "Password for \(file): ") }
        let imported: ImportedKey
        do {
            imported = try KeyFiles.importKey(file, passwords: passwords, appleKeyClass: appleKeyClass, password: password)
        } catch let failure as CommandFailure {
            // X25519 keys receive encrypted files; the signing-key reader does not know them. A wrong
            // password is final: trying it again as an X25519 key would derive (and prompt) twice.
            guard failure.exitCode != ExitStatus.checkFailed else { throw failure }
            let bytes = try KeyFile(contentsOf: file).bytes
            if let identity = try? RecipientPrivateKey(importing: bytes, password: password.get),
                case .x25519 = identity
            {
                try convert(identity)
            } else if let recipient = try? RecipientPublicKey(importing: bytes), case .x25519 = recipient {
                try convert(recipient)
            } else {
                throw failure
            }
            return
        }
        let isPrivateOutput = imported.signingKey != nil && !publicOnly && to != .ssh
        if isPrivateOutput && output == nil {
            throw CommandFailure(
                "refusing to print a private key to standard output by default",
                hint: "write it to a file with -o FILE (mode 0600), say -o - to print it anyway, or add --public-only"
            )
        }
        let bytes: [UInt8]
        do {
            if isPrivateOutput, let key = imported.signingKey {
                if encrypt {
                    guard to == .pem || to == .der else {
                        throw CommandFailure("--encrypt writes encrypted PKCS#8; use --to pem or --to der")
                    }
                    let password = try passwords.read(prompt: "New password: ", confirm: true)
                    bytes = try key.encryptedPKCS8Representation(password: password, encoding: to == .der ? .der : .pem)
                } else if to == .raw {
                    bytes = try key.rawRepresentation
                } else {
                    bytes = try key.representation(as: privateFormat, encoding: to == .der ? .der : .pem)
                }
            } else {
                if encrypt { throw CommandFailure("--encrypt applies to private keys; a public key needs no password") }
                bytes = to == .raw
                    ? try imported.verifyingKey.rawRepresentation
                    : try imported.verifyingKey.representation(as: publicFormat, encoding: to == .der ? .der : .pem, comment: comment)
            }
        } catch let error as CofferFormatsError {
            throw CommandFailure(error.reason)
        }
        try write(bytes, secret: isPrivateOutput)
    }

    private func write(_ bytes: [UInt8], secret: Bool) throws {
        let binary = to == .der || to == .apple || to == .raw
        let destination = output ?? "-"
        if destination == "-" && binary && Terminal.standardOutputIsTerminal {
            throw CommandFailure("refusing to write binary key data to a terminal", hint: "redirect to a file or use -o FILE")
        }
        try KeyFiles.write(bytes, to: destination, secret: secret, overwrite: force)
    }

    /// An X25519 identity: its private key in pem, der, jwk or raw, or (--public) its public key.
    private func convert(_ identity: RecipientPrivateKey) throws {
        if publicOnly { return try convert(identity.publicKey) }
        if output == nil {
            throw CommandFailure(
                "refusing to print a private key to standard output by default",
                hint: "write it to a file with -o FILE (mode 0600), say -o - to print it anyway, or add --public-only"
            )
        }
        let bytes: [UInt8]
        switch to {
        case .pem, .der:
            if encrypt {
                let password = try passwords.read(prompt: "New password: ", confirm: true)
                bytes = try identity.encryptedPKCS8Representation(password: password, encoding: to == .der ? .der : .pem)
            } else {
                bytes = to == .der ? identity.pkcs8DERRepresentation : Array((identity.pemRepresentation + "\n").utf8)
            }
        case .jwk: bytes = identity.jwkRepresentation
        case .raw: bytes = identity.rawRepresentation
        case .pkcs1, .sec1, .apple, .ssh:
            throw CommandFailure("X25519 keys have no \(to.rawValue) form", hint: "convert X25519 keys to pem, der, jwk or raw")
        }
        if encrypt && to != .pem && to != .der { throw CommandFailure("--encrypt writes encrypted PKCS#8; use --to pem or --to der") }
        try write(bytes, secret: true)
    }

    /// An X25519 public key (an encryption recipient) in pem, der, jwk or raw.
    private func convert(_ recipient: RecipientPublicKey) throws {
        if encrypt { throw CommandFailure("--encrypt applies to private keys; a public key needs no password") }
        let bytes: [UInt8]
        switch to {
        case .pem: bytes = Array((recipient.pemRepresentation + "\n").utf8)
        case .der: bytes = recipient.derRepresentation
        case .jwk: bytes = recipient.jwkRepresentation
        case .raw: bytes = recipient.rawRepresentation
        case .pkcs1, .sec1, .apple, .ssh:
            throw CommandFailure("X25519 keys have no \(to.rawValue) form", hint: "convert X25519 keys to pem, der, jwk or raw")
        }
        try write(bytes, secret: false)
    }

    private var privateFormat: KeyFormat {
        switch to {
        case .pem, .der: .pkcs8
        case .pkcs1: .pkcs1Private
        case .sec1: .sec1
        case .jwk: .jwk
        case .apple: .appleExternal
        case .ssh, .raw: .openSSH
        }
    }

    private var publicFormat: KeyFormat {
        switch to {
        case .pem, .der: .spki
        case .pkcs1: .pkcs1Public
        case .sec1: .sec1
        case .jwk: .jwk
        case .apple: .appleExternal
        case .ssh, .raw: .openSSH
        }
    }
}
