import ArgumentParser
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferKeychain
import Foundation

struct ServerDataKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data-key",
        abstract: "Fetch (or rotate) this device's data key from a server and keep it in the keychain or a 0600 file.",
        discussion: """
            The device signs with its registered key (-k; --keyid only for a key registered under \
            another id, such as a shared secret's) and opens the answer with the \
            private half of the encryption key it registered (-i, X25519 or P-256). The key is never \
            printed: --keychain-tag stores it in the keychain (after-first-unlock, this device only; \
            unlocked through 'coffer keychain unlock' or its password), -o writes it to a new 0600 file. \
            'coffer encrypt --keychain-key TAG' then encrypts with it.

            Examples:
              coffer server data-key fetch --server URL -k device.key \\
                  -i device-x25519.key --keychain-tag com.example.data
              coffer server data-key rotate --server URL -k device.key \\
                  -i device-x25519.key -o data-v2.key
            """
    )

    @Argument(help: ArgumentHelp("fetch or rotate.", valueName: "action"))
    var action: String

    @Option(help: ArgumentHelp("The server's URL.", valueName: "url"))
    var server: String

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("The device's registered private key.", valueName: "file"))
    var key: String

    @Option(name: .customLong("keyid"), help: ArgumentHelp("The key id the server gave the device (default: the id it registers -k as).", valueName: "id"))
    var keyID: String?

    @Option(name: [.customShort("i"), .customLong("identity")], help: ArgumentHelp("The private half of the device's encryption key.", valueName: "file"))
    var identity: String

    @Option(help: ArgumentHelp("An older version to fetch (to decrypt what it encrypted).", valueName: "n"))
    var version: Int64?

    @Option(name: .customLong("keychain-tag"), help: ArgumentHelp("Store the key in the keychain under this tag.", valueName: "tag"))
    var keychainTag: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the key (32 raw bytes) to this new 0600 file.", valueName: "file"))
    var output: String?

    @OptionGroup var keychain: KeychainOptions

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("For -k pkcs11:…: the token's PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    @OptionGroup var trust: ServerCAOption

    func validate() throws {
        guard action == "fetch" || action == "rotate" else { throw ValidationError("the action is fetch or rotate, not '\(action)'") }
        guard (keychainTag == nil) != (output == nil) else { throw ValidationError("say where the key goes: --keychain-tag TAG or -o FILE, one of them") }
        if action == "rotate" && version != nil { throw ValidationError("rotate makes a new version; --version is for fetch") }
    }

    func run() throws {
        let signing = try KeyFiles.signer(key, passwords: keychain.password, pkcs11Module: pkcs11Module)
        let recipient = try readIdentity(identity) { try keychain.password.read(prompt: "Password for \(identity): ") }
        let signer: HTTPMessageSigner
        do {
            signer = HTTPMessageSigner(key: try HTTPSigningKey(signing), keyID: keyID ?? signing.verifyingKey.fingerprint.registeredKeyID)
        } catch {
            throw CommandFailure("this key cannot sign HTTP requests: \(error.reason)")
        }
        let http = try trustingClient(server: server, ca: trust.ca)
        defer { try? http?.syncShutdown() }
        let client: DataKeyClient
        do {
            client = try DataKeyClient(server: server, signer: signer, identity: recipient, client: http ?? .shared)
        } catch {
            throw CommandFailure("cannot use \(server): \(error)")
        }
        let (rotating, version) = (action == "rotate", version)
        let dataKey = try runBlocking { () async throws -> DataKeyClient.DataKey in
            do throws(ServerClientError) {
                return rotating ? try await client.rotate() : try await client.fetch(version: version)
            } catch {
                throw CommandFailure(error.reason, hint: error.problemReason == "no-encryption-key" ? "give the device one: coffer server set-encryption-key --encryption-key PUB" : nil)
            }
        }
        if let keychainTag {
            let store = try keychain.openUnlocked()
            do {
                try store.add(dataKey.key, tag: keychainTag, label: "\(dataKey.dataKeyID) v\(dataKey.version)")
            } catch {
                throw CommandFailure(error.reason, hint: error.code == .duplicateItem ? "choose another --keychain-tag, or delete the old key first" : nil)
            }
        } else if let output {
            var bytes = dataKey.key.withUnsafeKeyBytes { Array($0) }
            defer { SecretBytes.wipe(&bytes) }
            try KeyFiles.write(bytes, to: output, secret: true, overwrite: false)
        }
        Terminal.writeError("data key \(dataKey.dataKeyID) version \(dataKey.version) (newest \(dataKey.newestVersion), oldest kept \(dataKey.minimumVersion)) -> \(keychainTag.map { "keychain tag \($0)" } ?? output ?? "")\n")
    }
}
