import ArgumentParser
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferKeychain
import Foundation

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
            users list --email ADDRESS' by the address you verified, never one the device claims, and \
            give that address with --email too: the server links only if the user still holds it (a \
            user number can be given again). events \
            lists what changed a key's record (registered, encryption-key, state, user), newest first.

            Examples:
              coffer server keys list --server URL -k admin.key
              coffer server keys events k_3f… --server URL -k admin.key
              coffer server keys disable k_3f… --server URL -k admin.key
              coffer server keys link k_3f… --user 42 --email ada@example.com \\
                  --server URL -k admin.key
            """
    )

    @Argument(help: ArgumentHelp("list (the default), events, disable, enable, revoke or link.", valueName: "action"))
    var action: String = "list"

    @Argument(help: ArgumentHelp("The key id (for every action but list).", valueName: "keyid"))
    var keyID: String?

    @Option(help: ArgumentHelp("The user to link the key to (for link): its id, from 'coffer server users list'.", valueName: "id"))
    var user: Int64?

    @Option(help: ArgumentHelp("The user's address as your sign-in verified it (for link): the server links only if that user holds it.", valueName: "address"))
    var email: String?

    @OptionGroup var admin: AdminOptions

    func validate() throws {
        if action == "list" {
            if keyID != nil { throw ValidationError("list takes no key id") }
        } else if AdminClient.KeyAction(rawValue: action) != nil || action == "link" || action == "events" {
            if keyID == nil { throw ValidationError("\(action) needs the key id") }
        } else {
            throw ValidationError("the action is list, events, disable, enable, revoke or link, not '\(action)'")
        }
        if (action == "link") != (user != nil) || (action == "link") != (email != nil) {
            throw ValidationError(action == "link" ? "link needs --user ID and --email ADDRESS (the address your sign-in verified)" : "--user and --email are for link")
        }
    }

    func run() throws {
        if let keyID, let user, let email, action == "link" {
            let record = try admin.run { client async throws(ServerClientError) in try await client.link(key: keyID, toUser: user, email: email) }
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
                Terminal.writeLine("\(formatTimestamp(event.at))  \(event.kind.rawValue)  by \(event.actor)\(event.detail.map { "  \($0)" } ?? "")")
            }
            return
        }
        if let keyID, let change = AdminClient.KeyAction(rawValue: action) {
            let record = try admin.run { client async throws(ServerClientError) in try await client.apply(change, toKey: keyID) }
            if admin.json { try JSONLines.write(record) } else { Terminal.writeLine("\(record.keyId) \(record.state.rawValue)") }
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
                "\(key.keyId)  \(key.algorithm)  \(key.state.rawValue)  registered \(formatTimestamp(key.createdAt))  last used \(used)" + extras.map { "  " + $0 }.joined()
            )
        }
        if keys.isEmpty { Terminal.writeError("no keys are registered\n") }
    }
}
