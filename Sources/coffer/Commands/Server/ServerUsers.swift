import ArgumentParser
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferKeychain
import Foundation

struct ServerUsers: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "List the users devices signed up, or find the one with an address.",
        discussion: """
            The server verifies no address: a user is what a device claimed when it signed up, and its \
            creator (keyId) is no member of it. Look the user up by the address your backend verified, \
            then link the device with 'coffer server keys link KEYID --user ID --email ADDRESS'. Addresses compare as \
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
