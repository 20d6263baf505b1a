import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

struct Hash: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print or check cryptographic digests of files.",
        discussion: """
            Output is 'DIGEST  NAME', exactly as sha256sum prints it, so 'sha256sum -c' accepts Coffer's \
            lists and 'coffer hash -c' accepts sha256sum's (and BSD-style 'SHA256 (NAME) = DIGEST' lines). \
            Checking without -a, each line's BSD tag or digest length names its algorithm (64 hex digits \
            SHA-256, 96 SHA-384, 128 SHA-512); name -a for the others (SHA-3, SHA-512/256).

            Algorithms: sha256 (default), sha384, sha512, sha512-256, sha3-256, sha3-384, sha3-512.
            Broken ones, only for legacy checksums: insecure-sha1, insecure-md5.

            Files are read in 1 MiB chunks, so memory use does not depend on their size. A progress \
            bar appears on standard error for inputs over 64 MiB when it is a terminal.

            Examples:
              coffer hash release.tar.gz
              coffer hash -a sha512 *.iso > SHA512SUMS
              coffer hash -c SHA512SUMS
              coffer hash -c --ignore-missing --status SHA256SUMS && echo verified
              coffer hash -c --json SHA256SUMS | jq -r 'select(.ok == false) | .path'
              curl -s https://example.com/file | coffer hash --json
            """
    )

    @Option(
        name: [.customShort("a"), .customLong("algorithm")],
        help: ArgumentHelp("The hash function (default: sha256).", valueName: "algorithm"),
        completion: .list(DigestAlgorithm.allCases.map(\.rawValue)),
        transform: parseDigestAlgorithm
    )
    var chosenAlgorithm: DigestAlgorithm?

    private var algorithm: DigestAlgorithm { chosenAlgorithm ?? .sha256 }

    @Flag(name: .shortAndLong, help: "Read checksum lists from the FILEs and verify the files they name.")
    var check = false

    @Flag(help: "With --check, print nothing: the exit status says it all (0 every file matched).")
    var status = false

    @Flag(help: "With --check, skip listed files that do not exist instead of failing them.")
    var ignoreMissing = false

    @Flag(help: "With --check, fail on improperly formatted lines (Coffer always does; accepted for sha256sum's scripts).")
    var strict = false

    @Flag(help: "Print BSD-style lines: 'SHA256 (NAME) = DIGEST'.")
    var tag = false

    @Flag(exclusivity: .exclusive)
    var encoding: DigestEncoding = .hex

    @Flag(help: "Print one JSON object per file: path, algorithm, hex, base64, size; with --check, path, algorithm, ok (and why not).")
    var json = false

    @Flag(name: .shortAndLong, help: "With --check, print only failures.")
    var quiet = false

    @Argument(help: "Files to hash, or checksum lists with --check. '-' or nothing reads standard input.")
    var files: [String] = []

    func validate() throws {
        if json && (tag || encoding == .base64) {
            throw ValidationError("--json already carries hex and base64; it cannot be combined with --tag or --base64")
        }
        if check && (tag || encoding == .base64) {
            throw ValidationError("--check reads lists in any format; --tag and --base64 do not apply to it")
        }
        if check && json && (quiet || status) {
            throw ValidationError("--json prints every file's verdict; it cannot be combined with \(quiet ? "--quiet" : "--status")")
        }
        if quiet && !check {
            throw ValidationError("--quiet only applies to --check")
        }
        for (flag, given) in [("--status", status), ("--ignore-missing", ignoreMissing), ("--strict", strict)] where given && !check {
            throw ValidationError("\(flag) only applies to --check (-c)")
        }
    }

    func run() throws {
        if algorithm.isInsecure {
            Terminal.warn("\(algorithm.standardName) is broken; trust its result only to detect accidents, not attacks")
        }
        let inputs = files.isEmpty ? ["-"] : files
        if check {
            var checker = ChecksumChecker(
                algorithm: algorithm, strict: chosenAlgorithm != nil, quiet: quiet || status, silent: status, ignoringMissing: ignoreMissing, json: json
            )
            for list in inputs { checker.check(list: list) }
            try checker.finish()
            return
        }
        var failed = false
        for path in inputs {
            do {
                try hashOne(path)
            } catch let error as CofferCoreError {
                Terminal.flushStandardOutput()
                Terminal.reportError(error.reason)
                failed = true
            }
        }
        if failed { throw ExitCode(ExitStatus.inputError) }
    }

    private func hashOne(_ path: String) throws {
        let reader = try FileReader.open(path)
        let progress = ProgressBar(total: reader.size, label: path)
        defer { progress.finish() }
        var size: Int64 = 0
        let digest = try algorithm.hash(reading: reader) { done in
            size = done
            progress.update(done)
        }
        progress.finish()
        if json {
            try JSONLines.write(DigestRecord(path: path, algorithm: algorithm.rawValue, hex: digest.hex, base64: digest.base64, size: size))
        } else {
            Terminal.writeLine(ChecksumList.line(for: digest, path: path, style: tag ? .bsd : .gnu, base64: encoding == .base64))
        }
    }
}

/// The `--json` shape of one digest.
struct DigestRecord: Encodable {
    let path: String
    let algorithm: String
    let hex: String
    let base64: String
    let size: Int64
}
