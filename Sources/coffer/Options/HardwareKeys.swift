import ArgumentParser
import CofferCore
import CofferCrypto
import CofferPKCS11
import Foundation

/// Keys on PKCS #11 tokens wherever a private key file is taken: `-k pkcs11:token=…;object=…`, and
/// tokens wherever `--token` is taken (a label or a token's `pkcs11:` URI). The module comes from
/// `--pkcs11-module`, `$COFFER_PKCS11_MODULE`, or else the URI's `module-path`; the PIN from the URI's
/// `pin-source=file:…` or the password options (a prompt, `--password-file`, `--password-env`), never
/// from the command line, and only once the URI has selected exactly one token.
enum HardwareKeys {
    static let moduleVariable = "COFFER_PKCS11_MODULE"

    static func isURI(_ text: String) -> Bool { text.lowercased().hasPrefix("pkcs11:") }

    /// The module to load, in that order: the option, the environment, the URI's module-path; checked
    /// against the URI's module-path and module-name before it is loaded. The module given (the option
    /// or the environment) is the only one a URI can have loaded: a URI naming another is refused
    /// before anything is loaded, since URIs also arrive as data (stored references, pasted lines).
    static func module(_ option: String?, uri: PKCS11URI = PKCS11URI()) throws -> PKCS11Module {
        guard let path = option ?? ProcessInfo.processInfo.environment[moduleVariable] ?? uri.modulePath else {
            throw CommandFailure(
                "a pkcs11: key needs the token's PKCS #11 module",
                hint: "pass --pkcs11-module PATH (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so; OpenSC: /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so) or set \(moduleVariable)"
            )
        }
        return try failing { () throws(PKCS11Error) in try PKCS11Module.load(path, for: uri) }
    }

    /// What `--token` names: a token's `pkcs11:` URI, or a label.
    static func tokenURI(_ value: String) throws -> PKCS11URI {
        guard isURI(value) else { return PKCS11URI(token: value) }
        let uri = try failing { () throws(PKCS11Error) in try PKCS11URI(value) }
        guard !uri.namesObject else {
            throw CommandFailure("--token names a token, and '\(value)' names an object too (object=, id= or type=)", hint: "leave the key's attributes out of --token")
        }
        return uri
    }

    /// The token `uri` selects (exactly one) and a session with it, logged in with its PIN.
    static func session(_ uri: PKCS11URI, in module: PKCS11Module, passwords: PasswordOptions) throws -> PKCS11Session {
        let slot = try failing { () throws(PKCS11Error) in try module.slot(matching: uri) }
        var pin = try pin(for: slot, uri: uri, passwords: passwords)
        defer { SecretBytes.wipe(&pin) }
        return try failing { () throws(PKCS11Error) in try module.openSession(slot: slot, pin: pin) }
    }

    /// The PIN of the token in `slot`: from the URI's pin-source file (warning when other users may
    /// read it), or as a password is read.
    static func pin(for slot: PKCS11Slot, uri: PKCS11URI, passwords: PasswordOptions) throws -> [UInt8] {
        guard var file = try failing({ () throws(PKCS11Error) in try uri.pinFile() }) else {
            let token = slot.token.map { "'\($0.label)' (serial \($0.serialNumber))" } ?? "in slot \(slot.identifier)"
            return try passwords.read(prompt: "PIN for token \(token): ")
        }
        defer { file.wipe() }
        guard passwords.passwordFile == nil && passwords.passwordEnvironmentVariable == nil else {
            throw CommandFailure("the URI's pin-source and --password-file/--password-env both give the PIN", hint: "pass one of them")
        }
        if file.isExposedToOtherUsers {
            let mode = String(file.permissions ?? 0, radix: 8)
            Terminal.warn("the PIN file '\(file.path)' can be read or changed by other users (mode \(mode)); run: chmod 600 '\(file.path)'")
        }
        return file.pin
    }

    /// The private key a `pkcs11:` URI names, in a logged-in session: the token is selected first (two
    /// that match are refused), then the PIN is read and sent to that token alone.
    static func privateKey(_ text: String, module option: String?, passwords: PasswordOptions) throws -> PKCS11PrivateKey {
        let uri = try failing { () throws(PKCS11Error) in try PKCS11URI(text) }
        guard uri.type == nil || uri.type == "private" else {
            throw CommandFailure("'\(text)' names a \(uri.type ?? "") object; signing needs type=private")
        }
        guard uri.object != nil || uri.id != nil else { throw CommandFailure("'\(text)' names no key", hint: "add object=LABEL or id=%… to the URI ('coffer key list --token …' shows them)") }
        let module = try module(option, uri: uri)
        let slot = try failing { () throws(PKCS11Error) in try module.slot(matching: uri) }
        var pin = try pin(for: slot, uri: uri, passwords: passwords)
        defer { SecretBytes.wipe(&pin) }
        return try failing { () throws(PKCS11Error) in try module.privateKey(uri, in: slot, pin: pin) }
    }

    /// Runs `body`, turning a token's error into the command's as ``ErrorTable`` reports it (a wrong PIN
    /// is a failed check, exit 1).
    static func failing<Result>(_ body: () throws(PKCS11Error) -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw CommandFailure(reporting: error)
        }
    }
}

extension KeyFiles {
    /// What signs for `-k`: a private key file, or a key on a token (`pkcs11:` URI), as one `SigningKey`.
    static func signer(_ path: String, passwords: PasswordOptions, pkcs11Module: String?) throws -> SigningKey {
        if HardwareKeys.isURI(path) { return try SigningKey(HardwareKeys.privateKey(path, module: pkcs11Module, passwords: passwords)) }
        let imported = try importKey(path, passwords: passwords)
        guard let signingKey = imported.signingKey else {
            throw CommandFailure(
                "'\(path)' holds a public key (\(imported.formatDescription)); signing needs the private key",
                hint: "pass the private key file with -k"
            )
        }
        return signingKey
    }
}
