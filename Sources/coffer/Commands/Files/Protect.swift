import ArgumentParser
import CofferCore
import CofferFiles

struct Protect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a folder private (0700, contents closed to group and others) and exclude it from backups.",
        discussion: """
            Creates the folder if needed (mode 0700), sets mode 0700 on it, removes group and other \
            permissions from everything inside that you own, and excludes it from backups: on Linux the \
            freedesktop attribute user.xdg.robots.backup=false (honoured by backup tools that follow the \
            freedesktop convention), on Apple platforms isExcludedFromBackup. When the file system cannot \
            store user extended attributes, says so and exits 1.

            --check changes nothing: it reports mode, owner, backup exclusion and any entry open to \
            group or others, and exits 1 when the folder is not protected.

            Examples:
              coffer protect ~/.local/share/myapp
              coffer protect --check ~/.local/share/myapp
            """
    )

    @Argument(help: ArgumentHelp("The folder.", valueName: "dir"))
    var folder: String

    @Flag(help: "Report the folder's protection without changing anything; exit 1 when it is not protected.")
    var check = false

    @Flag(help: "With --check, one JSON object: path, protected, mode, owner, ownedByYou, backupExclusion, exposedEntries, problems.")
    var json = false

    func validate() throws {
        if json && !check { throw ValidationError("--json goes with --check") }
    }

    func run() throws {
        if check {
            let status = ProtectionStatus.of(folder)
            guard status.isFolder else { throw CommandFailure("'\(folder)' is not a folder", exitCode: ExitStatus.checkFailed) }
            if json {
                try JSONLines.write(ProtectionReport(
                    path: status.path, protected: status.isProtected, mode: String(status.mode, radix: 8), owner: status.owner,
                    ownedByYou: status.isOwnedByCurrentUser, backupExclusion: "\(status.backupExclusion)",
                    exposedEntries: status.exposedEntries, problems: status.problems
                ))
                if !status.isProtected { throw ExitCode(ExitStatus.checkFailed) }
                return
            }
            report(status)
            guard status.isProtected else {
                throw CommandFailure("'\(folder)' is not protected: \(status.problems.joined(separator: "; "))", hint: "run 'coffer protect \(folder)'", exitCode: ExitStatus.checkFailed)
            }
            Terminal.writeLine("protected")
            return
        }
        let protected = try ProtectedFolder(path: folder)
        let tightened = protected.tightenContents()
        if !tightened.isEmpty {
            Terminal.writeLine("closed \(tightened.count) entr\(tightened.count == 1 ? "y" : "ies") to group and others")
        }
        let status = protected.status
        report(status)
        if case .unsupported(let reason) = protected.backupExclusion {
            throw CommandFailure("'\(folder)' is private (0700) but \(reason)", hint: "keep it on a file system with user extended attributes (ext4, xfs, btrfs, tmpfs since Linux 6.6)", exitCode: ExitStatus.checkFailed)
        }
        guard status.isProtected else {
            throw CommandFailure("'\(folder)' is still not protected: \(status.problems.joined(separator: "; "))", exitCode: ExitStatus.checkFailed)
        }
        Terminal.writeLine("protected")
    }

    private func report(_ status: ProtectionStatus) {
        Terminal.writeLine("folder: \(status.path)")
        Terminal.writeLine("mode:   \(String(status.mode, radix: 8))\(status.mode == 0o700 ? "" : " (should be 700)")")
        Terminal.writeLine("owner:  uid \(status.owner)\(status.isOwnedByCurrentUser ? " (you)" : " (not you)")")
        Terminal.writeLine("backup: \(status.backupExclusion)")
        if !status.exposedEntries.isEmpty {
            Terminal.writeLine("open to group or others: \(status.exposedEntries.count)")
            for entry in status.exposedEntries.prefix(10) { Terminal.writeLine("  \(entry)") }
        }
    }
}

/// What `protect --check --json` prints.
struct ProtectionReport: Encodable {
    let path: String
    let protected: Bool
    let mode: String
    let owner: UInt32
    let ownedByYou: Bool
    let backupExclusion: String
    let exposedEntries: [String]
    let problems: [String]
}
