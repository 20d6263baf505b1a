import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        completion: .list(KeyAlgorithm.allCases.map(\.name) + ["x25519"] + sshKeygenTypeAliases.keys.sorted()),
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
        let publicWriter = try publicOutput.map { try KeyFiles.prepared(publicBytes, to: $0, secret: false, overwrite: force) }
        if toStandardOutput {
            try privateBytes.withUnsafeBytes { try Terminal.writeData($0) }
            try Terminal.flush()
        } else {
            try KeyFiles.prepared(privateBytes, to: output, secret: true, overwrite: force).commit()
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
