import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Sign: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign a file with a private key.",
        discussion: """
            By default writes a Coffer signature file (docs/FORMAT-SIGNATURE.md): the file is hashed in \
            a stream (SHA-512), and the digest, the key id and a signed comment (the file name and the \
            time, or --comment) are signed. The signature is checked with the public key before it is \
            written, to FILE.sig unless -o says otherwise.

            --raw writes the bare signature instead, byte for byte what OpenSSL writes: for RSA (PKCS#1 \
            v1.5) and ECDSA (DER) the same as 'openssl dgst -sha512 -sign KEY FILE'; for Ed25519 the same \
            as 'openssl pkeyutl -sign -rawin -inkey KEY -in FILE' (which signs the whole file, so it must \
            fit in memory: 256 MiB at most).

            Examples:
              coffer sign -k release.key release.tar.gz
              coffer sign -k release.key release.tar.gz --comment "v1.2.0"
              coffer sign -k 'pkcs11:token=release;object=signing' release.tar.gz
              coffer sign -k rsa.pem --raw data.bin -o data.bin.sig
            """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The private key: a file, or a key on a token as a pkcs11: URI.", valueName: "file|uri"))
    var key: String

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("The token's PKCS #11 module, for a pkcs11: key (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    @Argument(help: "The file to sign ('-' for standard input).")
    var file: String = "-"

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the signature (default: FILE.sig; '-' for standard output).", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("The signed comment (default: the file name and the UTC time).", valueName: "text"))
    var comment: String?

    @OptionGroup(title: "Signature")
    var flags: SignatureFlags

    @OptionGroup(title: "Password (for an encrypted key)")
    var passwords: PasswordOptions

    @Flag(help: "Replace an existing signature file.")
    var force = false

    func validate() throws {
        if flags.raw && comment != nil { throw ValidationError("--comment needs a Coffer signature file; raw signatures carry no comment") }
    }

    func run() throws {
        let signingKey = try KeyFiles.signer(key, passwords: passwords, pkcs11Module: pkcs11Module)
        let destination = output ?? (file == "-" ? "-" : file + ".sig")
        if destination != "-" && !force && KeyFiles.exists(destination) {
            throw CommandFailure("'\(destination)' already exists", hint: "choose another name with -o, or pass --force to replace it")
        }
        let reader = try FileReader.open(file)
        let progress = ProgressBar(total: reader.size, label: file)
        defer { progress.finish() }

        let bytes: [UInt8]
        if flags.raw {
            let publicKey = signingKey.verifyingKey
            if signingKey.algorithm.signsMessagesWhole {
                let message = try readWholeMessage(file, algorithm: signingKey.algorithm)
                try refuseLabelled(message)
                let signature = try signingKey.signature(for: message, options: SignatureOptions())
                guard publicKey.isValidSignature(signature, for: message) else { throw selfCheckFailure }
                bytes = signature
            } else {
                // The file's first bytes are kept as it is hashed: a file that begins with one of
                // Coffer's signing labels is refused before anything is signed.
                var start: [UInt8] = []
                var digester = Digester(flags.hash)
                var done: Int64 = 0
                _ = try reader.forEachChunk { chunk in
                    if start.count < SigningLabel.maximumLength { start += chunk.prefix(SigningLabel.maximumLength - start.count) }
                    digester.update(chunk)
                    done += Int64(chunk.count)
                    progress.update(done)
                }
                try refuseLabelled(start)
                let digest = digester.finalize()
                let signature = try signingKey.signature(for: digest, options: flags.options)
                guard publicKey.isValidSignature(signature, for: digest, options: flags.options) else { throw selfCheckFailure }
                bytes = signature
            }
            if destination == "-" && Terminal.standardOutputIsTerminal {
                throw CommandFailure("refusing to write a binary signature to a terminal", hint: "use -o FILE or redirect")
            }
        } else {
            let text = comment ?? defaultComment
            let signature = try SignatureFile.sign(
                fileAtPath: file, with: signingKey, comment: text, hash: flags.hash, rsaPadding: flags.rsaPadding
            ) { progress.update($0) }
            bytes = Array(signature.armored.utf8)
        }
        progress.finish()
        try KeyFiles.write(bytes, to: destination, secret: false, overwrite: force)
        if destination != "-" {
            Terminal.writeError("signed \(file == "-" ? "standard input" : file) with \(signingKey.algorithm) key \(signingKey.verifyingKey.fingerprint.keyID) -> \(destination)\n")
        }
    }

    /// Refuses to sign raw bytes that begin with one of Coffer's signing labels: the signature could
    /// pass for a keychain export's or a signature file's.
    private func refuseLabelled(_ start: [UInt8]) throws {
        guard let label = SigningLabel.label(beginning: start) else { return }
        throw CommandFailure(
            "refusing to sign '\(file == "-" ? "standard input" : file)' raw: it begins with '\(label)', the label of Coffer's own signatures, and a raw signature of it could pass for one; nothing was written",
            hint: "sign it as a Coffer signature file (drop --raw), which signs the file's digest under its own label"
        )
    }

    private var selfCheckFailure: CommandFailure {
        CommandFailure("the new signature did not verify with the key's own public half; nothing was written")
    }

    private var defaultComment: String {
        let name = file == "-" ? "standard input" : String(file.split(separator: "/").last ?? Substring(file))
        return "file:\(name) signed:\(Date.now.formatted(.iso8601))"
    }
}
