import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
