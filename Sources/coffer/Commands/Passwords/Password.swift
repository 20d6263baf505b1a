import ArgumentParser
import CofferCore
import CofferCrypto

struct PasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Hash passwords for storage (PHC strings) and check them.",
        discussion: """
            Hashes are PHC strings: scrypt N=2^17, r=8, p=1 by default ($scrypt$ln=17,r=8,p=1$salt$hash), or \
            PBKDF2-HMAC-SHA256 with at least 600,000 iterations. The password comes from a prompt without \
            echo, or from the first line of standard input with --stdin; never from the command line.

            Examples:
              coffer password hash > alice.phc
              printf '%s\\n' "$PASSWORD" | coffer password verify "$(cat alice.phc)" \\
                  --stdin && echo match
            """,
        subcommands: [PasswordHashCommand.self, PasswordVerifyCommand.self]
    )
}

/// The first line of standard input (without its line ending), or a prompt.
func readPassword(fromStandardInput: Bool, confirm: Bool) throws -> [UInt8] {
    if fromStandardInput {
        var bytes = try FileReader.standardInput().readAll(limit: 64 << 10) ?? []
        if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) { bytes.removeSubrange(newline...) }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw CommandFailure("standard input holds no password") }
        return bytes
    }
    let first = try TerminalPrompt.readSecret("Password: ")
    if confirm {
        let second = try TerminalPrompt.readSecret("Repeat the password: ")
        guard ConstantTime.equals(first, second) else { throw CommandFailure("the two passwords differ") }
    }
    return first
}

struct PasswordHashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hash", abstract: "Print the PHC hash of a password.", discussion: """
            Examples:
              coffer password hash > alice.phc
              printf '%s\\n' "$PASSWORD" | coffer password hash --stdin
            """)

    @Flag(name: .customLong("stdin"), help: "Read the password from the first line of standard input.") var fromStandardInput = false
    @Option(name: .shortAndLong, help: ArgumentHelp("scrypt (default) or pbkdf2.", valueName: "algorithm")) var algorithm = "scrypt"
    @Option(name: .customLong("scrypt-log-n"), help: "scrypt cost as a power of two (17 to 19).") var scryptLogN = 17
    @Option(help: "PBKDF2 iterations (600000 to 2000000).") var iterations = 600_000

    func run() throws {
        let chosen: PasswordKDF
        switch algorithm {
        case "scrypt": chosen = .scrypt(logN: scryptLogN, r: 8, p: 1)
        case "pbkdf2", "pbkdf2-sha256": chosen = .pbkdf2(iterations: iterations)
        default: throw ValidationError("unknown algorithm '\(algorithm)'; expected scrypt or pbkdf2")
        }
        var password = try readPassword(fromStandardInput: fromStandardInput, confirm: true)
        defer { SecretBytes.wipe(&password) }
        let hasher = PasswordHasher(policy: PasswordHashPolicy(kdf: chosen))
        do {
            Terminal.writeLine(try hasher.hash(passwordBytes: password).phcString)
        } catch {
            let hint = error.code == .costTooHigh
                ? "verification computes at most the cost of --scrypt-log-n 19 or 2,000,000 iterations by default, so no costlier hash is made"
                : "the minimum is scrypt --scrypt-log-n 17 or pbkdf2 --iterations 600000"
            throw CommandFailure(error.reason, hint: hint)
        }
    }
}

struct PasswordVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a password against a PHC hash: exit 0 on a match, 1 otherwise.",
        discussion: """
            Prints 'OK' or 'FAILED', and 'needs rehash' when the hash is weaker than today's policy (scrypt \
            N=2^17, PBKDF2 600,000 iterations). A hash cheaper than the floor — scrypt below N=2^14, PBKDF2 \
            below 100,000 iterations — is refused (exit 2), not trusted: anyone holding it can guess \
            passwords at millions per second. --legacy verifies such a record from an old system once, \
            so that it can be replaced with 'coffer password hash'. A hash costlier than the memory and \
            work of scrypt N=2^19, r=8, p=1, or than 2,000,000 PBKDF2 iterations, is refused before any \
            work (exit 2): a hostile record cannot stall the machine. --max-scrypt-log-n and \
            --max-iterations raise the limits for records you trust.

            Examples:
              coffer password verify "$(cat alice.phc)"
              printf '%s\\n' "$PASSWORD" | coffer password verify --json --stdin \\
                  "$(cat alice.phc)"
            """
    )

    @Argument(help: ArgumentHelp("The stored PHC string.", valueName: "phc")) var phc: String
    @Flag(name: .customLong("stdin"), help: "Read the password from the first line of standard input.") var fromStandardInput = false
    @Flag(help: "Verify a hash below the floor (to migrate it; its replacement is printed).") var legacy = false
    @Flag(help: "One JSON object: ok, needsRehash, replacement.") var json = false
    @Option(help: ArgumentHelp("Compute scrypt costs up to those of N=2^N, r=8, p=1 (default 19).", valueName: "n")) var maxScryptLogN = 19
    @Option(help: ArgumentHelp("Compute up to this many PBKDF2 iterations (default 2,000,000).", valueName: "n")) var maxIterations = 2_000_000

    func run() throws {
        let stored = try PasswordHash(phcString: phc)
        var password = try readPassword(fromStandardInput: fromStandardInput, confirm: false)
        defer { SecretBytes.wipe(&password) }
        let limits = PasswordKDFLimits(scryptUpToLogN: maxScryptLogN, pbkdf2Iterations: maxIterations)
        let hasher = PasswordHasher(policy: PasswordHashPolicy(kdf: PasswordHashPolicy.standard.kdf, limits: limits))
        let matches: Bool
        var replacement: PasswordHash?
        do {
            if legacy {
                let verification = try hasher.verifyInsecureLegacy(password: String(decoding: password, as: UTF8.self), against: .hash(stored))
                matches = verification.matches
                replacement = verification.replacement
            } else {
                matches = try hasher.verify(passwordBytes: password, against: stored)
            }
        } catch {
            switch error.code {
            case .weakParameters:
                throw CommandFailure(error.reason, hint: "if this record comes from an old system, pass --legacy to check it once and store the replacement it prints")
            case .costTooHigh:
                throw CommandFailure(error.reason, hint: "if you trust the record, raise the limit with --max-scrypt-log-n or --max-iterations; a hostile record can ask for any amount of work")
            default:
                throw error
            }
        }
        guard matches else {
            if json { try JSONLines.write(PasswordVerifyReport(ok: false)) } else { Terminal.writeLine("FAILED") }
            throw ExitCode(ExitStatus.checkFailed)
        }
        if json {
            try JSONLines.write(PasswordVerifyReport(ok: true, needsRehash: replacement != nil || hasher.needsRehash(stored), replacement: replacement?.phcString))
        } else if let replacement {
            Terminal.writeLine("OK (needs rehash: \(stored.kdf) is below the policy); store instead:")
            Terminal.writeLine(replacement.phcString)
        } else {
            Terminal.writeLine(hasher.needsRehash(stored) ? "OK (needs rehash: \(stored.kdf) is below the policy)" : "OK")
        }
    }
}

/// What `password verify --json` prints (never the password, never the stored hash).
struct PasswordVerifyReport: Encodable {
    let ok: Bool
    var needsRehash: Bool?
    var replacement: String?
}
