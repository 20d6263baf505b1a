import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

/// `coffer hash --check`: reports a library ``ChecksumVerifier`` check the way `sha256sum -c` does.
///
/// Each listed file prints `NAME: OK` or `NAME: FAILED`; unreadable files print `NAME: FAILED open or read`
/// with the reason on standard error; malformed lines are reported as `LIST:LINE: reason` and skipped.
/// With `--json` each listed file is one JSON object on its own line instead (``CheckRecord``).
/// Exit status: 1 if any file failed, else 2 if any line was malformed or no line was usable, else 0.
struct ChecksumChecker {
    let verifier: ChecksumVerifier
    let quiet: Bool
    /// `--status`: nothing on either stream for the files; the exit status alone.
    let silent: Bool
    /// `--json`: one ``CheckRecord`` per listed file on standard output.
    let json: Bool

    private var summary = ChecksumVerifier.Summary()
    private var unreadableLists = 0

    /// `strict`: the user named `-a`, so BSD lines tagged with another algorithm are errors.
    init(algorithm: DigestAlgorithm, strict: Bool, quiet: Bool, silent: Bool = false, ignoringMissing: Bool = false, json: Bool = false) {
        verifier = ChecksumVerifier(algorithm: algorithm, strict: strict, ignoresMissingFiles: ignoringMissing)
        self.quiet = quiet
        self.silent = silent
        self.json = json
    }

    mutating func check(list: String) {
        let listName = list == "-" ? "standard input" : list
        var progress: ProgressBar?
        do {
            let checked = try verifier.verifyFiles(listedIn: list) { event in
                switch event {
                case .started(let entry, let size):
                    progress = ProgressBar(total: size, label: entry.path)
                case .progressed(_, let bytes):
                    progress?.update(bytes)
                case .finished(let entry, let outcome):
                    progress?.finish()
                    progress = nil
                    report(entry, outcome)
                case .malformedLine(let number, let error):
                    guard !silent else { return }
                    Terminal.flushStandardOutput()
                    Terminal.reportError("\(listName):\(number): \(error.reason)")
                case .skippedMissing:
                    break
                }
            }
            summary.add(checked)
        } catch {
            progress?.finish()
            unreadableLists += 1
            Terminal.flushStandardOutput()
            Terminal.reportError(error.reason)
        }
    }

    private func report(_ entry: ChecksumList.Entry, _ outcome: ChecksumVerifier.Outcome) {
        guard !silent else { return }
        if json {
            reportJSON(entry, outcome)
            return
        }
        let shownName = ChecksumList.displayName(entry.path)
        switch outcome {
        case .matched:
            if !quiet { Terminal.writeLine("\(shownName): OK") }
        case .mismatched:
            Terminal.writeLine("\(shownName): FAILED")
        case .unreadable(let error):
            Terminal.writeLine("\(shownName): FAILED open or read")
            Terminal.flushStandardOutput()
            Terminal.reportError(error.reason)
        }
    }

    private func reportJSON(_ entry: ChecksumList.Entry, _ outcome: ChecksumVerifier.Outcome) {
        let record: CheckRecord
        switch outcome {
        case .matched:
            record = CheckRecord(path: entry.path, algorithm: entry.algorithm.rawValue, ok: true, reason: nil)
        case .mismatched:
            record = CheckRecord(path: entry.path, algorithm: entry.algorithm.rawValue, ok: false, reason: "mismatch")
        case .unreadable(let error):
            record = CheckRecord(path: entry.path, algorithm: entry.algorithm.rawValue, ok: false, reason: error.reason)
        }
        do {
            try JSONLines.write(record)
        } catch {
            // Encoding a record of strings and a Bool cannot fail; were it to, say so rather than drop it.
            Terminal.reportError("\(entry.path): the verdict could not be written as JSON")
        }
    }

    /// Prints the summary warnings and throws the exit status when anything went wrong.
    func finish() throws {
        Terminal.flushStandardOutput()
        let malformed = summary.malformedLines, unreadable = summary.unreadable, mismatched = summary.mismatched
        if silent {
            if mismatched > 0 || unreadable > 0 || (summary.matched == 0 && summary.skippedMissing > 0) { throw ExitCode(ExitStatus.checkFailed) }
            if malformed > 0 || unreadableLists > 0 || summary.matched == 0 { throw ExitCode(ExitStatus.inputError) }
            return
        }
        if malformed > 0 {
            Terminal.warn("\(malformed) \(malformed == 1 ? "line is" : "lines are") improperly formatted")
        }
        if unreadable > 0 {
            Terminal.warn("\(unreadable) listed \(unreadable == 1 ? "file" : "files") could not be read")
        }
        if mismatched > 0 {
            Terminal.warn("\(mismatched) computed \(mismatched == 1 ? "checksum" : "checksums") did NOT match")
        }
        if mismatched > 0 || unreadable > 0 { throw ExitCode(ExitStatus.checkFailed) }
        if malformed > 0 || unreadableLists > 0 { throw ExitCode(ExitStatus.inputError) }
        if summary.matched == 0 && summary.skippedMissing > 0 {
            throw CommandFailure("no file was verified: every listed file is missing", exitCode: ExitStatus.checkFailed)
        }
        if summary.matched == 0 {
            throw CommandFailure("no properly formatted checksum lines found", hint: "expected lines like 'DIGEST  NAME', as sha256sum writes them")
        }
    }
}

/// What `coffer hash --check --json` prints for each listed file: its path as listed, the algorithm of
/// its line, and the verdict; `reason` is `mismatch` for a different digest, or why the file could not
/// be read.
struct CheckRecord: Encodable {
    let path: String
    let algorithm: String
    let ok: Bool
    let reason: String?
}
