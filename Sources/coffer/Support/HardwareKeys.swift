import ArgumentParser
import CofferCore
import CofferCrypto
import CofferPKCS11
import Foundation

/// Keys on PKCS #11 tokens wherever a private key file is taken: `-k pkcs11:token=…;object=…`.
/// The module comes from `--pkcs11-module`, the URI's `module-path`, or `$COFFER_PKCS11_MODULE`; the
/// PIN from the password options (a prompt, `--password-file`, `--password-env`) or the URI's
/// `pin-source=file:…`, never from the command line.
enum HardwareKeys {
    static let moduleVariable = "COFFER_PKCS11_MODULE"

    static func isURI(_ text: String) -> Bool { text.lowercased().hasPrefix("pkcs11:") }

    /// The module to load, in that order: the option, the URI's module-path, the environment.
    static func module(_ option: String?, uri: PKCS11URI? = nil) throws -> PKCS11Module {
        guard let path = option ?? uri?.modulePath ?? ProcessInfo.processInfo.environment[moduleVariable] else {
            throw CommandFailure(
                "a pkcs11: key needs the token's PKCS #11 module",
                hint: "pass --pkcs11-module PATH (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so; OpenSC: /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so) or set \(moduleVariable)"
            )
        }
        return try failing { () throws(PKCS11Error) in try PKCS11Module.load(path) }
    }

    /// The token's PIN: from the URI's pin-source file, or as a password is read.
    static func pin(for token: String, uri: PKCS11URI?, passwords: PasswordOptions) throws -> [UInt8] {
        if let source = uri?.pinSource {
            guard source.hasPrefix("file:") else {
                throw CommandFailure("pin-source '\(source)' is not a file: URI", hint: "use pin-source=file:/path/to/pin, or give the PIN with --password-file")
            }
            var file = try KeyFile(contentsOf: String(source.dropFirst("file:".count)))
            defer { file.wipe() }
            return Array(file.bytes.prefix { $0 != 0x0A && $0 != 0x0D })
        }
        return try passwords.read(prompt: "PIN for token '\(token)': ")
    }

    /// The private key a `pkcs11:` URI names, in a logged-in session.
    static func privateKey(_ text: String, module option: String?, passwords: PasswordOptions) throws -> PKCS11PrivateKey {
        let uri = try failing { () throws(PKCS11Error) in try PKCS11URI(text) }
        guard uri.type == nil || uri.type == "private" else {
            throw CommandFailure("'\(text)' names a \(uri.type ?? "") object; signing needs type=private")
        }
        guard let token = uri.token else { throw CommandFailure("'\(text)' names no token", hint: "add token=LABEL to the URI ('coffer key list' shows them)") }
        guard uri.object != nil || uri.id != nil else { throw CommandFailure("'\(text)' names no key", hint: "add object=LABEL or id=%… to the URI") }
        let module = try module(option, uri: uri)
        var pin = try pin(for: token, uri: uri, passwords: passwords)
        defer { SecretBytes.wipe(&pin) }
        return try failing { () throws(PKCS11Error) in
            try module.openSession(tokenLabel: token, pin: pin).privateKey(label: uri.object, id: uri.id)
        }
    }

    /// Runs `body`, turning a token's error into the command's: a wrong PIN is a failed check (exit 1).
    static func failing<Result>(_ body: () throws(PKCS11Error) -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw CommandFailure(error.reason, exitCode: error.code == .pinIncorrect ? ExitStatus.checkFailed : ExitStatus.inputError)
        }
    }
}

extension KeyFiles {
    /// What signs for `-k`: a private key file, or a key on a token (`pkcs11:` URI).
    static func signer(_ path: String, passwords: PasswordOptions, pkcs11Module: String?) throws -> any MessageSigner {
        if HardwareKeys.isURI(path) { return try HardwareKeys.privateKey(path, module: pkcs11Module, passwords: passwords) }
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
