import ArgumentParser
import CofferCore
import CofferServer
import Foundation
import Logging

/// `coffer server master-key`: the fleet's master keyring, worked on in the database directly.
struct ServerMasterKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "master-key",
        abstract: "The fleet's master keys: see the keyring, promote a new key, rewrap every row under it, retire the old one.",
        discussion: """
            These commands talk to the server's database directly (--database, as 'coffer serve' \
            does), with the master key files (--master-key-file, repeatable; each 0600 or 0400) or \
            COFFER_MASTER_KEY (base64). The database records which master key wraps new data keys \
            and HMAC secrets; an instance that lacks it refuses to start and to write \
            (docs/SERVER.md, "The master keyring").

            Rotating the master key without downtime:
              1. Give every instance the old and the new key (--master-key-file twice).
              2. Once all hold it: promote NEW_ID (with both key files).
              3. rewrap (with both key files): every row under the new key.
              4. retire OLD_ID, then drop the old key from the instances.

            After step 2 an instance without the new key answers 503 to writes and refuses to \
            start. rewrap commits batch by batch: interrupted, run it again; live instances keep \
            serving. retire is refused while a row is wrapped under the key; afterwards an \
            instance given only the retired key no longer starts. Make a key with 'coffer random \
            --raw --output new.key'.

            Examples:
              coffer server master-key status \\
                  --database sqlite:/var/lib/coffer/server.sqlite \\
                  --master-key-file new.key
              coffer server master-key rewrap --dry-run --master-key-file old.key \\
                  --master-key-file new.key
            """,
        subcommands: [MasterKeyStatus.self, MasterKeyPromote.self, MasterKeyRewrapCommand.self, MasterKeyRetire.self]
    )
}
