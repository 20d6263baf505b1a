import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// docs/CLI.md and the binary, held to each other (issue 23, one flag language): every short flag the
/// binary has is a row of the table with every command that has it; a short flag means one thing
/// except where the table says it follows age or curl; every JSON-capable command is listed; old
/// spellings still work, with one deprecation line; mistyped commands get a suggestion; the same kind
/// of failure exits with the same status.
@Suite("docs/CLI.md and the flag language")
struct CLIReferenceTests {
    /// (short, long) → commands, from ArgumentParser's own description of the tool.
    static func shortFlags() async throws -> [String: [String]] {
        // ArgumentParser's dump (not coffer's own output: it holds Swift type names) read directly.
        let dump = try await CommandRunner.run(try CommandRunner.cofferExecutable(), ["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.standardOutput)) as? [String: Any])
        var flags: [String: [String]] = [:]
        func walk(_ command: [String: Any], _ path: String) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool != false {
                let names = argument["names"] as? [[String: Any]] ?? []
                let long = names.first { $0["kind"] as? String == "long" }?["name"] as? String ?? ""
                for short in names where short["kind"] as? String == "short" {
                    guard let name = short["name"] as? String, name != "h" else { continue }
                    flags["-\(name) --\(long)", default: []].append(path)
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                walk(sub, (path + " " + (sub["commandName"] as? String ?? "")).trimmingCharacters(in: .whitespaces))
            }
        }
        walk(try #require(root["command"] as? [String: Any]), "")
        return flags
    }

    static func reference() throws -> String {
        try String(contentsOfFile: MessageCheck.repository + "/docs/CLI.md", encoding: .utf8)
    }

    @Test func everyShortFlagIsARowWithEveryCommandThatHasIt() async throws {
        let text = try Self.reference()
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `-") }
        var documented: [String: (commands: Set<String>, peer: Bool)] = [:]
        for row in rows {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 5 else { continue }
            let key = "\(cells[1].replacingOccurrences(of: "`", with: "")) \(cells[2].isEmpty ? "--" : cells[2].replacingOccurrences(of: "`", with: ""))"
            let commands = Set(cells[4].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            documented[key] = (commands, cells[3].contains("*as age*") || cells[3].contains("*as curl*"))
        }
        let actual = try await Self.shortFlags()
        for (flag, commands) in actual {
            let row = try #require(documented[flag], "docs/CLI.md has no row for \(flag) (used by \(commands))")
            #expect(Set(commands) == row.commands, "\(flag): the binary has it in \(commands.sorted()), docs/CLI.md lists \(row.commands.sorted())")
        }
        // One meaning per short flag, but for the rows that say which peer tool they follow.
        let byShort = Dictionary(grouping: actual.keys) { String($0.split(separator: " ")[0]) }
        for (short, meanings) in byShort where meanings.count > 1 {
            let own = meanings.filter { documented[$0]?.peer != true }
            #expect(own.count <= 1, "\(short) means \(meanings.sorted()) and only one of them may be Coffer's own")
        }
    }

    @Test func everyJSONCommandIsListedAndPrintsJSON() async throws {
        let text = try Self.reference()
        let listed = try #require(text.components(separatedBy: "## `--json`").last?.components(separatedBy: "##").first)
        let dump = try await CommandRunner.run(try CommandRunner.cofferExecutable(), ["--experimental-dump-help"]).output
        // Each command whose help offers --json is named in the section.
        for command in ["hash", "hmac", "key show", "verify", "inspect", "keychain status", "keychain list", "password verify", "http verify", "pin fetch", "pin check", "protect --check", "server keys", "server tokens", "speed"] {
            #expect(listed.contains("`\(command)`"), "\(command)")
        }
        #expect(dump.components(separatedBy: "\"json\"").count - 1 >= 15, "the binary offers --json on every listed command")

        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-o", "k.key", "--public", "k.pub", in: folder).status == 0)
        _ = try folder.write("release\n", to: "app.tar")
        #expect(try await coffer("sign", "-k", "k.key", "app.tar", in: folder).status == 0)
        let verified = try await coffer("verify", "--json", "-p", "k.pub", "app.tar.sig", in: folder)
        #expect(verified.status == 0 && verified.output.contains(#""ok":true"#), "\(verified.output)\(verified.standardError)")
        _ = try folder.write("tampered\n", to: "app.tar")
        let refused = try await coffer("verify", "--json", "-p", "k.pub", "app.tar.sig", in: folder)
        #expect(refused.status == 1 && refused.output.contains(#""ok":false"#) && refused.output.contains(#""reason""#), "\(refused.output)")

        let hashed = try await coffer("password", "hash", "--stdin", input: Array("correct horse\n".utf8), in: folder)
        let phc = hashed.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let good = try await coffer("password", "verify", "--json", "--stdin", phc, input: Array("correct horse\n".utf8), in: folder)
        #expect(good.status == 0 && good.output.contains(#""ok":true"#), "\(good.output)\(good.standardError)")
        let bad = try await coffer("password", "verify", "--json", "--stdin", phc, input: Array("wrong\n".utf8), in: folder)
        #expect(bad.status == 1 && bad.output.contains(#""ok":false"#) && !bad.output.contains("wrong"), "\(bad.output)")

        // A check's verdicts as JSON (issue 43: `hash -c --json` and `hmac --verify --json` were refused).
        _ = try folder.write("one\n", to: "one.txt")
        _ = try folder.write("two\n", to: "two.txt")
        let list = try await coffer("hash", "one.txt", "two.txt", in: folder)
        _ = try folder.write(list.output, to: "SUMS")
        let sums = try await coffer("hash", "-c", "--json", "SUMS", in: folder)
        #expect(sums.status == 0 && sums.lines.count == 2 && sums.lines.allSatisfy { $0.contains(#""ok":true"#) && $0.contains(#""algorithm":"sha256""#) },
                "\(sums.output)\(sums.standardError)")
        _ = try folder.write("changed\n", to: "two.txt")
        let changed = try await coffer("hash", "-c", "--json", "SUMS", in: folder)
        let verdicts = changed.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(changed.status == 1 && verdicts.count == 2, "\(changed.output)\(changed.standardError)")
        #expect(verdicts.last?["path"] as? String == "two.txt" && verdicts.last?["ok"] as? Bool == false && verdicts.last?["reason"] as? String == "mismatch")

        #expect(try await coffer("random", "32", "-o", "mac.key", in: folder).status == 0)
        let tag = try await coffer("hmac", "-k", "mac.key", "one.txt", in: folder)
        let tagHex = String(tag.output.prefix(64))
        let matched = try await coffer("hmac", "-k", "mac.key", "--verify", tagHex, "--json", "one.txt", in: folder)
        #expect(matched.status == 0 && matched.output.contains(#""ok":true"#) && matched.output.contains(#""path":"one.txt""#), "\(matched.output)\(matched.standardError)")
        let mismatched = try await coffer("hmac", "-k", "mac.key", "--verify", tagHex, "--json", "two.txt", in: folder)
        #expect(mismatched.status == 1 && mismatched.output.contains(#""ok":false"#), "\(mismatched.output)\(mismatched.standardError)")
        let realTag = try await coffer("hmac", "-k", "mac.key", "two.txt", in: folder)
        #expect(!mismatched.output.contains(String(realTag.output.prefix(64))), "a failed check never prints the tag that would have matched")

        try FileManager.default.createDirectory(atPath: folder.path("data"), withIntermediateDirectories: false)
        chmod(folder.path("data"), 0o755)
        let open = try await coffer("protect", "--check", "--json", folder.path("data"), in: folder)
        #expect(open.status == 1 && open.output.contains(#""protected":false"#), "\(open.output)\(open.standardError)")
    }

    /// Help's indented lines (examples, lists of routes and options) keep their shape: none is longer
    /// than the 80 columns help is wrapped to, so none is broken in two (issue 43: the tables of
    /// `encrypt --help` and `serve --help` ran past the edge and wrapped into the next column).
    @Test func indentedHelpLinesFitTheWidth() async throws {
        let dump = try await CommandRunner.run(try CommandRunner.cofferExecutable(), ["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.standardOutput)) as? [String: Any])
        var long: [String] = []
        func visit(_ command: [String: Any], _ path: String) {
            let discussion = command["discussion"] as? String ?? ""
            for line in discussion.split(separator: "\n") where line.hasPrefix(" ") && line.count > 80 {
                long.append("\(path): \(line.count) columns: \(line)")
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                visit(sub, path + " " + (sub["commandName"] as? String ?? "?"))
            }
        }
        visit(try #require(root["command"] as? [String: Any]), "coffer")
        #expect(long.isEmpty, "\(long.joined(separator: "\n"))")
    }

    /// `coffer --version` is the newest release CHANGELOG.md has a heading for (`## 2.0.0 — date`),
    /// the version a package names in `.package(url:from:)` and the tag it resolves.
    @Test func theVersionIsTheNewestReleaseInTheChangelog() async throws {
        let changelog = try String(contentsOfFile: MessageCheck.repository + "/CHANGELOG.md", encoding: .utf8)
        let newest = try #require(changelog.split(separator: "\n").lazy.compactMap { line -> String? in
            guard line.hasPrefix("## "), let match = line.firstMatch(of: #/^## (\d+\.\d+\.\d+) — \d{4}-\d{2}-\d{2}$/#) else { return nil }
            return String(match.1)
        }.first)
        let version = try await coffer("--version")
        #expect(version.output.hasPrefix(newest + " (commit "), "CHANGELOG's newest release is \(newest); the binary says \(version.output)")
    }

    /// docs/PERFORMANCE.md is a reference (issue 43, item 14: 1,545 lines of dated investigations): under
    /// 400 lines, the tables first, then the method and the history.
    @Test func thePerformanceDocumentIsAReference() throws {
        let text = try String(contentsOfFile: MessageCheck.repository + "/docs/PERFORMANCE.md", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count < 400, "\(lines.count) lines")
        let headings = lines.filter { $0.hasPrefix("## ") }.map(String.init)
        let method = try #require(headings.firstIndex { $0.hasPrefix("## Method") }, "\(headings)")
        let history = try #require(headings.firstIndex { $0.hasPrefix("## History") }, "\(headings)")
        #expect(method > 0 && history > method, "tables, then the method, then the history: \(headings)")
        #expect(!text.localizedCaseInsensitiveContains("session"))
    }

    @Test func oldSpellingsWorkWithOneDeprecationLine() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("random", "--raw", "--bytes", "32", "-o", "k.bin", in: folder).status == 0)
        _ = try folder.write("data\n", to: "data.txt")
        let old = try await coffer("encrypt", "--key-file", "k.bin", "-o", "old.coffer", "data.txt", in: folder)
        #expect(old.status == 0 && old.standardError.contains("--key-file is deprecated and goes away after this release; use -k/--key"), "\(old.standardError)")
        let new = try await coffer("encrypt", "-k", "k.bin", "-o", "new.coffer", "data.txt", in: folder)
        #expect(new.status == 0 && !new.standardError.contains("deprecated"), "\(new.standardError)")
        let opened = try await coffer("decrypt", "-k", "k.bin", "-o", "-", "old.coffer", in: folder)
        #expect(opened.output == "data\n")
        // -p still asks for a password (here there is no terminal to ask at), after saying -P.
        let asked = try await coffer("encrypt", "-p", "-o", "p.coffer", "data.txt", in: folder)
        #expect(asked.standardError.contains("-p is deprecated and goes away after this release; use -P/--passphrase"), "\(asked.standardError)")
        let gravatar = try await coffer("gravatar", "-r", "pg", "ada@example.com", in: folder)
        #expect(gravatar.status == 0 && gravatar.output.contains("r=pg") && gravatar.standardError.contains("use --rating"), "\(gravatar.output)\(gravatar.standardError)")
    }

    @Test func aMistypedCommandGetsASuggestion() async throws {
        let verb = try await coffer("verfy", "-p", "k.pub", "file.sig")
        #expect(verb.status == 2 && verb.standardError.contains("did you mean 'coffer verify'?"), "\(verb.standardError)")
        let nested = try await coffer("key", "shwo", "k.pub")
        #expect(nested.status == 2 && nested.standardError.contains("did you mean 'coffer key show'?"), "\(nested.standardError)")
        let flag = try await coffer("encrypt", "-k", "k.bin", "--pasword-file", "p", "x")
        #expect(flag.status == 2 && flag.standardError.contains("Did you mean '--password-file'?"), "\(flag.standardError)")
        // The misspelled option was the only credential, or a required one (issue 43: the answer was
        // "say how to open the file", or "Missing expected argument", and never named the typo).
        for arguments in [["decrypt", "--pasword-file", "p", "f"], ["encrypt", "--pasword-file", "p", "f"], ["sign", "--kee", "k", "f"]] {
            let typo = try await coffer(arguments)
            #expect(typo.status == 2 && typo.standardError.contains("Unknown option '\(arguments[1])'"), "\(arguments): \(typo.standardError)")
        }
        let suggested = try await coffer("decrypt", "--pasword-file", "p", "f")
        #expect(suggested.standardError.contains("Did you mean '--password-file'?"), "\(suggested.standardError)")
    }

    /// ssh-keygen's `-t rsa` and `-t ecdsa` make what ssh-keygen makes: RSA-3072 and P-256 (issue 43,
    /// item 7: "unknown key type").
    @Test func sshKeygenTypeNamesAreAccepted() async throws {
        let folder = try TemporaryDirectory()
        for (type, shown) in [("rsa", "RSA-3072"), ("ecdsa", "P-256")] {
            let made = try await coffer("key", "generate", "-t", type, "-o", "\(type).key", in: folder)
            #expect(made.status == 0, "\(made.standardError)")
            let shownKey = try await coffer("key", "show", "\(type).key", in: folder)
            #expect(shownKey.output.contains(shown), "\(type): \(shownKey.output)")
        }
    }

    /// `coffer help <command>` prints what `<command> --help` prints (issue 43: it answered "'coffer' has
    /// no command 'help'", exit 2, although every group's help says "See 'coffer help …'").
    @Test func helpNamesACommand() async throws {
        for words in [["hash"], ["key", "generate"], ["server", "keys"]] {
            let viaHelp = try await coffer(["help"] + words)
            let viaFlag = try await coffer(words + ["--help"])
            #expect(viaHelp.status == 0 && !viaHelp.output.isEmpty && viaHelp.output == viaFlag.output, "\(words): \(viaHelp.standardError)")
        }
        let root = try await coffer("help")
        #expect(root.status == 0 && root.output.contains("SUBCOMMANDS"), "\(root.standardError)")
        let mistyped = try await coffer("help", "verfy")
        #expect(mistyped.status == 2 && mistyped.standardError.contains("did you mean 'coffer verify'?"), "\(mistyped.standardError)")
    }

    /// A wrong password is a failed check (1) whether it opens a key file or a file (it was 2 for key files).
    @Test func aWrongPasswordExitsOneEverywhere() async throws {
        let folder = try TemporaryDirectory()
        let environment = ["PW": "right", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        #expect(try await coffer("key", "generate", "-o", "k.key", "--public", "k.pub", "--encrypt", "--password-env", "PW", environment: environment, in: folder).status == 0)
        #expect(try await coffer("key", "generate", "-t", "x25519", "-o", "x.key", "--public", "x.pub", "--encrypt", "--password-env", "PW", environment: environment, in: folder).status == 0)
        _ = try folder.write("data\n", to: "data.txt")
        #expect(try await coffer("encrypt", "-r", "x.pub", "-o", "data.coffer", "data.txt", in: folder).status == 0)
        #expect(try await coffer("encrypt", "--password-env", "PW", "-o", "pw.coffer", "data.txt", environment: environment, in: folder).status == 0)
        let wrong = ["PW": "wrong", "PATH": environment["PATH"] ?? ""]
        let results = [
            try await coffer("sign", "-k", "k.key", "--password-env", "PW", "data.txt", environment: wrong, in: folder),
            try await coffer("decrypt", "-i", "x.key", "--password-env", "PW", "-o", "-", "data.coffer", environment: wrong, in: folder),
            try await coffer("decrypt", "--password-env", "PW", "-o", "-", "pw.coffer", environment: wrong, in: folder),
        ]
        for result in results {
            #expect(result.status == 1, "\(result.standardError)")
        }
    }

    /// Every command teaches by example, and no example breaks when pasted: ArgumentParser wraps long
    /// lines at 80 columns without indenting the rest, so each example line must fit (long ones go on
    /// with a `\\` and an indented next line).
    @Test func everyCommandHasExamplesThatPasteWhole() async throws {
        let dump = try await CommandRunner.run(try CommandRunner.cofferExecutable(), ["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.standardOutput)) as? [String: Any])
        var leaves: [[String]] = []
        func walk(_ command: [String: Any], _ path: [String]) async {
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            if subcommands.isEmpty, !path.isEmpty, path != ["help"] { leaves.append(path) }
            for sub in subcommands { await walk(sub, path + [sub["commandName"] as? String ?? ""]) }
        }
        await walk(try #require(root["command"] as? [String: Any]), [])
        #expect(leaves.count >= 40)
        for path in leaves {
            let help = try await coffer(path + ["--help"]).lines
            guard let start = help.firstIndex(where: { $0 == "Examples:" || $0 == "Example:" }) else {
                Issue.record("coffer \(path.joined(separator: " ")) --help has no example")
                continue
            }
            for line in help[(start + 1)...].prefix(while: { !$0.isEmpty }) {
                #expect(line.hasPrefix("  ") && line.count <= 80, "coffer \(path.joined(separator: " ")): a wrapped example line: '\(line)'")
            }
        }
    }

    /// Messages read as English and name the flag that helps (issue 23: "a Ed25519 key"; an Apple key
    /// whose class cannot be told asked for it without naming --apple-key-class).
    @Test(.enabled(if: haveOpenSSL))
    func messagesReadAsEnglishAndNameTheFlag() async throws {
        let folder = try TemporaryDirectory()
        #expect(try await coffer("key", "generate", "-o", "ed.key", "--public", "ed.pub", in: folder).status == 0)
        _ = try folder.write("x\n", to: "x.txt")
        let recipient = try await coffer("encrypt", "-r", "ed.pub", "-o", "x.coffer", "x.txt", in: folder)
        #expect(recipient.standardError.contains("an Ed25519 key cannot be an encryption recipient"), "\(recipient.standardError)")
        #expect(try await tool("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "d.pem"], in: folder).status == 0)
        #expect(try await coffer("key", "convert", "d.pem", "--to", "apple", "-o", "d.bin", in: folder).status == 0)
        let ambiguous = try await coffer("key", "show", "d.bin", in: folder)
        #expect(ambiguous.status == 2 && ambiguous.standardError.contains("--apple-key-class private"), "\(ambiguous.standardError)")
        #expect(try await coffer("key", "show", "d.bin", "--apple-key-class", "private", in: folder).status == 0)
    }
}
