import Foundation
import Testing

/// The libraries speak in their own API's terms: a message that a library throws names parameters and
/// types, never a `coffer` command or flag (the CLI adds those on its `hint:` lines). Doc comments may
/// mention the CLI; string literals in library code may not.
@Suite("Library layering")
struct LibraryLayeringTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Library modules: every folder of Sources/ but the CLI's, the C shim's and the test fixtures'.
    static func libraryFiles() throws -> [URL] {
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .filter { $0.hasPrefix("Coffer") && $0 != "CofferTesting" && $0 != "CofferTestSupport" }
        #expect(modules.count >= 10, "found the library modules under \(sources.path)")
        return modules.flatMap { module -> [URL] in
            let root = sources.appendingPathComponent(module)
            let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            return (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
        }
    }

    /// The string literals of one line of code (not of a comment), good enough for this check.
    static func literals(in line: Substring) -> [Substring] {
        let code = line.drop(while: \.isWhitespace)
        guard !code.hasPrefix("//") else { return [] }
        return code.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
    }

    @Test func libraryMessagesNameNoCommandOrFlag() throws {
        let flag = try Regex(#"(^|[\s(])--[a-z][a-z0-9-]+"#)
        var found: [String] = []
        for file in try Self.libraryFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for literal in Self.literals(in: line) where literal.contains("coffer ") || literal.contains(flag) {
                    found.append("\(file.lastPathComponent):\(number + 1): \(literal)")
                }
            }
        }
        #expect(found.isEmpty, "library messages that name the CLI:\n\(found.joined(separator: "\n"))")
    }
}
