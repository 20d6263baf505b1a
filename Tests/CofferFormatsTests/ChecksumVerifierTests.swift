import CofferCore
import CofferCrypto
import CofferFormats
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// `ChecksumVerifier`: the `sha256sum -c` check as library API, every outcome and event.
@Suite("Checksum verifier")
struct ChecksumVerifierTests {
    @Test func everyOutcomeIsReportedAndCounted() throws {
        // Lists name files by absolute path: tests share one process, so none may change the current folder.
        let folder = try TemporaryDirectory()
        _ = try folder.write("hello\n", to: "good.txt")
        _ = try folder.write("tampered\n", to: "bad.txt")
        let hello = DigestAlgorithm.sha256.hash(Array("hello\n".utf8))
        let list = [
            ChecksumList.line(for: hello, path: folder.path("good.txt")),
            ChecksumList.line(for: hello, path: folder.path("bad.txt")),
            ChecksumList.line(for: hello, path: folder.path("missing.txt")),
            "this is not a checksum line",
            "# a comment",
        ].joined(separator: "\n") + "\n"
        let listPath = try folder.write(list, to: "SHA256SUMS")
        var events: [String] = []
        func name(_ entry: ChecksumList.Entry) -> String { String(entry.path.dropFirst(folder.path.count + 1)) }
        let summary = try ChecksumVerifier().verifyFiles(listedIn: listPath) { event in
            switch event {
            case .started(let entry, let size): events.append("start \(name(entry)) \(size.map(String.init) ?? "?")")
            case .progressed: break
            case .finished(let entry, .matched): events.append("ok \(name(entry))")
            case .finished(let entry, .mismatched): events.append("FAILED \(name(entry))")
            case .finished(let entry, .unreadable(let error)): events.append("unreadable \(name(entry)) \(error.code)")
            case .malformedLine(let number, _): events.append("malformed \(number)")
            case .skippedMissing(let entry): events.append("skipped \(name(entry))")
            }
        }
        #expect(events == ["start good.txt 6", "ok good.txt", "start bad.txt 9", "FAILED bad.txt", "unreadable missing.txt file-not-found", "malformed 4"])
        #expect(summary.matched == 1 && summary.mismatched == 1 && summary.unreadable == 1 && summary.malformedLines == 1)
        #expect(!summary.passed)

        // Ignoring missing files (sha256sum --ignore-missing): the missing one is skipped, not failed;
        // the mismatch still fails.
        var skipped: [String] = []
        let ignoring = try ChecksumVerifier(ignoresMissingFiles: true).verifyFiles(listedIn: listPath) { event in
            if case .skippedMissing(let entry) = event { skipped.append(name(entry)) }
        }
        #expect(skipped == ["missing.txt"] && ignoring.skippedMissing == 1 && ignoring.unreadable == 0 && ignoring.mismatched == 1)
    }

    /// Without a named algorithm an untagged line's digest length decides (a SHA512SUMS list needs no
    /// -a); with one, the length must be that algorithm's.
    @Test func anUntaggedLinesLengthNamesItsAlgorithmUnlessOneIsNamed() throws {
        let hex512 = String(repeating: "ab", count: 64), hex384 = String(repeating: "cd", count: 48)
        let guessed = try #require(try ChecksumList.parse(line: "\(hex512)  file"[...], number: 1, algorithm: .sha256, strict: false))
        #expect(guessed.algorithm == .sha512)
        #expect(try ChecksumList.parse(line: "\(hex384)  file"[...], number: 1, algorithm: .sha256, strict: false)?.algorithm == .sha384)
        #expect(throws: CofferFormatsError.self) { try ChecksumList.parse(line: "\(hex512)  file"[...], number: 1, algorithm: .sha256, strict: true) }
        #expect(throws: CofferFormatsError.self) { try ChecksumList.parse(line: "\(String(repeating: "ab", count: 20))  file"[...], number: 1, algorithm: .sha256, strict: false) }
        // A byte order mark opens only the first line.
        #expect(try ChecksumList.parse(line: "\u{FEFF}\(hex384)  file"[...], number: 1, algorithm: .sha256, strict: false)?.path == "file")
    }

    @Test func aListWhereEverythingMatchesPasses() throws {
        // Lists name files by absolute path: tests share one process, so none may change the current folder.
        let folder = try TemporaryDirectory()
        _ = try folder.write("a", to: "a")
        let line = ChecksumList.line(for: DigestAlgorithm.sha512.hash(Array("a".utf8)), path: folder.path("a"), style: .bsd)
        let summary = try ChecksumVerifier(algorithm: .sha256).verifyFiles(listedIn: folder.write(line + "\n", to: "SUMS"))
        #expect(summary.passed && summary.matched == 1, "the BSD tag decides when not strict")
        let strict = try ChecksumVerifier(algorithm: .sha256, strict: true).verifyFiles(listedIn: folder.path("SUMS"))
        #expect(!strict.passed && strict.malformedLines == 1, "strict: a SHA512 line in a SHA-256 check is an error")
    }

    /// Nothing usable is not a pass, and a list that cannot be read is a typed error.
    @Test func emptyAndMissingListsDoNotPass() throws {
        // Lists name files by absolute path: tests share one process, so none may change the current folder.
        let folder = try TemporaryDirectory()
        #expect(try !ChecksumVerifier().verifyFiles(listedIn: folder.write("# nothing\n", to: "empty")).passed)
        #expect(throws: CofferCoreError.fileNotFound) {
            _ = try ChecksumVerifier().verifyFiles(listedIn: folder.path("absent"))
        }
    }
}
