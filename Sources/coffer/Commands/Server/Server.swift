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
            ServerRegister.self, ServerSetEncryptionKey.self, ServerDataKey.self, ServerDataKeys.self, ServerKeys.self, ServerUsers.self, ServerTokens.self,
            ServerMasterKeyCommand.self,
        ]
    )
}
