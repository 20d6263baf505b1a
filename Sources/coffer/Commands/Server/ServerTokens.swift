import ArgumentParser
import CofferCore
import CofferCrypto
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServerWire
import CofferKeychain
import Foundation

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
            if admin.json { try JSONLines.write(RevokedRegistrationToken(tokenId: tokenID, revoked: true)) } else { Terminal.writeLine("\(tokenID) revoked") }
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
