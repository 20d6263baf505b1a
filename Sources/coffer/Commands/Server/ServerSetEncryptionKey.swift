import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import Foundation

struct ServerSetEncryptionKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-encryption-key",
        abstract: "Add or replace the encryption key a registered device's data keys are sealed to.",
        discussion: """
            Sends POST /encryption-key signed by the device's registered key (-k). The server logs the \
            change and keeps it in the key's history ('coffer server keys events'); it allows a few \
            changes per key an hour. Data keys fetched afterwards are sealed to the new key only.

            Example:
              coffer server set-encryption-key --server https://api.example \\
                  -k device.key \\
                  --encryption-key device-x25519.pub
            """
    )

    @OptionGroup var device: DeviceOptions

    @Option(name: .customLong("encryption-key"), help: ArgumentHelp("The X25519 or P-256 public key data keys are sealed to.", valueName: "file"))
    var encryptionKey: String

    func run() throws {
        let encryption = try readEncryptionKey(encryptionKey)
        let change = try device.run { client async throws(ServerClientError) in try await client.setEncryptionKey(encryption) }
        if device.json {
            try JSONLines.write(change)
            return
        }
        Terminal.writeLine("\(change.keyId) encryption key \(change.encryptionKeyId)\(change.changed ? "" : " (unchanged)")")
    }
}
