// `coffer keychain`: the group. Its options (KeychainOptions.swift), how an item is named
// (ItemName.swift), one file per subcommand, and export and import (KeychainTransfer.swift) sit beside it.

import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPKCS11
import Foundation

struct KeychainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain",
        abstract: "Keep passwords, tokens and keys in an encrypted keychain (Keychain Services semantics).",
        discussion: """
            The keychain is one SQLite file, $XDG_DATA_HOME/coffer/keychain.db unless --keychain says otherwise, \
            created 0600 in a 0700 folder. Every secret is encrypted under a master key that only the keychain \
            password unwraps; names (service, account) are stored in clear so that they can be searched.

            The keychain password comes from a prompt without echo, --password-file FILE (its first line) or \
            --password-env VAR. Item secrets come from a prompt or --stdin, never from the command line.
            'coffer keychain unlock' keeps the keychain unlocked for later commands of this login session (in \
            the kernel's session keyring, not on disk) until --timeout or 'coffer keychain lock'. \
            'coffer keychain passwd' changes the password and re-encrypts every item under a new master key; \
            'coffer keychain rotate' does the re-encryption alone.

            Examples:
              coffer keychain create
              coffer keychain unlock --timeout 15m
              printf %s "$TOKEN" | coffer keychain add --service com.example.api \\
                  --account ci --stdin
              coffer keychain get --service com.example.api --account ci --reveal
              coffer keychain list --json
              coffer keychain export -o keychain-backup.coffer
            """,
        subcommands: [
            KeychainCreate.self, KeychainUnlock.self, KeychainLock.self, KeychainStatus.self, KeychainAdd.self, KeychainGet.self,
            KeychainUpdate.self, KeychainDelete.self, KeychainList.self, KeychainExport.self, KeychainImport.self, KeychainPasswd.self,
            KeychainRotate.self,
        ]
    )
}
