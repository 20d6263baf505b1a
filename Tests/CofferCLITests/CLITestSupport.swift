import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Runs the built `coffer` binary.
func coffer(
    _ arguments: String...,
    input: [UInt8] = [],
    environment: [String: String]? = nil,
    in folder: TemporaryDirectory? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> CommandResult {
    try await coffer(arguments, input: input, environment: environment, in: folder, sourceLocation: sourceLocation)
}

/// Runs the built `coffer` binary with an argument array. Every run's messages are held to issue 23's
/// rule: no Swift debug description (`Optional(`, `(_field:`) and no build path on either stream.
func coffer(
    _ arguments: [String],
    input: [UInt8] = [],
    environment: [String: String]? = nil,
    in folder: TemporaryDirectory? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> CommandResult {
    let result = try await CommandRunner.run(
        CommandRunner.cofferExecutable(),
        arguments,
        input: input,
        environment: environment,
        currentDirectory: folder?.path
    )
    for problem in MessageCheck.problems(in: result) {
        Issue.record("coffer \(arguments.joined(separator: " ")): \(problem)", sourceLocation: sourceLocation)
    }
    return result
}

/// What no message of coffer's may contain: Swift's debug descriptions and paths of the build.
enum MessageCheck {
    /// The repository's root, from this file's path (Tests/CofferCLITests/…).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// `.swift:` is where a library error was raised (its `debugDescription`), which only developers see.
    static let forbidden = ["Optional(", "(_", repository + "/Sources/", "/.build/checkouts/", "/.build/x86_64", "NIOSSLError", "CofferFormatsError(", "CofferCoreError(", ".swift:"]

    /// The forbidden strings found in standard error, and in standard output when it is text (binary
    /// output, such as ciphertext, may hold any bytes).
    static func problems(in result: CommandResult) -> [String] {
        var texts = [("standard error", result.standardError)]
        if let text = String(validating: result.standardOutput, as: UTF8.self),
           !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" && $0 != "\t" && $0 != "\r" }) {
            texts.append(("standard output", text))
        }
        return texts.flatMap { name, text in
            forbidden.filter { text.contains($0) }.map { "\(name) contains '\($0)': \(text.prefix(400))" }
        }
    }
}

/// Runs another program in `folder`.
func tool(_ name: String, _ arguments: [String], input: [UInt8] = [], in folder: TemporaryDirectory) async throws -> CommandResult {
    try await CommandRunner.run(name, arguments, input: input, currentDirectory: folder.path)
}

let haveCoreutils = CommandRunner.isAvailable("sha256sum") && CommandRunner.isAvailable("sha512sum")
let haveOpenSSL = CommandRunner.isAvailable("openssl")

extension TemporaryDirectory {
    /// Writes a password or other secret file as a careful user keeps one, 0600, so that the commands
    /// reading it have nothing to warn about (a password file that others can read is reported).
    @discardableResult
    func writeSecret(_ text: String, to name: String) throws -> String {
        let target = try write(text, to: name)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target)
        return target
    }
}
