import ArgumentParser
import CofferCore
import CofferServer
import Foundation
import Logging

struct MasterKeyRetire: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retire",
        abstract: "Record that no row is wrapped under a previous master key: instances may drop it.",
        discussion: """
            Refused while any data key or HMAC secret is wrapped under the key (run rewrap first) \
            and for the key that wraps now. Afterwards an instance given only this key refuses to \
            start (it lacks the wrapping key); one that still holds it is told it can drop it.

            Example:
              coffer server master-key retire 9c1d… \\
                  --database sqlite:/var/lib/coffer/server.sqlite
            """
    )

    @Argument(help: ArgumentHelp("The old key's id.", valueName: "key-id"))
    var keyID: String

    @OptionGroup var keys: MasterKeyOptions

    func run() throws {
        let keyID = keyID
        let outcome = try keys.withStore { store in try await ServerMasterKeyring.retire(keyID, in: store) }
        switch outcome {
        case .retired: Terminal.writeLine("\(keyID) retired")
        case .alreadyRetired: Terminal.writeLine("\(keyID) was already retired")
        case .unknown: throw CommandFailure("the database's keyring does not record \(keyID)", hint: "'coffer server master-key status' lists the recorded keys")
        case .wrapping: throw CommandFailure("\(keyID) is the key new rows are wrapped with", hint: "promote another key first (coffer server master-key promote)")
        case .stillWraps(let dataKeys, let secrets, let records):
            throw CommandFailure(
                "\(dataKeys) data key\(dataKeys == 1 ? "" : "s") and \(secrets) HMAC secret\(secrets == 1 ? "" : "s") are still wrapped, and \(records) key record\(records == 1 ? "" : "s") tagged, under \(keyID)",
                hint: "run 'coffer server master-key rewrap' with its key first", exitCode: ExitStatus.checkFailed
            )
        }
    }
}
