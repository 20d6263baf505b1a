import CofferTesting
import Foundation
import Testing

/// The CLI reports every library error through one table (`Sources/coffer/Terminal/ErrorTable.swift`):
/// each public error type of each library module has a row there, and every error type's codes are
/// closed (no way for a caller to make up a code). The end-to-end runs hold the rows' exit statuses and
/// hints, and that no message shows where in Coffer an error was raised.
@Suite("Error table")
struct ErrorTableTests {
    static let sources = LibraryLayeringTests.sources

    /// The public error types of the library modules the CLI links (CofferTesting and CofferTestSupport are
    /// test fixtures; their errors never reach the CLI).
    static func publicErrorTypes() throws -> [String: String] {
        // `public struct|enum|class|actor NAME: … Error …` in a library file (nested types included).
        let publicErrorType = try Regex(#"public (?:final )?(?:struct|enum|class|actor) (\w+)\s*:[^{]*\b(?:Error|CofferError)\b"#)
        var found: [String: String] = [:]
        for file in try LibraryLayeringTests.libraryFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") where !line.drop(while: \.isWhitespace).hasPrefix("//") {
                for match in line.matches(of: publicErrorType) {
                    if let name = match.output[1].substring { found[String(name)] = file.lastPathComponent }
                }
            }
        }
        return found
    }

    @Test func everyPublicErrorTypeOfEveryLibraryHasARow() throws {
        let table = try String(contentsOf: Self.sources.appendingPathComponent("coffer/Terminal/ErrorTable.swift"), encoding: .utf8)
        let types = try Self.publicErrorTypes()
        #expect(types.count >= 10, "found the library error types: \(types.keys.sorted())")
        for (type, file) in types.sorted(by: { $0.key < $1.key }) {
            let row = try Regex(#"Row\((?:\w+\.)*"# + type + #"\.self"#)
            #expect(table.contains(row), "\(type) (\(file)) has no row in ErrorTable.rows: add one with its exit status and hint")
        }
    }

    /// Codes are closed: each error type's `Code` is made only by its own static members, so no caller
    /// can invent one (an invented `KeychainError` code used to pass with `errSecParam`'s status).
    @Test func everyErrorCodeIsClosed() throws {
        var open: [String] = []
        for file in try LibraryLayeringTests.libraryFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            guard let start = text.range(of: "public struct Code") else { continue }
            // The Code type's body: up to the first line that closes it at its own indentation.
            let body = text[start.upperBound...]
            let end = body.range(of: "\n    }\n")?.lowerBound ?? body.endIndex
            for line in body[..<end].split(separator: "\n") {
                let code = line.drop(while: \.isWhitespace)
                if code.contains("init(") && !code.hasPrefix("private init(") && !code.hasPrefix("//") {
                    open.append("\(file.lastPathComponent): \(code)")
                }
            }
            if body[..<end].contains("RawRepresentable") { open.append("\(file.lastPathComponent): Code is RawRepresentable (a public init?(rawValue:))") }
        }
        #expect(open.isEmpty, "error codes that callers could make up:\n\(open.joined(separator: "\n"))")
    }

    /// Each code has its error to compare with (`#expect(throws: KeychainError.itemNotFound)`): a code
    /// added without one fails here.
    @Test func everyCodeHasAnErrorToCompareWith() throws {
        let code = try Regex(#"public static let (\w+) = Code\("#)
        var missing: [String] = []
        for file in try LibraryLayeringTests.libraryFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            guard let type = text.firstMatch(of: try Regex(#"public struct (\w+): CofferError"#))?.output[1].substring else { continue }
            for match in text.matches(of: code) {
                guard let name = match.output[1].substring else { continue }
                if !text.contains("public static var \(name): \(type) { matching(.\(name)) }") { missing.append("\(type).\(name)") }
            }
        }
        #expect(missing.isEmpty, "codes without an error to compare with:\n\(missing.joined(separator: "\n"))")
    }

    @Test func aMissingKeychainIsAnInputErrorWithTheCreateHint() async throws {
        let folder = try TemporaryDirectory()
        let result = try await coffer("keychain", "list", "--keychain", folder.path("absent.db"))
        #expect(result.status == 2)
        #expect(result.standardError.contains("hint: create one with 'coffer keychain create'"), "\(result.standardError)")
    }

    @Test func anExistingOutputIsAnInputErrorWithTheForceHint() async throws {
        let folder = try TemporaryDirectory()
        let existing = try folder.write([1], to: "taken")
        let result = try await coffer("random", "--bytes", "16", "--output", existing)
        #expect(result.status == 2)
        #expect(result.standardError.contains("hint: choose another name, or pass --force to replace it"), "\(result.standardError)")
    }

    @Test func aMalformedPinIsAnInputErrorWithThePinHint() async throws {
        let result = try await coffer("pin", "check", "127.0.0.1:9", "--pin", "not-a-pin")
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("coffer: error: 'not-a-pin' is not a pin"), "\(result.standardError)")
        #expect(result.standardError.contains("hint: 'coffer pin of FILE' prints the pin of a certificate or public key"), "\(result.standardError)")
    }
}
