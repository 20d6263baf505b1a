public import CofferCore
public import CofferCrypto

/// Checks the files a checksum list names, as `sha256sum -c` does: each listed file is read in constant
/// memory and its digest compared with the listed one in constant time.
///
/// One bad line does not hide the rest, and one unreadable file does not stop the check: each is an
/// ``Event`` and a count in the ``Summary``. A list passes only when every listed file matched and at
/// least one line was usable.
///
/// ```swift
/// let summary = try ChecksumVerifier(algorithm: .sha256).verifyFiles(listedIn: "SHA256SUMS") { event in
///     if case .finished(let entry, .mismatched) = event { print("\(entry.path): FAILED") }
/// }
/// guard summary.passed else { throw ReleaseError.tampered }
/// ```
public struct ChecksumVerifier: Sendable {
    /// The algorithm untagged (GNU) lines were made with.
    public var algorithm: DigestAlgorithm
    /// When true, a BSD line tagged with another algorithm is a malformed line; when false the tag decides.
    public var strict: Bool

    /// When true, a listed file that does not exist is skipped (``Event/skippedMissing(_:)``) instead
    /// of failing the check, as `sha256sum --ignore-missing` does; any other read failure still fails.
    public var ignoresMissingFiles: Bool

    /// A verifier; see the properties.
    public init(algorithm: DigestAlgorithm = .sha256, strict: Bool = false, ignoresMissingFiles: Bool = false) {
        self.algorithm = algorithm
        self.strict = strict
        self.ignoresMissingFiles = ignoresMissingFiles
    }

    /// How the check of one listed file ended.
    public enum Outcome: Sendable, Hashable {
        /// The file's digest is the listed one.
        case matched
        /// The file was read whole and its digest is not the listed one.
        case mismatched
        /// The file could not be opened or read; nothing is known of its contents.
        case unreadable(CofferCoreError)
    }

    /// What happens during a check, in order, for progress and reporting.
    public enum Event: Sendable {
        /// A listed file is about to be read; `size` is its size when the file system knows it.
        case started(ChecksumList.Entry, size: Int64?)
        /// Bytes of the current file read so far.
        case progressed(ChecksumList.Entry, bytesRead: Int64)
        /// The check of a listed file ended.
        case finished(ChecksumList.Entry, Outcome)
        /// A line of the list is not a checksum line; it is skipped.
        case malformedLine(number: Int, CofferFormatsError)
        /// A listed file does not exist and ``ChecksumVerifier/ignoresMissingFiles`` is set: skipped.
        case skippedMissing(ChecksumList.Entry)
    }

    /// The counts of one or more checks.
    public struct Summary: Sendable, Hashable {
        /// Files whose digest matched.
        public var matched = 0
        /// Files read whole whose digest did not match.
        public var mismatched = 0
        /// Files that could not be read.
        public var unreadable = 0
        /// Lines that were not checksum lines.
        public var malformedLines = 0
        /// Listed files that do not exist, skipped under ``ChecksumVerifier/ignoresMissingFiles``.
        public var skippedMissing = 0

        /// An empty summary.
        public init() {}

        /// Whether every listed file matched, no line was malformed, and at least one file was checked.
        public var passed: Bool { mismatched == 0 && unreadable == 0 && malformedLines == 0 && matched > 0 }

        /// Adds another check's counts, for several lists checked as one.
        public mutating func add(_ other: Summary) {
            matched += other.matched
            mismatched += other.mismatched
            unreadable += other.unreadable
            malformedLines += other.malformedLines
            skippedMissing += other.skippedMissing
        }
    }

    /// Checks every file the list at `path` (or `-` for standard input) names, relative to the current
    /// folder, calling `observe` as it goes.
    ///
    /// - Throws: `CofferCoreError` when the list itself cannot be opened or read (the files already
    ///   checked were reported through `observe`).
    public func verifyFiles(listedIn path: String, _ observe: (Event) -> Void = { _ in }) throws(CofferCoreError) -> Summary {
        var summary = Summary()
        let list = try FileReader.open(path)
        do {
            try list.forEachLine(maximumLength: ChecksumList.maximumLineLength) { line, number in
                do {
                    guard let entry = try ChecksumList.parse(line: line, number: number, algorithm: algorithm, strict: strict) else { return }
                    let outcome = Self.check(entry, observe)
                    if ignoresMissingFiles, case .unreadable(let error) = outcome, error.code == .fileNotFound {
                        summary.skippedMissing += 1
                        observe(.skippedMissing(entry))
                        return
                    }
                    switch outcome {
                    case .matched: summary.matched += 1
                    case .mismatched: summary.mismatched += 1
                    case .unreadable: summary.unreadable += 1
                    }
                    observe(.finished(entry, outcome))
                } catch let error as CofferFormatsError {
                    summary.malformedLines += 1
                    observe(.malformedLine(number: number, error))
                }
            }
        } catch let error as CofferCoreError {
            throw error
        } catch {
            throw CofferCoreError(.ioFailure, "\(path == "-" ? "standard input" : path): \(error)", underlying: error)
        }
        return summary
    }

    private static func check(_ entry: ChecksumList.Entry, _ observe: (Event) -> Void) -> Outcome {
        do {
            let reader = try FileReader(path: entry.path)
            observe(.started(entry, size: reader.size))
            let digest = try withoutActuallyEscaping(observe) { observe in
                try entry.algorithm.hash(reading: reader) { observe(.progressed(entry, bytesRead: $0)) }
            }
            return digest.matches(entry.expected) ? .matched : .mismatched
        } catch let error as CofferCoreError {
            return .unreadable(error)
        } catch {
            return .unreadable(CofferCoreError(.ioFailure, "\(entry.path): \(error)", underlying: error))
        }
    }
}
