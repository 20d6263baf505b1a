import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Every code sample of the documentation is a SwiftPM snippet (`Snippets/`): `swift build` compiles it,
/// these tests run each to completion, and README's library section shows exactly the snippets' code.
@Suite("Documentation snippets")
struct SnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Snippets").path)) ?? []
        return files.filter { $0.hasSuffix(".swift") }.map { String($0.dropLast(".swift".count)) }.sorted()
    }

    /// The folder `swift build` put the snippet executables in: the test bundle's, beside `coffer`.
    static func buildFolder() throws -> String {
        #if os(Linux)
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: executable).deletingLastPathComponent().path
        }
        #endif
        return URL(fileURLWithPath: try CommandRunner.cofferExecutable()).deletingLastPathComponent().path
    }

    /// The code a snippet shows: without its leading comment, its hidden parts and the markers.
    static func shownCode(of name: String) throws -> String {
        let text = try String(contentsOf: root.appendingPathComponent("Snippets/\(name).swift"), encoding: .utf8)
        var shown: [Substring] = []
        var hidden = false
        var header = true
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if header && trimmed.hasPrefix("//") && !trimmed.hasPrefix("// snippet.") { continue }
            header = false
            if trimmed == "// snippet.hide" { hidden = true; continue }
            if trimmed == "// snippet.show" { hidden = false; continue }
            if !hidden { shown.append(line) }
        }
        return shown.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func thereAreSnippetsForTheTutorialsAndTheREADME() {
        #expect(Self.names.count >= 14, "found \(Self.names)")
    }

    @Test(arguments: names)
    func snippetRunsToCompletion(name: String) async throws {
        let executable = try Self.buildFolder() + "/" + name
        try #require(FileManager.default.isExecutableFile(atPath: executable), "\(executable): swift build makes it")
        let folder = try TemporaryDirectory(prefix: "coffer-snippet")
        let result = try await CommandRunner.run(executable, [], environment: ["TMPDIR": folder.path, "HOME": folder.path], currentDirectory: folder.path)
        #expect(result.status == 0, "\(name) exited \(result.status): \(result.standardError)")
    }

    /// README's "Using the library" code blocks are the README snippets' shown code, in order.
    @Test func readmeShowsTheSnippetsCode() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "## Using the library"), let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex) else {
            Issue.record("README has no 'Using the library' section")
            return
        }
        let blocks = readme[start.upperBound..<end.lowerBound].components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```")[0].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let snippets = try Self.names.filter { $0.hasPrefix("Readme") }.map(Self.shownCode)
        #expect(blocks.count == snippets.count, "README has \(blocks.count) code blocks, Snippets/ \(snippets.count) Readme snippets")
        for block in blocks {
            #expect(snippets.contains(block), "this README block is not a snippet's code:\n\(block)")
        }
    }
}
