import ArgumentParser
import CofferCore
import CofferServer
import Foundation
import Logging

struct MasterKeyPromote: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promote",
        abstract: "Make a new master key the one the fleet wraps new rows with (once every instance holds it).",
        discussion: """
            The key must be among --master-key-file (proving its id), and so must the key the \
            database wraps with now, which becomes previous: rows under it still open. From then on \
            an instance that lacks the new key answers 503 to writes and refuses to start, so give \
            every instance the new key first. Then run 'coffer server master-key rewrap'.

            Example:
              coffer server master-key promote 3f2a… --master-key-file old.key \\
                  --master-key-file new.key
            """
    )

    @Argument(help: ArgumentHelp("The new key's id ('coffer server master-key status' shows it).", valueName: "key-id"))
    var keyID: String

    @OptionGroup var keys: MasterKeyOptions

    func run() throws {
        guard let keyring = try keys.keyring() else {
            throw CommandFailure("promote needs the master keys", hint: "give --master-key-file for the key wrapping now and for \(keyID)")
        }
        let keyID = keyID
        let recorded = try keys.withStore { store in try await keyring.promote(keyID, in: store) }
        let previous = recorded.filter { $0.state == .previous }.map(\.keyID)
        Terminal.writeLine("\(keyID) wraps new rows")
        Terminal.writeError("previous: \(previous.isEmpty ? "none" : previous.joined(separator: ", ")); next: coffer server master-key rewrap\n")
    }
}
