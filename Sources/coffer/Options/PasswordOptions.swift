import ArgumentParser
import CCofferSupport
import CofferCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a key's password comes from. Never argv: command lines show up in `ps` and shell history.
struct PasswordOptions: ParsableArguments {
    @Option(
        name: .customLong("password-file"),
        help: ArgumentHelp("Read the password from the first line of this file (as 'openssl -pass file:').", valueName: "file")
    )
    var passwordFile: String?

    @Option(name: .customLong("password-env"), help: ArgumentHelp("Read the password from this environment variable.", valueName: "var"))
    var passwordEnvironmentVariable: String?

    /// The same sources under other flags' names (`--new-password-file`, `--export-password-env`…).
    init(file: String?, environmentVariable: String?) {
        self.init()
        passwordFile = file
        passwordEnvironmentVariable = environmentVariable
    }

    init() {}

    /// No file and no variable: a password or PIN is asked at the terminal. For commands that read a
    /// key's password without options of their own (`PasswordOptions()` alone is only for the parser:
    /// its unparsed options cannot be read).
    static var prompting: PasswordOptions { PasswordOptions(file: nil, environmentVariable: nil) }

    func validate() throws {
        if passwordFile != nil && passwordEnvironmentVariable != nil {
            throw ValidationError("--password-file and --password-env are alternatives; pass one")
        }
    }

    /// Reads the password from the file or variable, or asks at the terminal without echo.
    /// - Parameter confirm: ask twice at the prompt (for a new password).
    func read(prompt: String, confirm: Bool = false) throws -> [UInt8] {
        if let passwordFile {
            let reader = try FileReader(path: passwordFile)
            // FileReader reports the mode the file had when opened; a password others can read is no secret.
            KeyFiles.warnIfExposed("password file", path: passwordFile, permissions: reader.permissions)
            var firstLine: [UInt8]?
            try reader.forEachLine(maximumLength: 4096) { line, number in
                if number == 1 { firstLine = Array(line.utf8) }
            }
            guard let line = firstLine, !line.isEmpty else {
                throw CommandFailure("the password file '\(passwordFile)' is empty")
            }
            var password = line
            if password.last == UInt8(ascii: "\r") { password.removeLast() }
            return password
        }
        if let name = passwordEnvironmentVariable {
            guard let value = getenv(name) else { throw CommandFailure("environment variable \(name) is not set") }
            let password = Array(String(cString: value).utf8)
            guard !password.isEmpty else { throw CommandFailure("environment variable \(name) is empty") }
            return password
        }
        let first = try TerminalPrompt.readSecret(prompt)
        if confirm {
            let second = try TerminalPrompt.readSecret("Repeat the password: ")
            guard ConstantTime.equals(first, second) else { throw CommandFailure("the two passwords differ; nothing was written") }
        }
        guard !first.isEmpty else { throw CommandFailure("an empty password protects nothing") }
        return first
    }
}

/// Asks for a secret on the controlling terminal with echo turned off.
enum TerminalPrompt {
    static func readSecret(_ prompt: String) throws -> [UInt8] {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            throw CommandFailure(
                "a password is needed and there is no terminal to ask on",
                hint: "pass --password-file FILE or --password-env VAR"
            )
        }
        defer { close(tty) }
        var original = termios()
        let canSilence = tcgetattr(tty, &original) == 0
        if canSilence {
            // Ctrl-C at the prompt must not leave the terminal without echo: the signal handlers put
            // these settings back.
            coffer_cleanup_set_terminal(tty)
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(tty, TCSAFLUSH, &silent)
        }
        defer {
            if canSilence {
                _ = tcsetattr(tty, TCSAFLUSH, &original)
                coffer_cleanup_set_terminal(-1)
            }
        }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(tty, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            if bytes.count < 4096 { bytes.append(byte) }
        }
        _ = write(tty, "\n", 1)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return bytes
    }
}
