import ArgumentParser
import CofferCore
import CofferServer
import Foundation
import Logging

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
                        dataKeys: usage.rows[record.keyID]?.dataKeys ?? 0, secrets: usage.rows[record.keyID]?.secrets ?? 0,
                        records: usage.rows[record.keyID]?.records ?? 0)
        }
        for id in keyring?.keyIDs ?? [] where !recorded.contains(where: { $0.keyID == id }) {
            entries.append(StatusEntry(
                keyId: id, state: "not recorded", changedAt: nil, held: true, dataKeys: usage.rows[id]?.dataKeys ?? 0, secrets: usage.rows[id]?.secrets ?? 0,
                records: usage.rows[id]?.records ?? 0
            ))
        }
        // Rows under a key the keyring does not record (written before it existed).
        for (id, rows) in usage.rows.sorted(by: { $0.key < $1.key }) where !entries.contains(where: { $0.keyId == id }) {
            entries.append(StatusEntry(keyId: id, state: "not recorded", changedAt: nil, held: false, dataKeys: rows.dataKeys, secrets: rows.secrets, records: rows.records))
        }
        if json {
            try JSONLines.write(Status(keys: entries, secretsInClear: usage.secretsInClear, untaggedRecords: usage.untaggedRecords))
            return
        }
        if recorded.isEmpty { Terminal.writeError("the database records no master keyring yet: the first keyed instance records it\n") }
        for entry in entries {
            let since = entry.changedAt.map { "  since \(formatTimestamp($0))" } ?? ""
            Terminal.writeLine("\(entry.keyId)  \(entry.state)\(entry.held ? "  held" : "")\(since)  \(entry.dataKeys) data key\(entry.dataKeys == 1 ? "" : "s"), \(entry.secrets) HMAC secret\(entry.secrets == 1 ? "" : "s"), \(entry.records) key record\(entry.records == 1 ? "" : "s")")
        }
        if usage.secretsInClear > 0 { Terminal.writeLine("\(usage.secretsInClear) HMAC secret\(usage.secretsInClear == 1 ? "" : "s") in clear (rewrap wraps them)") }
        if usage.untaggedRecords > 0 && !recorded.isEmpty {
            Terminal.writeLine("\(usage.untaggedRecords) key record\(usage.untaggedRecords == 1 ? "" : "s") without a tag: refused until tagged (rewrap --tag-untagged, only if an earlier release wrote them)")
        }
    }

    struct StatusEntry: Encodable {
        let keyId: String
        let state: String
        let changedAt: Int64?
        let held: Bool
        let dataKeys: Int
        let secrets: Int
        let records: Int
    }

    struct Status: Encodable {
        let keys: [StatusEntry]
        let secretsInClear: Int
        let untaggedRecords: Int
    }
}
