import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a generic password, an internet password, a key or a certificate.",
        discussion: """
            The secret comes from a prompt (asked twice) or --stdin. A private key file (PEM, DER, \
            JWK...) is stored under --tag with -k/--key: its class, type, size and public-key fingerprint \
            become the item's attributes, as for a signing key an app stores with Coffer's library.

            Examples:
              coffer keychain add --service com.example.app --account ada@example.com
              coffer keychain add --server db.example --protocol postgres --account app
              coffer keychain add --tag com.example.release-signing -k release.key
              coffer keychain add --certificate ca.pem --label "Example CA"
            """
    )

    @OptionGroup var options: KeychainOptions
    @OptionGroup var name: ItemName

    @Option(help: "A name for people.") var label: String?
    @Option(help: "A note for people.") var comment: String?

    @Option(help: ArgumentHelp("When the secret is readable: when-unlocked, after-first-unlock, or either with -this-device-only (never exported).", valueName: "class"))
    var accessibility = "when-unlocked"

    @Flag(name: .customLong("stdin"), help: "Read the secret from standard input instead of a prompt.")
    var secretFromStandardInputFlag = false

    /// `--secret-stdin`, the spelling before the flags became one language (docs/CLI.md).
    @Flag(name: .customLong("secret-stdin"), help: .hidden)
    var deprecatedSecretStdin = false

    var secretFromStandardInput: Bool { secretFromStandardInputFlag || deprecatedSecretStdin }

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Store this private key file under --tag (a pkcs11: URI stores a reference to a key on a token).", valueName: "file"))
    var keyPath: String?

    /// `--key-file`, the spelling before the flags became one language (docs/CLI.md).
    @Option(name: .customLong("key-file"), help: .hidden)
    var deprecatedKeyFile: String?

    var keyFile: String? { keyPath ?? deprecatedKeyFile }

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("For -k pkcs11:…: the token's PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    func validate() throws {
        Deprecation.warn("--secret-stdin", "--stdin", used: deprecatedSecretStdin)
        Deprecation.warn("--key-file", "-k/--key", used: deprecatedKeyFile != nil)
        if keyFile != nil && (name.tag == nil || secretFromStandardInput || name.keyClass != nil || name.keyType != nil) {
            throw ValidationError("-k/--key goes with --tag alone: the key's class and type come from the file")
        }
    }

    func run() throws {
        let accessibility = try parseAccessibility(accessibility)
        if let keyFile, let tag = name.tag {
            try addKeyFile(keyFile, tag: tag, accessibility: accessibility)
            return
        }
        if let identity = try name.certificateIdentity() {
            try addCertificate(identity, accessibility: accessibility)
            return
        }
        var item = try name.newItem(accessibility: accessibility)
        item.label = label
        item.comment = comment
        let keychain = try options.openUnlocked()
        var secret = try readItemSecret(fromStandardInput: secretFromStandardInput)
        defer { SecretBytes.wipe(&secret) }
        do {
            try keychain.add(item, secret: secret)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("an item for \(name) already exists", hint: "change it with 'coffer keychain update'")
        }
    }

    private func addCertificate(_ identity: CertificateIdentity, accessibility: Accessibility) throws {
        guard !secretFromStandardInput else { throw ValidationError("a certificate's data is its file; --stdin does not apply") }
        var item = KeychainItem.certificate(issuer: identity.issuer, serialNumber: identity.serialNumber, accessibility: accessibility)
        item.label = label
        item.comment = comment
        let keychain = try options.openUnlocked()
        do {
            try keychain.add(item, secret: identity.der)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("this certificate (serial \(Hex.encode(identity.serialNumber))) is already in the keychain")
        }
        Terminal.writeError("stored certificate with serial \(Hex.encode(identity.serialNumber))\n")
    }

    private func addKeyFile(_ path: String, tag: String, accessibility: Accessibility) throws {
        if HardwareKeys.isURI(path) { return try addTokenKeyReference(path, tag: tag, accessibility: accessibility) }
        let bytes = try KeyFile(contentsOf: path).bytes
        let key: SigningKey
        do {
            let imported = try ImportedKey(importing: bytes, password: { try options.password.read(prompt: "Password for \(path): ") })
            guard let signingKey = imported.signingKey else {
                throw CommandFailure("'\(path)' holds a public key; the keychain keeps private keys under a tag")
            }
            key = signingKey
        } catch let error as CofferFormatsError {
            throw CommandFailure("\(path): \(error.reason)")
        }
        let keychain = try options.openUnlocked()
        do {
            try keychain.add(key, tag: tag, label: label, accessibility: accessibility)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("\(Article.indefinite("\(key.algorithm)")) private key with tag '\(tag)' already exists", hint: "delete it first with 'coffer keychain delete --tag \(tag)'")
        }
        Terminal.note("stored \(key.algorithm) key \(key.verifyingKey.fingerprint.keyID) under tag '\(tag)'")
    }

    /// A key on a token: its public key is read from the token (no PIN: public objects are readable),
    /// and the keychain keeps its pkcs11: URI under the tag — never key material.
    private func addTokenKeyReference(_ text: String, tag: String, accessibility: Accessibility) throws {
        let uri = try HardwareKeys.failing { () throws(PKCS11Error) in try PKCS11URI(text) }
        let module = try HardwareKeys.module(pkcs11Module, uri: uri)
        let found = try HardwareKeys.failing { () throws(PKCS11Error) in try module.publicKey(uri) }
        let publicKey = found.verifyingKey
        // The reference names the key exactly (its token's serial, its id), and keeps where the module is.
        var exact = found.uri
        (exact.modulePath, exact.moduleName, exact.pinSource) = (uri.modulePath, uri.moduleName, uri.pinSource)
        let keychain = try options.openUnlocked()
        do {
            try keychain.addTokenKeyReference(exact.description, publicKey: publicKey, tag: tag, label: label, accessibility: accessibility)
        } catch {
            guard error.code == KeychainError.Code.duplicateItem else { throw error }
            throw CommandFailure("\(Article.indefinite("\(publicKey.algorithm)")) private key with tag '\(tag)' already exists", hint: "delete it first with 'coffer keychain delete --tag \(tag)'")
        }
        Terminal.note("stored a reference to \(publicKey.algorithm) key \(publicKey.fingerprint.keyID) on token '\(exact.token ?? "")' (serial \(exact.serial ?? "")) under tag '\(tag)'")
    }
}
