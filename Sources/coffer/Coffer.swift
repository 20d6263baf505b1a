import ArgumentParser
import Foundation
import CCofferBuildInfo
import CCofferSupport
import CofferCore

@main
struct Coffer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "The everyday security kit: digests, MACs, signatures, encryption — with safe defaults.",
        discussion: """
            Every command reads files or standard input ('-') and writes to standard output, so it \
            composes with pipes. Errors go to standard error as 'coffer: error: …'.

            Exit status, the same for every command: 0 success; 1 a check ran and failed (a digest, \
            tag, signature or pin did not match; a wrong password or key, for a key file as for \
            decryption; altered data); 2 a usage or input error (bad flag, unreadable file, malformed \
            input). docs/CLI.md lists every flag.

            Secrets never come from the command line: keys are read from files, passwords from a \
            prompt without echo, a file (--password-file) or an environment variable (--password-env).
            """,
        version: CofferVersion.current,
        subcommands: [Hash.self, HMACCommand.self, KeyCommand.self, Sign.self, Verify.self, Encrypt.self, Decrypt.self, Inspect.self, KDFCommand.self, Random.self, GravatarCommand.self, KeychainCommand.self, PasswordCommand.self, HTTPCommand.self, RequestCommand.self, Serve.self, ServerCommand.self, PinCommand.self, Protect.self, Speed.self]
    )

    /// Runs the command and maps every outcome onto Coffer's exit statuses (0, 1, 2) and message style.
    static func main() {
        // glibc hands freed memory back to the kernel as soon as more than 128 KiB at the top of the heap
        // is free. swift-crypto returns every sealed 64 KiB segment in a fresh buffer, so without this the
        // heap would shrink and grow once per segment, each time with a page fault and a TLB shootdown of
        // the reader thread's core (measured: 0.38 s against 0.26 s for 1 GiB). Keeping up to 256 MiB
        // of free heap costs nothing a 1 MiB-buffered tool would use.
        coffer_tune_heap(256 << 20, 16 << 20)
        do {
            // Before any file is opened: a file must not take the number of a standard stream the
            // process was started without.
            try ProcessProtection.reserveStandardDescriptors()
            // Before any password, key or plaintext is read: a core file of this process would hold them,
            // and a signal must not leave a partial output or a silenced terminal behind.
            try ProcessProtection.preventCoreDumps()
            try ProcessProtection.removeTemporaryFilesOnSignals()
        } catch {
            end(ExitStatus.inputError, error.reason)
        }
        do {
            var arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "serve" {
                arguments = ["serve"] + (try Serve.environment.arguments(Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
            }
            var command = try parseAsRoot(arguments)
            try command.run()
            try Terminal.finishStandardOutput()
        } catch let failure as CommandFailure {
            end(failure.exitCode, failure.message, hint: failure.hint)
        } catch let code as ExitCode {
            end(code.rawValue)
        } catch {
            // A library's error that no command worded itself: its row in the one table.
            if let report = ErrorTable.report(for: error) {
                end(report.exitStatus, report.message, hint: report.hint)
            }
            if let (typed, suggestions) = unknownSubcommand() {
                end(ExitStatus.inputError, "'\(typed)'", hint: suggestions.isEmpty ? "run 'coffer --help' for the list" : "did you mean \(suggestions.map { "'\($0)'" }.joined(separator: " or "))?")
            }
            if exitCode(for: error) == .success {
                // --help and --version: ArgumentParser's text, on standard output.
                Terminal.writeLine(fullMessage(for: error))
                end(0)
            }
            // A misspelled option is the first thing to say, whatever else failed because of it (a
            // missing credential, a missing required option).
            if let (typed, command, suggestion) = unknownOption() {
                end(
                    ExitStatus.inputError, "Unknown option '\(typed)'." + (suggestion.map { " Did you mean '\($0)'?" } ?? ""),
                    hint: "run '\(command) --help' for usage"
                )
            }
            let message = self.message(for: error).trimmingTrailingWhitespace
            end(ExitStatus.inputError, message, hint: "run '\(helpCommand(for: error))' for usage")
        }
        end(0)
    }

    /// Ends the process: standard output flushed and checked first (a failure there turns a success
    /// into exit 2), then the error, if any, on standard error.
    private static func end(_ status: Int32, _ message: String? = nil, hint: String? = nil) -> Never {
        var status = status
        do {
            try Terminal.finishStandardOutput()
        } catch {
            if message == nil || status == 0 {
                Terminal.reportError(error.message, hint: error.hint)
                status = ExitStatus.inputError
            }
        }
        if let message { Terminal.reportError(message, hint: hint) }
        Terminal.exit(status)
    }

    /// The word where a subcommand was expected that names none (`coffer verfy`, `coffer key shwo`),
    /// with the full commands it is closest to; nil when the command words are all known.
    static func unknownSubcommand(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> (String, [String])? {
        // `coffer help key generate` is ArgumentParser's own spelling of `coffer key generate --help`:
        // the words after it name a command.
        let arguments = arguments.first == "help" ? Array(arguments.dropFirst()) : arguments
        var names = commandTree(Coffer.self)
        var path: [String] = []
        for argument in arguments {
            guard !names.isEmpty, !argument.hasPrefix("-") else { return nil }
            if let next = names.first(where: { $0.name == argument }) {
                names = next.subcommands
                path.append(argument)
                continue
            }
            let close = names.map(\.name).filter { editDistance($0, argument) <= (argument.count <= 3 ? 1 : 2) || $0.hasPrefix(argument) }
            return ((["coffer"] + path).joined(separator: " ") + "' has no command '" + argument, close.map { (["coffer"] + path + [$0]).joined(separator: " ") })
        }
        return nil
    }

    /// The first `--option` the command the arguments name does not take, the command's words, and the
    /// option it is closest to; nil when every long option is one the command takes. Read from the
    /// command's full help (hidden options included), only once parsing has already failed.
    static func unknownOption(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> (String, String, String?)? {
        var command: any ParsableCommand.Type = Coffer.self
        var words = ["coffer"]
        for argument in arguments where !argument.hasPrefix("-") {
            let configuration: CommandConfiguration = command.configuration
            guard let next = configuration.subcommands.first(where: { $0._commandName == argument }) else { break }
            command = next
            words.append(argument)
        }
        let help = command.helpMessage(includeHidden: true, columns: 10_000)
        var known: Set<String> = ["--help", "--version", "--generate-completion-script", "--experimental-dump-help"]
        var rest = Substring(help)
        while let start = rest.range(of: "--") {
            let name = rest[start.lowerBound...].prefix { $0 == "-" || $0.isLetter || $0.isNumber }
            if name.count > 2 { known.insert(String(name)) }
            rest = rest[start.upperBound...]
        }
        for argument in arguments {
            if argument == "--" { break }
            guard argument.hasPrefix("--"), argument.count > 2 else { continue }
            let typed = String(argument.prefix { $0 != "=" })
            guard !known.contains(typed) else { continue }
            let closest = known.map { ($0, editDistance($0, typed)) }.filter { $0.1 <= 2 }.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
            return (typed, words.joined(separator: " "), closest)
        }
        return nil
    }

    /// A command's subcommands by name, recursively.
    struct CommandName {
        let name: String
        let subcommands: [CommandName]
    }

    static func commandTree(_ command: any ParsableCommand.Type) -> [CommandName] {
        let configuration: CommandConfiguration = command.configuration
        var tree: [CommandName] = []
        for subcommand in configuration.subcommands {
            let name: String = subcommand._commandName
            tree.append(CommandName(name: name, subcommands: commandTree(subcommand)))
        }
        return tree
    }

    /// Levenshtein distance between two words (for suggestions only).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    /// The `--help` invocation that explains the subcommand the user was calling.
    private static func helpCommand(for error: any Error) -> String {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let first = arguments.first,
            let command = configuration.subcommands.first(where: { $0._commandName == first })
        else { return "coffer --help" }
        if arguments.count > 1, command.configuration.subcommands.contains(where: { $0._commandName == arguments[1] }) {
            return "coffer \(first) \(arguments[1]) --help"
        }
        return "coffer \(first) --help"
    }
}

/// The version printed by `coffer --version`.
enum CofferVersion {
    /// The release.
    static let number = "2.0.0"
    /// The commit built from (Package.swift reads it from git), or "unknown".
    static let commit = String(cString: coffer_build_commit())
    /// What `coffer --version` prints: `2.0.0 (commit 0123456789ab)`.
    static let current = "\(number) (commit \(commit))"
}

/// Coffer's exit statuses.
enum ExitStatus {
    /// A check ran and did not pass: a digest or tag mismatch.
    static let checkFailed: Int32 = 1
    /// A usage error or unusable input: bad flags, unreadable files, malformed data.
    static let inputError: Int32 = 2
}
