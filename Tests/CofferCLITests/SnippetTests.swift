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

    /// A snippet's shown lines, without its leading comment, its hidden parts and the markers: all of
    /// them, and each shown part (the runs between `// snippet.show` and `// snippet.hide`).
    static func shownLines(of name: String) throws -> (all: [Substring], parts: [[Substring]]) {
        let text = try String(contentsOf: root.appendingPathComponent("Snippets/\(name).swift"), encoding: .utf8)
        var all: [Substring] = []
        var parts: [[Substring]] = [[]]
        var hidden = false
        var header = true
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if header && trimmed.hasPrefix("//") && !trimmed.hasPrefix("// snippet.") { continue }
            header = false
            if trimmed == "// snippet.hide" { hidden = true; parts.append([]); continue }
            if trimmed == "// snippet.show" { hidden = false; continue }
            if !hidden {
                all.append(line)
                parts[parts.count - 1].append(line)
            }
        }
        return (all, parts)
    }

    /// The code a snippet shows.
    static func shownCode(of name: String) throws -> String {
        try shownLines(of: name).all.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The code a snippet shows, and each of its shown parts: a page may show all of a snippet or one
    /// part of it.
    static func shownCodeAndParts(of name: String) throws -> [String] {
        let lines = try shownLines(of: name)
        let pieces = lines.parts.map { $0.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        return [lines.all.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)] + pieces
    }

    /// The pages whose code blocks must be compiled code: README.md and every DocC article and overview.
    static var documentationPages: [String] {
        let sources = root.appendingPathComponent("Sources")
        let modules = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        var pages = ["README.md"]
        for module in modules.sorted() {
            let catalogue = "Sources/\(module)/Docs.docc"
            let files = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalogue).path)) ?? []
            pages += files.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalogue)/\($0)" }
        }
        return pages
    }

    /// The ```swift blocks of a page, each without its fences and surrounding blank lines.
    static func swiftBlocks(of page: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if trimmed == "```swift" { current = [] }
            } else if trimmed == "```" {
                blocks.append((current ?? []).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The snippets a page embeds with DocC's `@Snippet(path: "coffer/Snippets/Name")`.
    static func embeddedSnippets(of page: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        return text.components(separatedBy: "@Snippet(path: \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    /// A package manifest shown in README ("Use Coffer in your package") is checked against Package.swift
    /// by ``readmeSaysHowToDependOnCoffer()`` instead: a manifest is not a snippet.
    static func isManifest(_ block: String) -> Bool { block.hasPrefix("// swift-tools-version") }

    /// Every ```swift block of README.md and of the DocC catalogues is a snippet's shown code (or a shown
    /// part of one), so every sample compiles as a user writes it and runs; a page that embeds a snippet
    /// with `@Snippet` names one that exists.
    @Test func everySwiftBlockInTheDocumentationIsCompiledCode() throws {
        var shown: Set<String> = []
        for name in Self.names { shown.formUnion(try Self.shownCodeAndParts(of: name)) }
        var checked = 0
        for page in Self.documentationPages {
            for block in try Self.swiftBlocks(of: page) where !Self.isManifest(block) {
                checked += 1
                let compiled = shown.contains(block)
                #expect(compiled, "\(page): this block is no snippet's shown code (Snippets/*.swift):\n\(block)")
            }
            for path in try Self.embeddedSnippets(of: page) {
                let name = path.hasPrefix("coffer/Snippets/") ? String(path.dropFirst("coffer/Snippets/".count)) : path
                #expect(Self.names.contains(name), "\(page): @Snippet(path: \"\(path)\") names no snippet in Snippets/")
            }
        }
        #expect(checked >= 5, "found only \(checked) code blocks in \(Self.documentationPages)")
    }

    /// The samples a newcomer looks for first are there, as compiled code, on the page that should have
    /// them: how the request-signing key is made, hashing and verifying passwords with a rehash, files
    /// encrypted and decrypted on disk, and the middleware's `scheme:`.
    @Test(arguments: [
        ("README.md", "HTTPSigningKey("),
        ("Sources/CofferCrypto/Docs.docc/CofferCrypto.md", "PasswordHasher("),
        ("Sources/CofferCrypto/Docs.docc/CofferCrypto.md", "needsRehash("),
        ("Sources/CofferFormats/Docs.docc/CofferFormats.md", "CofferEncryption.encryptFile("),
        ("Sources/CofferFormats/Docs.docc/CofferFormats.md", "CofferEncryption.decryptFile("),
        ("Sources/CofferHummingbird/Docs.docc/CofferHummingbird.md", "scheme:"),
    ])
    func aPageShowsThisAsCompiledCode(page: String, code: String) throws {
        var shown: Set<String> = []
        for name in Self.names { shown.formUnion(try Self.shownCodeAndParts(of: name)) }
        var samples = try Self.swiftBlocks(of: page).filter(shown.contains)
        for path in try Self.embeddedSnippets(of: page) where path.hasPrefix("coffer/Snippets/") {
            let name = String(path.dropFirst("coffer/Snippets/".count))
            if Self.names.contains(name) { samples.append(try Self.shownCode(of: name)) }
        }
        let shows = samples.contains { $0.contains(code) }
        #expect(shows, "\(page) shows no compiled sample with `\(code)`")
    }

    /// README tells a user how to depend on Coffer: the `.package` line of the release, every library
    /// product with what it is for, and a manifest whose products and packages exist as it names them.
    @Test func readmeSaysHowToDependOnCoffer() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        guard let start = readme.range(of: "\n## Use Coffer in your package\n"),
              let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex),
              let library = readme.range(of: "\n## Using the library\n"), start.lowerBound < library.lowerBound else {
            Issue.record("README has no '## Use Coffer in your package' section before '## Using the library'")
            return
        }
        let section = String(readme[start.upperBound..<end.lowerBound])
        let packageLine = #".package(url: "https://github.com/coffer-dev/coffer.git", from: "2.0.0")"#
        #expect(section.contains(packageLine), "the section shows \(packageLine)")
        let products = manifest.components(separatedBy: ".library(name: \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(products.count >= 10, "found \(products) in Package.swift")
        for product in products {
            #expect(section.contains("| `\(product)` |"), "the section's table has no row for the product \(product)")
        }
        let sample = try #require(Self.swiftBlocks(of: "README.md").first(where: Self.isManifest), "the section shows a complete Package.swift")
        #expect(section.contains(sample))
        #expect(sample.contains(packageLine))
        // Every other package the sample names is one Coffer depends on, at the version Coffer asks for.
        let declared = Self.packageLines(in: manifest)
        var identities = ["coffer"]
        for line in Self.packageLines(in: sample) where line != packageLine {
            #expect(declared.contains(line), "\(line) is not a dependency of Package.swift as written there")
            if let url = line.components(separatedBy: "\"").dropFirst().first {
                identities.append(String(url.split(separator: "/").last ?? "").replacingOccurrences(of: ".git", with: "").lowercased())
            }
        }
        for product in sample.components(separatedBy: ".product(name: \"").dropFirst() {
            let name = String(product.prefix { $0 != "\"" })
            let package = product.components(separatedBy: "package: \"").dropFirst().first.map { String($0.prefix { $0 != "\"" }) } ?? ""
            #expect(identities.contains(package), "the product \(name) names the package \(package), which the sample does not depend on")
            if package == "coffer" {
                #expect(products.contains(name), "Coffer has no library product \(name)")
            } else {
                #expect(manifest.contains(".product(name: \"\(name)\", package: \"\(package)\")"), "Coffer itself uses no product \(name) of \(package)")
            }
        }
    }

    /// The `.package(url: …, from: …)` lines of a manifest, one per dependency.
    static func packageLines(in manifest: String) -> [String] {
        manifest.components(separatedBy: ".package(url: ").dropFirst().map { ".package(url: " + $0.prefix { $0 != ")" } + ")" }
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
