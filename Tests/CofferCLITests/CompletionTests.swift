import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// The completion scripts offer the values an option takes (issue 43, item 7: `-t`, `--cipher` and `-a`
/// completed file names). Bash's script is loaded into a real bash and asked, as the shell asks it when
/// the user presses Tab.
@Suite("Shell completions")
struct CompletionTests {
    @Test(arguments: [
        ("coffer encrypt --cipher ", "aes-gcm chacha"),
        ("coffer key generate -t ", "rsa2048 rsa3072 rsa4096 p256 p384 p521 ed25519 mldsa65 mldsa87 x25519 ecdsa rsa"),
        ("coffer key generate --type ml", "mldsa65 mldsa87"),
        ("coffer hash -a sha3-", "sha3-256 sha3-384 sha3-512"),
        ("coffer hmac -a ", "sha256 sha384 sha512 insecure-sha1"),
    ])
    func bashOffersAnOptionsValues(line: String, offered: String) async throws {
        let folder = try TemporaryDirectory()
        let script = try await coffer("--generate-completion-script", "bash")
        #expect(script.status == 0)
        _ = try folder.write(script.output, to: "coffer.bash")
        // What bash sets before it calls a completion function (COMP_WORDS up to the cursor), then the
        // words the function offers, one line.
        let ask = """
            source coffer.bash
            line=$1
            read -ra COMP_WORDS <<< "$line"
            [[ "$line" == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$line; COMP_POINT=${#line}; COMPREPLY=()
            _coffer coffer "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
            echo "${COMPREPLY[*]}"
            """
        let result = try await CommandRunner.run("bash", ["-c", ask, "bash", line], currentDirectory: folder.path)
        #expect(result.status == 0 && result.output == offered + "\n", "\(line): '\(result.output)' \(result.standardError)")
    }
}

/// The CLI speaks of commands and files, never of the library's API (issue 43, item 7: "open it with
/// create: true", "as Pin.description writes it" reached the terminal).
@Suite("Messages in the CLI's words")
struct CLIWordsTests {
    /// Swift spellings: a labelled argument (`create: true`), a member (`Pin.description`), a call
    /// (`readBytes()`, `create(password:)`).
    static var libraryWords: Regex<(Substring, Substring?, Substring?)> { #/\b[a-z]+[A-Za-z]*: (true|false|nil)\b|\b[A-Z][A-Za-z]+\.[a-z][A-Za-z]+\b|\b[a-z][A-Za-z]*\((\)|[a-z]+:\))/# }

    @Test(arguments: [
        ["keychain", "list", "--keychain", "missing.db"],
        ["keychain", "get", "--keychain", "missing.db", "--service", "s", "--account", "a"],
        ["pin", "check", "https://127.0.0.1:9/", "--pin", "abc"],
        ["request", "--pin", "abc", "https://127.0.0.1:9/"],
    ])
    func errorsNameNoLibraryAPI(arguments: [String]) async throws {
        let folder = try TemporaryDirectory()
        let result = try await coffer(arguments, in: folder)
        #expect(result.status != 0)
        let found = result.standardError.firstMatch(of: Self.libraryWords).map { String($0.output.0) }
        #expect(found == nil, "'\(found ?? "")' in: \(result.standardError)")
    }
}

/// Names a file or a list chose never drive the terminal: on a terminal (a pseudo-terminal here, from
/// util-linux's `script`), control characters in printed names are shown as `\xHH` (the outside attack
/// on issue 43 hid "FAILED" behind an escape sequence in a listed name).
@Suite("What reaches a terminal")
struct TerminalOutputTests {
    @Test(.enabled(if: CommandRunner.isAvailable("script")))
    func aListedNameCannotHideItsVerdict() async throws {
        let folder = try TemporaryDirectory()
        let name = "payload.bin: OK\u{1B}[8m"
        _ = try folder.write("x", to: name)
        _ = try folder.write(String(repeating: "0", count: 64) + "  " + name + "\n", to: "trick.txt")
        let command = "'\(try CommandRunner.cofferExecutable())' hash -c trick.txt"
        let result = try await CommandRunner.run("script", ["-qec", command, "/dev/null"], currentDirectory: folder.path)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("payload.bin: OK\\x1B[8m: FAILED") && !result.output.contains("\u{1B}[8m"), "\(result.output.debugDescription)")
        // Through a pipe the name is printed as it is, as sha256sum prints it.
        let piped = try await coffer(["hash", "-c", "trick.txt"], in: folder)
        #expect(piped.output.contains(name + ": FAILED"))
    }
}
