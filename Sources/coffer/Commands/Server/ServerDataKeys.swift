import ArgumentParser
import CofferHTTPClient
import CofferServerWire

struct ServerDataKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data-keys",
        abstract: "Rotate a device's data key, or retire its old versions (admin).",
        discussion: """
            rotate makes a new version of the data key a registered key uses (its own, or its user's \
            with --data-key-scope user); devices get it at their next fetch, and older versions stay \
            available to decrypt. retire --min-version N stops issuing the versions below N: re-encrypt \
            what they encrypted first. The floor is never lowered. (A device rotates its own with \
            'coffer server data-key rotate'.)

            Examples:
              coffer server data-keys rotate k_0123… --server URL -k admin.key
              coffer server data-keys retire k_0123… --min-version 3 \\
                  --server URL -k admin.key
            """
    )

    @Argument(help: ArgumentHelp("rotate or retire.", valueName: "action"))
    var action: String

    @Argument(help: ArgumentHelp("The registered key whose data key it is.", valueName: "keyid"))
    var keyID: String

    @Option(name: .customLong("min-version"), help: ArgumentHelp("retire: the oldest version still issued.", valueName: "n"))
    var minimumVersion: Int64?

    @OptionGroup var admin: AdminOptions

    func validate() throws {
        switch action {
        case "rotate": if minimumVersion != nil { throw ValidationError("rotate takes no --min-version") }
        case "retire":
            guard let minimumVersion else { throw ValidationError("retire needs --min-version N") }
            if minimumVersion < 1 { throw ValidationError("--min-version must be 1 or more") }
        default: throw ValidationError("the action is rotate or retire, not '\(action)'")
        }
    }

    func run() throws {
        let (keyID, minimumVersion) = (keyID, minimumVersion ?? 1)
        if action == "rotate" {
            let rotated = try admin.run { client async throws(ServerClientError) in try await client.rotateDataKey(ofKey: keyID) }
            if admin.json { try JSONLines.write(rotated); return }
            Terminal.writeOut("\(rotated.owner): data key \(rotated.dataKeyId) is now version \(rotated.version)\n")
        } else {
            let retired = try admin.run { client async throws(ServerClientError) in try await client.retireDataKeys(ofKey: keyID, below: minimumVersion) }
            if admin.json { try JSONLines.write(retired); return }
            Terminal.writeOut("\(retired.owner): versions below \(retired.minimumVersion) are no longer issued\n")
        }
    }
}
