import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferPKCS11
import Foundation

/// Where `key generate` and `key list` find a token.
struct TokenKeyOptions: ParsableArguments {
    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("The token's PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var module: String?

    @Option(name: .customLong("token"), help: ArgumentHelp("The token: its label, or its pkcs11: URI ('pkcs11:token=release;serial=…'), which must match exactly one token.", valueName: "label|uri"))
    var tokenLabelOrURI: String?

    @Option(name: .customLong("label"), help: ArgumentHelp("The new key's label on the token.", valueName: "name"))
    var label: String?

    var isGiven: Bool { module != nil || tokenLabelOrURI != nil || label != nil }
}

extension KeyGenerate {
    /// Generates the key pair on the token and prints its URI, key id, fingerprint and public key.
    func generateOnToken() throws {
        guard let tokenLabelOrURI = token.tokenLabelOrURI, let label = token.label else { return }
        let tokenType: PKCS11KeyType
        switch type {
        case .signing(.p256): tokenType = .p256
        case .signing(.p384): tokenType = .p384
        case .signing(.rsa2048): tokenType = .rsa(bits: 2048)
        case .signing(.rsa3072): tokenType = .rsa(bits: 3072)
        case .signing(.rsa4096): tokenType = .rsa(bits: 4096)
        case .signing(.ed25519): tokenType = .ed25519
        default: throw CommandFailure("keys made on a token are p256, p384, ed25519, rsa2048, rsa3072 or rsa4096", hint: "pass -t p256")
        }
        if let publicOutput, !force, KeyFiles.exists(publicOutput) {
            throw CommandFailure("'\(publicOutput)' already exists", hint: "choose another name, or pass --force to replace it")
        }
        let tokenURI = try HardwareKeys.tokenURI(tokenLabelOrURI)
        let module = try HardwareKeys.module(token.module, uri: tokenURI)
        let session = try HardwareKeys.session(tokenURI, in: module, passwords: passwords)
        let key = try HardwareKeys.failing { () throws(PKCS11Error) in
            guard try session.privateKeys(label: label).isEmpty else {
                throw PKCS11Error(.unsupported, "token '\(session.tokenLabel)' already holds a key labelled '\(label)'; choose another --label")
            }
            return try session.generateKeyPair(tokenType, label: label)
        }
        let publicPEM = key.publicKey.pemRepresentation + "\n"
        if let publicOutput { try KeyFiles.write(Array(publicPEM.utf8), to: publicOutput, secret: false, overwrite: force) }
        let fingerprint = key.publicKey.fingerprint
        Terminal.writeLine("generated \(key.type) key \(fingerprint.keyID) on token '\(session.tokenLabel)' (serial \(session.slot.token?.serialNumber ?? ""))")
        Terminal.writeLine("  uri:          \(key.uri)")
        Terminal.writeLine("  private key:  on the token, sensitive and not extractable")
        if let publicOutput { Terminal.writeLine("  public key:   \(publicOutput) (SubjectPublicKeyInfo PEM)") }
        Terminal.writeLine("  fingerprint:  \(fingerprint.hex)")
        Terminal.writeLine("  read aloud:   \(fingerprint.readAloud)")
        if publicOutput == nil { Terminal.writeOut(publicPEM) }
    }
}

struct KeyList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the tokens of a PKCS #11 module and the private keys on them, with their pkcs11: URIs.",
        discussion: """
            Every slot with a token is listed; with --token (a label, or a token's pkcs11: URI), that \
            token's private keys too (after logging in: the PIN comes from --password-file, \
            --password-env, the URI's pin-source or a prompt). --token must match exactly one token: \
            two tokens of one label are told apart by their serials (token=release;serial=…), and \
            no PIN is sent until one is chosen. A key's URI names its token by label, manufacturer, \
            model and serial, and is what -k takes to sign with it.

            Examples:
              coffer key list --pkcs11-module /usr/lib/softhsm/libsofthsm2.so
              export COFFER_PKCS11_MODULE=/usr/lib/softhsm/libsofthsm2.so
              coffer key list --token release --password-file pin.txt --json
              coffer key list --token 'pkcs11:token=release;serial=d9d99d8799fe0a55' \\
                  --password-file pin.txt
            """
    )

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("The PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var module: String?

    @Option(name: .customLong("token"), help: ArgumentHelp("Also list this token's private keys: its label, or its pkcs11: URI.", valueName: "label|uri"))
    var tokenLabelOrURI: String?

    @OptionGroup(title: "PIN (with --token)")
    var passwords: PasswordOptions

    @Flag(help: "One JSON object: tokens (label, manufacturer, model, serial, slot, uri) and keys (label, id, type, keyID, uri).")
    var json = false

    func run() throws {
        let tokenURI = try tokenLabelOrURI.map(HardwareKeys.tokenURI)
        let module = try HardwareKeys.module(module, uri: tokenURI ?? PKCS11URI())
        let slots = try HardwareKeys.failing { () throws(PKCS11Error) in try module.slots() }
        var keys: [TokenKeyReport] = []
        var listedToken: String?
        if let tokenURI {
            let session = try HardwareKeys.session(tokenURI, in: module, passwords: passwords)
            listedToken = "'\(session.tokenLabel)' (serial \(session.slot.token?.serialNumber ?? ""))"
            let found = try HardwareKeys.failing { () throws(PKCS11Error) in try session.privateKeys() }
            keys = found.map {
                TokenKeyReport(label: $0.label, id: Hex.encode($0.id), type: $0.type.description, keyID: $0.publicKey.fingerprint.keyID, uri: $0.uri.description)
            }
        }
        // Uninitialised tokens (SoftHSM's free slot) have no label to name them by.
        let tokens = slots.compactMap { slot in
            slot.token.flatMap { $0.isInitialized ? $0 : nil }.map { TokenReport(slot: slot.identifier, label: $0.label, manufacturer: $0.manufacturer, model: $0.model, serial: $0.serialNumber, uri: PKCS11URI(identifying: $0).description) }
        }
        if json { return try JSONLines.write(TokenListReport(tokens: tokens, keys: tokenLabelOrURI == nil ? nil : keys)) }
        for token in tokens {
            Terminal.writeLine("token '\(token.label)'  \(token.manufacturer) \(token.model), serial \(token.serial), slot \(token.slot)  \(token.uri)")
        }
        if tokens.isEmpty { Terminal.writeLine("no token in '\(module.path)'") }
        for key in keys {
            Terminal.writeLine("\(key.type) key \(key.keyID)  \(key.uri)")
        }
        if let listedToken, keys.isEmpty { Terminal.writeLine("no private key on token \(listedToken)") }
    }
}

/// What `key list --json` prints.
struct TokenListReport: Encodable {
    let tokens: [TokenReport]
    let keys: [TokenKeyReport]?
}

/// A token in `key list --json`.
struct TokenReport: Encodable {
    let slot: UInt
    let label: String
    let manufacturer: String
    let model: String
    let serial: String
    /// What `--token` takes to name this token alone (label, manufacturer, model, serial).
    let uri: String
}

/// A key in `key list --json`.
struct TokenKeyReport: Encodable {
    let label: String
    let id: String
    let type: String
    let keyID: String
    let uri: String
}
