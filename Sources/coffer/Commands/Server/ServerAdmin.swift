import ArgumentParser
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferKeychain
import Foundation

struct ServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Talk to a running 'coffer serve': a device registers and fetches its data key; an admin keeps the allow-list, users and tokens.",
        discussion: """
            Each command is one RFC 9421-signed request (docs/SERVER.md). A device's commands \
            (register, set-encryption-key, data-key) sign with the device's own key; the admin's \
            (keys, users, tokens) with -k ADMIN_KEY, a private key whose public half the server was \
            started with (--admin-key). Key ids follow from the keys, so none needs typing. \
            master-key works on the server's database itself, not through a server: the fleet's \
            master keyring (status, promote, rewrap, retire).

            Examples:
              coffer server register --server https://api.example -k device.key \\
                  --encryption-key device-x25519.pub --token-file token.txt
              coffer server keys list --server https://api.example -k admin.key
              coffer server users list --email ada@example.com \\
                  --server https://api.example -k admin.key
              coffer server tokens create --uses 10 --platform ios --server \\
                  https://api.example -k admin.key
              coffer server master-key status --database postgres://coffer@db/coffer \\
                  --master-key-file master.key
            """,
        subcommands: [
            ServerRegister.self, ServerSetEncryptionKey.self, ServerDataKey.self, ServerKeys.self, ServerUsers.self, ServerTokens.self,
            ServerMasterKeyCommand.self,
        ]
    )
}

/// The options every admin command takes.
struct AdminOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server's URL.", valueName: "url"))
    var server: String

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("An admin's private key file.", valueName: "file"))
    var key: String

    @Flag(help: "Print JSON instead of text: a list as one array ('[]' when empty), anything else as one object.")
    var json = false

    @OptionGroup(title: "Password (for an encrypted key)")
    var passwords: PasswordOptions

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("For -k pkcs11:…: the token's PKCS #11 module (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    /// The client, or a command failure naming what is wrong.
    func client() throws -> AdminClient {
        let signing = try KeyFiles.signer(key, passwords: passwords, pkcs11Module: pkcs11Module)
        do {
            return try AdminClient(server: server, key: signing)
        } catch {
            throw CommandFailure("cannot use \(server) with that key: \(error)")
        }
    }

    /// Runs one admin exchange, turning the client's errors into the CLI's.
    func run<Value: Sendable>(_ body: @escaping @Sendable (AdminClient) async throws(ServerClientError) -> Value) throws -> Value {
        try runExchange(with: client(), at: server, body) { error in
            guard error.problemReason == "not-found", error.status == 404 else { return nil }
            return """
                the server answers 404 to everything under /admin/ that is not verified as an admin's request: \
                check --server, that the server was started with --admin-key for -k's public half, and the clocks; \
                the server's log says why ('admin request refused')
                """
        }
    }
}

struct ServerKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "List registered keys or one key's history; disable, enable or revoke one (revocation is final); link one to a user.",
        discussion: """
            A disabled or revoked key is refused by every server instance within a second (401 \
            key-revoked). link makes a device's key a member of a user (coffer serve --data-key-scope \
            user): the device then gets that user's data key, shared by the user's devices. Only this \
            link makes a device a member; signing up does not. Link after your backend has verified, by \
            its own sign-in, that the user is the one on that device: find the user with 'coffer server \
            users list --email ADDRESS' by the address you verified, never one the device claims. events \
            lists what changed a key's record (registered, encryption-key, state, user), newest first.

            Examples:
              coffer server keys list --server URL -k admin.key
              coffer server keys events k_3f… --server URL -k admin.key
              coffer server keys disable k_3f… --server URL -k admin.key
              coffer server keys link k_3f… --user 42 --server URL -k admin.key
            """
    )

    @Argument(help: ArgumentHelp("list (the default), events, disable, enable, revoke or link.", valueName: "action"))
    var action: String = "list"

    @Argument(help: ArgumentHelp("The key id (for every action but list).", valueName: "keyid"))
    var keyID: String?

    @Option(help: ArgumentHelp("The user to link the key to (for link): its id, from 'coffer server users list'.", valueName: "id"))
    var user: Int64?

    @OptionGroup var admin: AdminOptions

    func validate() throws {
        if action == "list" {
            if keyID != nil { throw ValidationError("list takes no key id") }
        } else if AdminClient.KeyAction(rawValue: action) != nil || action == "link" || action == "events" {
            if keyID == nil { throw ValidationError("\(action) needs the key id") }
        } else {
            throw ValidationError("the action is list, events, disable, enable, revoke or link, not '\(action)'")
        }
        if (action == "link") != (user != nil) {
            throw ValidationError(action == "link" ? "link needs --user ID" : "--user is for link")
        }
    }

    func run() throws {
        if let keyID, let user, action == "link" {
            let record = try admin.run { client async throws(ServerClientError) in try await client.link(key: keyID, toUser: user) }
            if admin.json { try JSONLines.write(record) } else { Terminal.writeLine("\(record.keyId) user \(record.userId.map(String.init) ?? "none")") }
            return
        }
        if let keyID, action == "events" {
            let events = try admin.run { client async throws(ServerClientError) in try await client.events(ofKey: keyID) }
            if admin.json {
                try JSONLines.write(events)
                return
            }
            for event in events {
                Terminal.writeLine("\(formatTimestamp(event.at))  \(event.kind)  by \(event.actor)\(event.detail.map { "  \($0)" } ?? "")")
            }
            return
        }
        if let keyID, let change = AdminClient.KeyAction(rawValue: action) {
            let record = try admin.run { client async throws(ServerClientError) in try await client.apply(change, toKey: keyID) }
            if admin.json { try JSONLines.write(record) } else { Terminal.writeLine("\(record.keyId) \(record.state)") }
            return
        }
        let keys = try admin.run { client async throws(ServerClientError) in try await client.keys() }
        if admin.json {
            try JSONLines.write(keys)
            return
        }
        for key in keys {
            let used = key.lastUsedAt.map { formatTimestamp($0) } ?? "never used"
            let extras = [key.userId.map { "user \($0)" }, key.encryptionKeyId.map { "encryption key \($0)" }].compactMap { $0 }
            Terminal.writeLine(
                "\(key.keyId)  \(key.algorithm)  \(key.state)  registered \(formatTimestamp(key.createdAt))  last used \(used)" + extras.map { "  " + $0 }.joined()
            )
        }
        if keys.isEmpty { Terminal.writeError("no keys are registered\n") }
    }
}

struct ServerUsers: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "List the users devices signed up, or find the one with an address.",
        discussion: """
            The server verifies no address: a user is what a device claimed when it signed up, and its \
            creator (keyId) is no member of it. Look the user up by the address your backend verified, \
            then link the device with 'coffer server keys link KEYID --user ID'. Addresses compare as \
            the server compares them at sign-up (NFC, case ignored).

            Examples:
              coffer server users list --email ada@example.com --server URL -k admin.key
              coffer server users list --server URL -k admin.key --json
            """
    )

    @Argument(help: ArgumentHelp("list (the default).", valueName: "action"))
    var action: String = "list"

    @Option(help: ArgumentHelp("Only the user with this address.", valueName: "address"))
    var email: String?

    @OptionGroup var admin: AdminOptions

    func validate() throws {
        guard action == "list" else { throw ValidationError("the action is list, not '\(action)'") }
    }

    func run() throws {
        let email = email
        let users = try admin.run { client async throws(ServerClientError) in try await client.users(email: email) }
        if admin.json {
            try JSONLines.write(users)
            return
        }
        for user in users {
            Terminal.writeLine("\(user.id)  \(user.email)  \(user.name.debugDescription)  signed up \(formatTimestamp(user.createdAt)) by \(user.keyId)")
        }
        if users.isEmpty { Terminal.writeError(email == nil ? "no users\n" : "no user has that address\n") }
    }
}

struct ServerTokens: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Issue, list or revoke registration tokens for POST /register.",
        discussion: """
            create prints the token once (the server keeps only its hash): hand it to the app or \
            platform that will register, which sends it as "token" in POST /register.

            Examples:
              coffer server tokens create --uses 50 --expires-in 604800 --platform ios \\
                  --server URL -k admin.key
              coffer server tokens list --server URL -k admin.key
              coffer server tokens revoke t_… --server URL -k admin.key
            """
    )

    @Argument(help: ArgumentHelp("create, list (the default) or revoke.", valueName: "action"))
    var action: String = "list"

    @Argument(help: ArgumentHelp("The token id (for revoke).", valueName: "token-id"))
    var tokenID: String?

    @Option(help: ArgumentHelp("Registrations the token allows (create).", valueName: "n"))
    var uses: Int = 1

    @Option(name: .customLong("expires-in"), help: ArgumentHelp("Seconds until the token stops working (create; 60 to 2592000).", valueName: "seconds"))
    var expiresIn: Int64 = 86_400

    @Option(help: ArgumentHelp("Only registrations giving this platform label may use it (create).", valueName: "label"))
    var platform: String?

    @OptionGroup var admin: AdminOptions

    func validate() throws {
        switch action {
        case "create", "list": if tokenID != nil { throw ValidationError("\(action) takes no token id") }
        case "revoke": if tokenID == nil { throw ValidationError("revoke needs the token id") }
        default: throw ValidationError("the action is create, list or revoke, not '\(action)'")
        }
        if !(1...10_000).contains(uses) { throw ValidationError("--uses must be 1 to 10000") }
        if !(60...2_592_000).contains(expiresIn) { throw ValidationError("--expires-in must be 60 to 2592000 seconds") }
    }

    func run() throws {
        let (uses, expiresIn, platform) = (uses, expiresIn, platform)
        switch action {
        case "create":
            let issued = try admin.run { client async throws(ServerClientError) in
                try await client.createToken(uses: uses, expiresIn: expiresIn, platform: platform)
            }
            if admin.json { try JSONLines.write(issued); return }
            Terminal.writeLine(issued.token)
            Terminal.writeError("token \(issued.tokenId): \(issued.uses) use\(issued.uses == 1 ? "" : "s") until \(formatTimestamp(issued.expiresAt))\(issued.platform.map { ", platform \($0)" } ?? "") — shown once\n")
        case "revoke":
            let tokenID = tokenID ?? ""
            try admin.run { client async throws(ServerClientError) in try await client.revokeToken(id: tokenID) }
            if admin.json { try JSONLines.write(RevokedToken(tokenId: tokenID, revoked: true)) } else { Terminal.writeLine("\(tokenID) revoked") }
        default:
            let tokens = try admin.run { client async throws(ServerClientError) in try await client.tokens() }
            if admin.json {
                try JSONLines.write(tokens)
                return
            }
            for token in tokens {
                let state = token.revoked ? "revoked" : "\(token.usesLeft) of \(token.uses) left"
                Terminal.writeLine("\(token.tokenId)  \(state)  expires \(formatTimestamp(token.expiresAt))\(token.platform.map { "  platform \($0)" } ?? "")")
            }
            if tokens.isEmpty { Terminal.writeError("no tokens\n") }
        }
    }
}

/// A UNIX time as ISO 8601 in UTC, to the second.
func formatTimestamp(_ seconds: Int64) -> String {
    Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
}

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
        let client: DataKeyClient
        do {
            client = try DataKeyClient(server: server, signer: signer, identity: recipient)
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

/// What `coffer server tokens revoke --json` prints: the server's answer.
private struct RevokedToken: Encodable {
    let tokenId: String
    let revoked: Bool
}
