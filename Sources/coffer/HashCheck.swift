import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

/// `coffer hash --check`: verifies the files named in checksum lists, reporting like `sha256sum -c`.
///
/// Each listed file prints `NAME: OK` or `NAME: FAILED`; unreadable files print `NAME: FAILED open or read`
/// with the reason on standard error; malformed lines are reported as `LIST:LINE: reason` and skipped.
/// Exit status: 1 if any file failed, else 2 if any line was malformed or no line was usable, else 0.
struct ChecksumChecker {
    let algorithm: DigestAlgorithm
    /// When the user named `-a`, BSD lines tagged with another algorithm are errors.
    let strict: Bool
    let quiet: Bool

    private var matched = 0
    private var mismatched = 0
    private var unreadable = 0
    private var malformed = 0
    private var unreadableLists = 0

    init(algorithm: DigestAlgorithm, strict: Bool, quiet: Bool) {
        self.algorithm = algorithm
        self.strict = strict
        self.quiet = quiet
    }

    mutating func check(list: String) {
        let listName = list == "-" ? "standard input" : list
        do {
            let reader = try FileReader.open(list)
            try reader.forEachLine(maximumLength: ChecksumList.maximumLineLength) { line, number in
                do {
                    guard let entry = try ChecksumList.parse(line: line, number: number, algorithm: algorithm, strict: strict) else {
                        return
                    }
                    verify(entry)
                } catch let error as CofferFormatsError {
                    malformed += 1
                    Terminal.flushStandardOutput()
                    Terminal.reportError("\(listName):\(number): \(error.reason)")
                }
            }
        } catch let error as CofferCoreError {
            unreadableLists += 1
            Terminal.flushStandardOutput()
            Terminal.reportError(error.reason)
        } catch {
            unreadableLists += 1
            Terminal.reportError("\(listName): \(error)")
        }
    }

    private mutating func verify(_ entry: ChecksumList.Entry) {
        let shownName = ChecksumList.displayName(entry.path)
        do {
            let reader = try FileReader(path: entry.path)
            let progress = ProgressBar(total: reader.size, label: entry.path)
            let digest = try entry.algorithm.hash(reading: reader) { progress.update($0) }
            progress.finish()
            if digest.matches(entry.expected) {
                matched += 1
                if !quiet { Terminal.writeLine("\(shownName): OK") }
            } else {
                mismatched += 1
                Terminal.writeLine("\(shownName): FAILED")
            }
        } catch {
            unreadable += 1
            Terminal.writeLine("\(shownName): FAILED open or read")
            Terminal.flushStandardOutput()
            Terminal.reportError((error as? CofferCoreError)?.reason ?? "\(error)")
        }
    }

    /// Prints the summary warnings and throws the exit status when anything went wrong.
    func finish() throws {
        Terminal.flushStandardOutput()
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
        if matched == 0 {
            throw CommandFailure("no properly formatted checksum lines found", hint: "expected lines like 'DIGEST  NAME', as sha256sum writes them")
        }
    }
}
