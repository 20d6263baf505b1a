import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
