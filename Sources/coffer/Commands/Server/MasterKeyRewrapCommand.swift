import ArgumentParser
import CofferCore
import CofferServer
import Foundation
import Logging

struct MasterKeyRewrapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewrap",
        abstract: "Re-wrap every data key and HMAC secret, and tag every key record, under the key the fleet wraps with.",
        discussion: """
            Reads rows not yet under the wrapping key in batches, opens each with the key that \
            wraps it (give every such key with --master-key-file), wraps it under the wrapping \
            key and commits the batch; a line on standard error after each batch, a summary on \
            standard output. Interrupted, it loses nothing: run it again and it continues. Safe \
            beside live instances and beside another rewrap (a row changes only if it is still as \
            read). HMAC secrets stored in clear are wrapped when their record is tagged. Rows \
            whose key is not given are \
            counted and left; a key with no rows left can be retired.

            Each key record (a registered key: its public key or secret, encryption key, user \
            and state) carries a tag made under the master keyring, checked on every use and \
            made anew here under the wrapping key once the old one is checked. A record whose tag \
            does not match was changed outside Coffer: it is counted and left as it is. A record \
            without a tag is left too, unless --tag-untagged is given: for the records an earlier \
            release wrote (the upgrade to this release: stop the fleet, run this, start it again), \
            those a fleet wrote before it had master keys, and after a new keyring was started. \
            Such records are tagged as they are, unchecked: each one's key id is printed on \
            standard error; run with --dry-run first and compare them with the keys you expect. \
            With per-user data keys, every version is bound to its user's record, so that a \
            user number given again never opens another user's key; --tag-untagged also binds \
            the versions an earlier release made to each user as recorded now, printing each.

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

    @Flag(name: .customLong("tag-untagged"), help: "Also tag key records that carry no tag, and bind users' data keys to their user, as they are (only for what an earlier release wrote).")
    var tagUntagged = false

    @Flag(help: "Print the summary as JSON (one object).")
    var json = false

    func validate() throws {
        if !(1...10_000).contains(batchSize) { throw ValidationError("--batch-size must be 1 to 10000") }
    }

    func run() throws {
        guard let keyring = try keys.keyring() else {
            throw CommandFailure("rewrap needs the master keys", hint: "give --master-key-file for the wrapping key and for every key rows are still wrapped under")
        }
        let (batchSize, dryRun, tagUntagged) = (batchSize, dryRun, tagUntagged)
        let summary = try keys.withStore { store in
            let rewrap = try MasterKeyRewrap(store: store, keyring: keyring, batchSize: batchSize)
            return try await rewrap.run(dryRun: dryRun, taggingUntagged: tagUntagged) { progress in
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
        let tagged = summary.dryRun ? "would be tagged" : "tagged"
        Terminal.writeLine("\(summary.records) key record\(summary.records == 1 ? "" : "s") (\(summary.recordsFromUntagged) without a tag before) \(tagged) under \(summary.wrappingKeyID)")
        for (id, count) in summary.unopenable.sorted(by: { $0.key < $1.key }) {
            Terminal.writeLine("\(count) row\(count == 1 ? "" : "s") under \(id) cannot be opened with the keys given")
        }
        for keyID in summary.untaggedRecordIDs {
            // Text a database writer chose, on the line the operator judges it by: shown escaped everywhere.
            Terminal.writeError("\(summary.dryRun ? "would tag" : "tagged") without a check (as it was): \(Terminal.shown(keyID))\n")
        }
        for version in summary.boundDataKeys {
            Terminal.writeError("\(summary.dryRun ? "would bind" : "bound") to the user recorded now, without a check: \(Terminal.shown(version))\n")
        }
        if summary.unboundDataKeys > 0 {
            let count = summary.unboundDataKeys
            Terminal.writeLine("\(count) version\(count == 1 ? "" : "s") of users' data keys bound to no user left so (refused until bound: --tag-untagged, if an earlier release made them)")
        }
        if summary.untagged > 0 {
            Terminal.writeLine("\(summary.untagged) key record\(summary.untagged == 1 ? "" : "s") without a tag left as they are (refused until tagged: --tag-untagged, if an earlier release wrote them)")
        }
        let left = summary.remaining.rows.filter { $0.value.dataKeys + $0.value.secrets + $0.value.records > 0 }
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
        let records: Int
        let recordsFromUntagged: Int
        let untaggedRecordIds: [String]
        let untagged: Int
        let boundDataKeys: [String]
        let unboundDataKeys: Int
        let unopenable: [String: Int]
        let remaining: [String: Int]
        let secretsInClear: Int

        init(_ summary: MasterKeyRewrap.Summary) {
            wrappingKeyId = summary.wrappingKeyID
            dryRun = summary.dryRun
            dataKeys = summary.dataKeys
            secrets = summary.secrets
            secretsFromClear = summary.secretsFromClear
            records = summary.records
            recordsFromUntagged = summary.recordsFromUntagged
            untaggedRecordIds = summary.untaggedRecordIDs
            untagged = summary.untagged
            boundDataKeys = summary.boundDataKeys
            unboundDataKeys = summary.unboundDataKeys
            unopenable = summary.unopenable
            remaining = summary.remaining.rows.mapValues { $0.dataKeys + $0.secrets + $0.records }
            secretsInClear = summary.remaining.secretsInClear
        }
    }
}
