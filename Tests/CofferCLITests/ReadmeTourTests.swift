import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// README.md's tour, replayed (issue 23): every command between `<!-- tour -->` and `<!-- /tour -->`
/// runs, in order, in one shell in an empty folder with the built `coffer` first on PATH, and prints what
/// the README shows. Values that differ from run to run (key ids, signatures, random bytes, times) are
/// compared by shape; a command whose line says `(figures vary by machine)` only has to succeed.
@Suite("README tour", .enabled(if: haveOpenSSL && haveCoreutils, "the tour uses openssl and sha256sum"))
struct ReadmeTourTests {
    struct Step {
        var command: String
        var expected: [String]
    }

    static func steps() throws -> [Step] {
        let readme = try String(contentsOfFile: MessageCheck.repository + "/README.md", encoding: .utf8)
        let tour = try #require(readme.components(separatedBy: "<!-- tour -->").dropFirst().first?.components(separatedBy: "<!-- /tour -->").first)
        var steps: [Step] = []
        var inBlock = false
        var continuing = false
        for line in tour.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inBlock = line == "```console"
                continue
            }
            guard inBlock else { continue }
            if continuing, var last = steps.popLast() {
                last.command += "\n" + line
                steps.append(last)
                continuing = line.hasSuffix("\\")
            } else if line.hasPrefix("$ ") {
                steps.append(Step(command: String(line.dropFirst(2)), expected: []))
                continuing = line.hasSuffix("\\")
            } else if var last = steps.popLast() {
                last.expected.append(line)
                steps.append(last)
            }
        }
        return steps
    }

    /// A line with what changes from run to run replaced by its kind.
    static func shape(_ line: String) -> String {
        var line = line
        let patterns = [
            (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, "<time>"),
            (#"(\d{5} ){5}\d{5}"#, "<read-aloud>"),
            (#"[0-9a-f]{16,}"#, "<hex>"),
            (#"[A-Za-z0-9+/_=-]{20,}"#, "<base64>"),
            (#"(?<=--base64url\n)[A-Za-z0-9_-]+"#, "<base64>"),
        ]
        for (pattern, replacement) in patterns {
            line = line.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return line
    }

    @Test func theTourRunsAsWritten() async throws {
        let steps = try Self.steps()
        #expect(steps.count > 30, "the tour has its commands")
        let folder = try TemporaryDirectory()
        let binaryFolder = URL(fileURLWithPath: try CommandRunner.cofferExecutable()).deletingLastPathComponent().path
        var script = "export PATH='\(binaryFolder)':\"$PATH\"\ncd '\(folder.path)'\n"
        for (index, step) in steps.enumerated() {
            script += "echo '@@@ \(index)'\n{ \(step.command)\n} 2>&1\n"
        }
        let run = try await CommandRunner.run("/bin/bash", ["-c", script])
        let outputs = run.output.components(separatedBy: "@@@ ").dropFirst().map { piece -> [String] in
            var lines = piece.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropFirst()
            if lines.last == "" { lines = lines.dropLast() }
            return Array(lines)
        }
        try #require(outputs.count == steps.count, "every step ran: \(run.standardError)")
        for (step, actual) in zip(steps, outputs) {
            if step.command.contains("(figures vary by machine)") {
                #expect(!actual.contains { $0.hasPrefix("coffer: error") }, "\(step.command): \(actual)")
                continue
            }
            if actual == step.expected { continue }
            let expectedShape = step.expected.map(Self.shape)
            let actualShape = actual.map(Self.shape)
            // Standard error and standard output share the pipe; their order within one command may differ.
            #expect(actualShape == expectedShape || actualShape.sorted() == expectedShape.sorted(), "$ \(step.command)\nREADME shows:\n\(step.expected.joined(separator: "\n"))\nthe run printed:\n\(actual.joined(separator: "\n"))")
        }
    }
}
