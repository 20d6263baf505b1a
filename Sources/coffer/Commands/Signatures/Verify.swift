import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import Foundation

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

    @Flag(help: "One JSON object: file, ok, keyID, algorithm, scheme, comment, reason (also when the check fails, exit 1).")
    var json = false

    func run() throws {
        do {
            try check()
        } catch let failure as CommandFailure where json && failure.exitCode == ExitStatus.checkFailed {
            try JSONLines.write(VerifyReport(file: file ?? signature, ok: false, reason: failure.message))
            throw failure
        }
    }

    /// Says so on success, as text or JSON.
    private func succeeded(_ target: String, algorithm: String, keyID: String, scheme: String? = nil, comment: String? = nil) throws {
        if json {
            try JSONLines.write(VerifyReport(file: target, ok: true, keyID: keyID, algorithm: algorithm, scheme: scheme, comment: comment))
        } else if !quiet {
            Terminal.writeLine("signature OK: \(target) signed by \(algorithm) key \(keyID)\(scheme.map { " (\($0))" } ?? "")")
            if let comment { Terminal.writeLine("comment: \(comment)") }
        }
    }

    private func check() throws {
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
                let verified = try verifyRawDigest(signatureBytes, of: target, with: key)
                guard let hash = verified else {
                    throw CommandFailure(
                        "the signature does not match \(shown) with \(key.algorithm) key \(keyID) (\(rawCandidates(for: key).map { schemeName(key, hash: $0) }.joined(separator: " or ")))",
                        hint: try rawFailureHint(signatureBytes, of: target, with: key),
                        exitCode: ExitStatus.checkFailed
                    )
                }
                try succeeded(target, algorithm: key.algorithm.description, keyID: keyID, scheme: schemeName(key, hash: hash))
                return
            }
            guard valid else {
                throw CommandFailure("the signature does not match \(shown) with \(key.algorithm) key \(keyID)", exitCode: ExitStatus.checkFailed)
            }
            try succeeded(target, algorithm: key.algorithm.description, keyID: keyID)
            return
        }

        let text = String(decoding: try KeyFile(contentsOf: signature).bytes, as: UTF8.self)
        let parsed: SignatureFile
        do {
            parsed = try SignatureFile(parsing: text)
        } catch {
            throw CommandFailure("\(signature): \(error.reason)", hint: error.code == .malformedSignature ? Self.hint(forSignatureText: text) : nil)
        }
        let reader = try FileReader.open(target)
        let progress = ProgressBar(total: reader.size, label: target)
        let outcome = try parsed.verify(fileAtPath: target, with: key) { progress.update($0) }
        progress.finish()
        switch outcome {
        case .valid(let comment):
            try succeeded(target, algorithm: "\(parsed.algorithm)", keyID: keyID, comment: comment)
            // `coffer sign` records the file's name; a signature checked against a file of another name
            // is valid for these bytes, but may be the signature of another release.
            if let signedName = Self.signedFileName(in: comment), target != "-", signedName != (target as NSString).lastPathComponent {
                Terminal.warn("the signature was made for a file named '\(signedName)', and you verified '\(target)': the bytes are the ones signed; check that it is the release you meant")
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
                "the signature is \(algorithm), which \(Article.indefinite("\(keyAlgorithm)")) key cannot have made",
                exitCode: ExitStatus.checkFailed
            )
        }
    }
}

extension Verify {
    /// The hashes a bare signature may have been made over, the asked (or default) one first.
    private var hashesToTry: [DigestAlgorithm] { [flags.hash] + [DigestAlgorithm.sha256, .sha384, .sha512].filter { $0 != flags.hash } }

    /// The hashes a bare signature by `key` is checked with, in order: the one named with --hash; else
    /// for RSA PKCS#1 v1.5 every SHA-2 hash (its DigestInfo names one), and otherwise the hash OpenSSL
    /// pairs with the key, then SHA-512 (what `coffer sign --raw` hashes with).
    func rawCandidates(for key: VerifyingKey) -> [DigestAlgorithm] {
        guard !flags.hashWasChosen else { return [flags.hash] }
        if case .rsa = key.algorithm, flags.rsaPadding == .pkcs1v15 { return hashesToTry }
        let paired = SignatureFlags.opensslHash(for: key.algorithm)
        return paired == .sha512 ? [.sha512] : [paired, .sha512]
    }

    /// Verifies a bare RSA or ECDSA signature over the file's digest; the hash it verified with, or nil.
    /// An RSA PKCS#1 v1.5 signature names its hash in its DigestInfo, so whichever SHA-2 hash verifies is
    /// the one the signer chose (`openssl dgst -sign` hashes with SHA-256 unless told otherwise); for
    /// ECDSA and PSS only the asked hash counts.
    func verifyRawDigest(_ signature: [UInt8], of target: String, with key: VerifyingKey) throws -> DigestAlgorithm? {
        for hash in rawCandidates(for: key) {
            let reader = try FileReader.open(target)
            let progress = ProgressBar(total: reader.size, label: target)
            var options = flags.options
            options.hash = hash
            let valid = try key.isValidSignature(signature, forDigestOfFileAtPath: target, options: options) { progress.update($0) }
            progress.finish()
            if valid { return hash }
        }
        return nil
    }

    /// What would have verified, said as the flag that asks for it: another hash (ECDSA, or RSA with
    /// --hash named), the other RSA padding, or OpenSSL's default PSS salt, which cannot be checked.
    func rawFailureHint(_ signature: [UInt8], of target: String, with key: VerifyingKey) throws -> String? {
        var tries: [(SignatureOptions, String)] = []
        for hash in hashesToTry.dropFirst() {
            var options = flags.options
            options.hash = hash
            tries.append((options, "it verifies with --hash \(hash.rawValue): the signer hashed with \(hash.standardName)"))
        }
        if case .rsa = key.algorithm {
            for hash in hashesToTry {
                var options = flags.options
                options.hash = hash
                options.rsaPadding = flags.rsaPadding == .pss ? .pkcs1v15 : .pss
                let flag = flags.rsaPadding == .pss ? "--pkcs1" : "--pss"
                tries.append((options, "it verifies with \(flag)\(hash == flags.hash ? "" : " --hash \(hash.rawValue)"): it is a \(options.rsaPadding == .pss ? "PSS" : "PKCS#1 v1.5") signature"))
            }
        }
        for (options, hint) in tries where try key.isValidSignature(signature, forDigestOfFileAtPath: target, options: options) {
            return hint
        }
        if case .rsa = key.algorithm, flags.rsaPadding == .pss {
            return "a PSS signature from 'openssl dgst -sigopt rsa_padding_mode:pss' has the longest salt unless told otherwise, which Coffer (swift-crypto) cannot check; sign with -sigopt rsa_pss_saltlen:digest"
        }
        return nil
    }

    func schemeName(_ key: VerifyingKey, hash: DigestAlgorithm) -> String {
        switch key.algorithm {
        case .rsa: "\(flags.rsaPadding == .pss ? "PSS" : "PKCS#1 v1.5"), \(hash.standardName)"
        default: hash.standardName
        }
    }
}

extension Verify {
    /// The file name a `coffer sign` comment records (`file:NAME signed:TIME`), if it records one.
    static func signedFileName(in comment: String) -> String? {
        guard comment.hasPrefix("file:") else { return nil }
        var name = Substring(comment.dropFirst(5))
        if let range = name.range(of: " signed:", options: .backwards) { name = name[..<range.lowerBound] }
        return name.isEmpty ? nil : String(name)
    }
}

/// What `verify --json` prints.
struct VerifyReport: Encodable {
    let file: String
    let ok: Bool
    var keyID: String?
    var algorithm: String?
    var scheme: String?
    var comment: String?
    var reason: String?
}

extension Verify {
    /// What a signature file that is not Coffer's probably is, and what checks it.
    static func hint(forSignatureText text: String) -> String? {
        if text.contains("-----BEGIN SSH SIGNATURE-----") {
            return "this is an SSH signature (ssh-keygen -Y sign), which Coffer does not verify; "
                + "'ssh-keygen -Y verify -f allowed_signers -I IDENTITY -n NAMESPACE -s FILE.sig < FILE' checks it, "
                + "and 'coffer sign -k KEY' makes a signature coffer verify checks (the same OpenSSH key works)"
        }
        if text.contains("-----BEGIN PGP SIGNATURE-----") {
            return "this is an OpenPGP signature, which Coffer does not verify; 'gpg --verify FILE.sig FILE' checks it"
        }
        if text.contains("untrusted comment:") {
            return "this is a minisign or signify signature, which Coffer does not verify; 'minisign -Vm FILE -p KEY.pub' checks it"
        }
        return text.contains("COFFER SIGNATURE") ? nil : "for a bare OpenSSL signature, add --raw"
    }
}
