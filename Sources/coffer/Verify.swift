import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a file's signature with a public key.",
        discussion: """
            Exit status: 0 the signature is valid; 1 it is not (or it was made by another key: both key \
            ids are printed); 2 a usage or input error (unreadable or malformed key or signature).

            A Coffer signature's comment is printed only after the signature has been verified. With \
            --raw, SIG holds bare signature bytes as OpenSSL writes them ('openssl dgst -sha512 -sign', \
            or 'openssl pkeyutl -sign -rawin' for Ed25519).

            Examples:
              coffer verify -p release.pub release.tar.gz.sig release.tar.gz
              coffer verify -p rsa.pub --raw data.bin.sig data.bin
            """
    )

    @Option(name: [.customShort("p"), .customLong("public-key")], help: ArgumentHelp("The public key (a private key works too).", valueName: "file"))
    var publicKey: String

    @Argument(help: "The signature file.")
    var signature: String

    @Argument(help: "The signed file ('-' for standard input; default: SIG without its .sig ending).")
    var file: String?

    @OptionGroup(title: "Signature")
    var flags: SignatureFlags

    @OptionGroup(title: "Password (if the key given is an encrypted private key)")
    var passwords: PasswordOptions

    @Flag(help: "Accept RSA keys of 1024 to 2047 bits. Insecure: only to check signatures made long ago.")
    var insecureAllowLegacyRSA = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func run() throws {
        let key = try KeyFiles.importKey(publicKey, passwords: passwords, allowingLegacyRSA: insecureAllowLegacyRSA).verifyingKey
        guard let target = file ?? (signature.hasSuffix(".sig") ? String(signature.dropLast(4)) : nil) else {
            throw CommandFailure("name the signed file after the signature", hint: "coffer verify -p KEY SIG FILE")
        }
        let keyID = key.fingerprint.keyID
        let shown = target == "-" ? "standard input" : "'\(target)'"

        if flags.raw {
            let signatureBytes = try KeyFile(contentsOf: signature).bytes
            let valid: Bool
            if key.algorithm.signsMessagesWhole {
                valid = key.isValidSignature(signatureBytes, for: try readWholeMessage(target, algorithm: key.algorithm))
            } else {
                let reader = try FileReader.open(target)
                let progress = ProgressBar(total: reader.size, label: target)
                valid = try key.isValidSignature(signatureBytes, forDigestOfFileAtPath: target, options: flags.options) { progress.update($0) }
                progress.finish()
            }
            guard valid else {
                throw CommandFailure("the signature does not match \(shown) with \(key.algorithm) key \(keyID)", exitCode: ExitStatus.checkFailed)
            }
            if !quiet { Terminal.writeLine("signature OK: \(target) signed by \(key.algorithm) key \(keyID)") }
            return
        }

        let text = String(decoding: try KeyFile(contentsOf: signature).bytes, as: UTF8.self)
        let parsed: SignatureFile
        do {
            parsed = try SignatureFile(parsing: text)
        } catch {
            throw CommandFailure(
                "\(signature): \(error.reason)",
                hint: error.code == .malformedSignature && !text.contains("COFFER SIGNATURE") ? "for a bare OpenSSL signature, add --raw" : nil
            )
        }
        let reader = try FileReader.open(target)
        let progress = ProgressBar(total: reader.size, label: target)
        let outcome = try parsed.verify(fileAtPath: target, with: key) { progress.update($0) }
        progress.finish()
        switch outcome {
        case .valid(let comment):
            if !quiet {
                Terminal.writeLine("signature OK: \(target) signed by \(parsed.algorithm) key \(keyID)")
                Terminal.writeLine("comment: \(comment)")
            }
        case .invalid:
            throw CommandFailure("the signature does not match \(shown) (the file or the signature was changed)", exitCode: ExitStatus.checkFailed)
        case .wrongKey(let signatureKeyID, let givenKeyID):
            throw CommandFailure(
                "the signature was made by key \(signatureKeyID), not by key \(givenKeyID) ('\(publicKey)')",
                hint: "find the public key with id \(signatureKeyID)",
                exitCode: ExitStatus.checkFailed
            )
        case .wrongAlgorithm(let algorithm, let keyAlgorithm):
            throw CommandFailure(
                "the signature is \(algorithm), which a \(keyAlgorithm) key cannot have made",
                exitCode: ExitStatus.checkFailed
            )
        }
    }
}
