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

/// The database and master keys every `master-key` command (and `coffer serve`) reads.
struct MasterKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A SQLite file (a path, or sqlite:PATH) or postgres://… (default: COFFER_DATABASE, else the SQLite file in the XDG data folder).", valueName: "url"))
    var database: String?

    @Option(name: .customLong("master-key-file"), help: ArgumentHelp("A master key file: 32 raw bytes, mode 0600 or 0400 (repeatable). Or COFFER_MASTER_KEY (base64).", valueName: "file"))
    var masterKeyFiles: [String] = []

    /// The keyring these options name; nil for none.
    func keyring() throws -> ServerMasterKeyring? {
        try MasterKeyFiles.keyring(files: masterKeyFiles)
    }

    /// Opens the database (applying migrations, as `coffer serve` does), runs `body`, closes it.
    func withStore<Value: Sendable>(_ body: @escaping @Sendable (any RegistrationStore) async throws -> Value) throws -> Value {
        let location: DatabaseLocation
        do {
            location = try DatabaseLocation(database ?? ProcessInfo.processInfo.environment["COFFER_DATABASE"])
        } catch let error as ServerConfigurationError {
            throw CommandFailure(reporting: error)
        }
        return try runBlocking {
            let store: any RegistrationStore
            do {
                // The command reports what it did itself; the database driver's notes at info level
                // (a pooled connection closed as the command ends) are not the operator's concern.
                var logger = Logger(label: "coffer.master-key")
                logger.logLevel = .warning
                store = try await location.open(logger: logger)
            } catch let error as ServerConfigurationError {
                throw CommandFailure("cannot open the database: \(error.reason)", hint: error.hint)
            }
            do {
                let value = try await body(store)
                try await store.close()
                return value
            } catch {
                try? await store.close()
                throw MasterKeyFiles.failure(error)
            }
        }
    }
}

/// Reading master keys, and saying what went wrong in the CLI's words.
enum MasterKeyFiles {
    /// The keys in `files` (in order) and in COFFER_MASTER_KEY (one base64 key, after the files); nil
    /// for none.
    static func keyring(files: [String]) throws -> ServerMasterKeyring? {
        do throws(ServerConfigurationError) {
            var keys: [ServerMasterKey] = []
            for file in files { keys.append(try ServerMasterKey(contentsOf: file)) }
            if let text = ProcessInfo.processInfo.environment["COFFER_MASTER_KEY"] {
                keys.append(try ServerMasterKey(base64Encoded: text))
            }
            return keys.isEmpty ? nil : try ServerMasterKeyring(keys)
        } catch {
            throw CommandFailure(error.reason, hint: error.hint ?? "make one with 'coffer random --raw --output master.key', and keep it out of the database")
        }
    }

    /// A library error as the CLI reports it: the keyring's refusals with the flags that answer them.
    static func failure(_ error: any Error, holdingKeys: Bool = true) -> any Error {
        guard let error = error as? ServerConfigurationError else { return error }
        switch error.code {
        case .masterKeyringMismatch where !holdingKeys:
            return CommandFailure(error.reason, hint: "give it --master-key-file with that key")
        case .masterKeyringMismatch:
            return CommandFailure(
                error.reason,
                hint: "give it --master-key-file with the key the database wraps with ('coffer server master-key status --master-key-file FILE' shows a file's id); only if that key is lost for good, 'coffer serve --abandon-master-keyring' starts a new keyring and loses every data key and HMAC secret wrapped under the old one"
            )
        default:
            return CommandFailure(reporting: error)
        }
    }
}

struct MasterKeyStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the keyring the database records, the rows under each key, and the keys given.",
        discussion: """
            Changes nothing. Each recorded key: its id, its state (wrapping: new rows are wrapped \
            under it; previous: rows may still be; retired: none are; abandoned: given up), and its \
            rows. Keys given with --master-key-file are marked 'held'; one not recorded is shown \
            so that its id can be promoted.

            Example:
              coffer server master-key status --database postgres://coffer@db/coffer \\
                  --master-key-file new.key
            """
    )

    @OptionGroup var keys: MasterKeyOptions

    @Flag(help: "Print JSON (one object) instead of text.")
    var json = false

    func run() throws {
        let keyring = try keys.keyring()
        let (recorded, usage) = try keys.withStore { store in (try await store.masterKeyring(), try await store.masterKeyUsage()) }
        let held = Set(keyring?.keyIDs ?? [])
        var entries = recorded.map { record in
            StatusEntry(keyId: record.keyID, state: record.state.rawValue, changedAt: record.changedAt, held: held.contains(record.keyID),
                        dataKeys: usage.rows[record.keyID]?.dataKeys ?? 0, secrets: usage.rows[record.keyID]?.secrets ?? 0)
        }
        for id in keyring?.keyIDs ?? [] where !recorded.contains(where: { $0.keyID == id }) {
            entries.append(StatusEntry(keyId: id, state: "not recorded", changedAt: nil, held: true, dataKeys: usage.rows[id]?.dataKeys ?? 0, secrets: usage.rows[id]?.secrets ?? 0))
        }
        // Rows under a key the keyring does not record (written before it existed).
        for (id, rows) in usage.rows.sorted(by: { $0.key < $1.key }) where !entries.contains(where: { $0.keyId == id }) {
            entries.append(StatusEntry(keyId: id, state: "not recorded", changedAt: nil, held: false, dataKeys: rows.dataKeys, secrets: rows.secrets))
        }
        if json {
            try JSONLines.write(Status(keys: entries, secretsInClear: usage.secretsInClear))
            return
        }
        if recorded.isEmpty { Terminal.writeError("the database records no master keyring yet: the first keyed instance records it\n") }
        for entry in entries {
            let since = entry.changedAt.map { "  since \(formatTimestamp($0))" } ?? ""
            Terminal.writeLine("\(entry.keyId)  \(entry.state)\(entry.held ? "  held" : "")\(since)  \(entry.dataKeys) data key\(entry.dataKeys == 1 ? "" : "s"), \(entry.secrets) HMAC secret\(entry.secrets == 1 ? "" : "s")")
        }
        if usage.secretsInClear > 0 { Terminal.writeLine("\(usage.secretsInClear) HMAC secret\(usage.secretsInClear == 1 ? "" : "s") in clear (rewrap wraps them)") }
    }

    struct StatusEntry: Encodable {
        let keyId: String
        let state: String
        let changedAt: Int64?
        let held: Bool
        let dataKeys: Int
        let secrets: Int
    }

    struct Status: Encodable {
        let keys: [StatusEntry]
        let secretsInClear: Int
    }
}

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

struct MasterKeyRewrapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewrap",
        abstract: "Re-wrap every data key and HMAC secret under the key the fleet wraps with.",
        discussion: """
            Reads rows not yet under the wrapping key in batches, opens each with the key that \
            wraps it (give every such key with --master-key-file), wraps it under the wrapping \
            key and commits the batch; a line on standard error after each batch, a summary on \
            standard output. Interrupted, it loses nothing: run it again and it continues. Safe \
            beside live instances and beside another rewrap (a row changes only if it is still as \
            read). HMAC secrets stored in clear are wrapped. Rows whose key is not given are \
            counted and left; a key with no rows left can be retired.

            Examples:
              coffer server master-key rewrap --dry-run --master-key-file old.key \\
                  --master-key-file new.key
              coffer server master-key rewrap --batch-size 1000 \\
                  --master-key-file old.key \\
                  --master-key-file new.key
            """
    )

    @OptionGroup var keys: MasterKeyOptions

    @Flag(name: .customLong("dry-run"), help: "Count what would be re-wrapped; write nothing.")
    var dryRun = false

    @Option(name: .customLong("batch-size"), help: ArgumentHelp("Rows per committed batch (1 to 10000).", valueName: "n"))
    var batchSize = 500

    @Flag(help: "Print the summary as JSON (one object).")
    var json = false

    func validate() throws {
        if !(1...10_000).contains(batchSize) { throw ValidationError("--batch-size must be 1 to 10000") }
    }

    func run() throws {
        guard let keyring = try keys.keyring() else {
            throw CommandFailure("rewrap needs the master keys", hint: "give --master-key-file for the wrapping key and for every key rows are still wrapped under")
        }
        let (batchSize, dryRun) = (batchSize, dryRun)
        let summary = try keys.withStore { store in
            let rewrap = try MasterKeyRewrap(store: store, keyring: keyring, batchSize: batchSize)
            return try await rewrap.run(dryRun: dryRun) { progress in
                let verb = dryRun ? "would rewrap" : "rewrapped"
                Terminal.writeError("pass \(progress.pass): \(progress.kind.rawValue): \(progress.rewrapped) \(verb)\(progress.unopenable > 0 ? ", \(progress.unopenable) cannot be opened" : "")\n")
            }
        }
        if json {
            try JSONLines.write(RewrapSummary(summary))
            return
        }
        let verb = summary.dryRun ? "would be re-wrapped" : "re-wrapped"
        Terminal.writeLine("\(summary.dataKeys) data key\(summary.dataKeys == 1 ? "" : "s") and \(summary.secrets) HMAC secret\(summary.secrets == 1 ? "" : "s") (\(summary.secretsFromClear) from clear) \(verb) under \(summary.wrappingKeyID)")
        for (id, count) in summary.unopenable.sorted(by: { $0.key < $1.key }) {
            Terminal.writeLine("\(count) row\(count == 1 ? "" : "s") under \(id) cannot be opened with the keys given")
        }
        let left = summary.remaining.rows.filter { $0.value.dataKeys + $0.value.secrets > 0 }
        if left.isEmpty && summary.remaining.secretsInClear == 0 {
            Terminal.writeLine("no row is wrapped under another key: a previous key can be retired (coffer server master-key retire ID)")
        }
    }

    /// The summary as `--json` prints it.
    struct RewrapSummary: Encodable {
        let wrappingKeyId: String
        let dryRun: Bool
        let dataKeys: Int
        let secrets: Int
        let secretsFromClear: Int
        let unopenable: [String: Int]
        let remaining: [String: Int]
        let secretsInClear: Int

        init(_ summary: MasterKeyRewrap.Summary) {
            wrappingKeyId = summary.wrappingKeyID
            dryRun = summary.dryRun
            dataKeys = summary.dataKeys
            secrets = summary.secrets
            secretsFromClear = summary.secretsFromClear
            unopenable = summary.unopenable
            remaining = summary.remaining.rows.mapValues { $0.dataKeys + $0.secrets }
            secretsInClear = summary.remaining.secretsInClear
        }
    }
}

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
        case .stillWraps(let dataKeys, let secrets):
            throw CommandFailure(
                "\(dataKeys) data key\(dataKeys == 1 ? "" : "s") and \(secrets) HMAC secret\(secrets == 1 ? "" : "s") are still wrapped under \(keyID)",
                hint: "run 'coffer server master-key rewrap' with its key first", exitCode: ExitStatus.checkFailed
            )
        }
    }
}
