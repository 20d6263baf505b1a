import ArgumentParser
import CCofferSupport
import CofferCore
import CofferCrypto
import CofferFormats
import CofferKeychain
import CofferPinning

@main
struct Coffer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "The everyday security kit: digests, MACs, signatures, encryption — with safe defaults.",
        discussion: """
            Every command reads files or standard input ('-') and writes to standard output, so it \
            composes with pipes. Errors go to standard error as 'coffer: error: …'.

            Exit status: 0 success; 1 a check ran and failed (a digest, tag or signature did not \
            match; a wrong password or key, or altered data, on decryption); \
            2 a usage or input error (bad flag, unreadable file, malformed input).

            Secrets never come from the command line: keys are read from files, passwords from a \
            prompt without echo, a file (--password-file) or an environment variable (--password-env).
            """,
        version: CofferVersion.current,
        subcommands: [Hash.self, HMACCommand.self, KeyCommand.self, Sign.self, Verify.self, Encrypt.self, Decrypt.self, Inspect.self, KDFCommand.self, Random.self, GravatarCommand.self, KeychainCommand.self, PasswordCommand.self, HTTPCommand.self, RequestCommand.self, Serve.self, PinCommand.self, Protect.self, Speed.self]
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
            var command = try parseAsRoot()
            try command.run()
            Terminal.flushStandardOutput()
        } catch let failure as CommandFailure {
            Terminal.flushStandardOutput()
            Terminal.reportError(failure.message, hint: failure.hint)
            Terminal.exit(failure.exitCode)
        } catch let code as ExitCode {
            Terminal.flushStandardOutput()
            Terminal.exit(code.rawValue)
        } catch let error as CofferCoreError {
            Terminal.flushStandardOutput()
            Terminal.reportError(error.reason)
            Terminal.exit(ExitStatus.inputError)
        } catch let error as CofferCryptoError {
            Terminal.flushStandardOutput()
            Terminal.reportError(error.reason)
            Terminal.exit(ExitStatus.inputError)
        } catch let error as KeychainError {
            Terminal.flushStandardOutput()
            let failures: Set<KeychainError.Code> = [KeychainError.Code.authenticationFailed, KeychainError.Code.itemNotFound, KeychainError.Code.dataCorrupted]
            let locked = error.code == KeychainError.Code.interactionNotAllowed
            Terminal.reportError(error.reason, hint: locked ? "run 'coffer keychain unlock' first" : nil)
            Terminal.exit(failures.contains(error.code) ? ExitStatus.checkFailed : ExitStatus.inputError)
        } catch let error as PinningError {
            Terminal.flushStandardOutput()
            Terminal.reportError(error.reason)
            let failed: Set<PinningError.Code> = [PinningError.Code.chainNotTrusted, PinningError.Code.pinMismatch]
            Terminal.exit(failed.contains(error.code) ? ExitStatus.checkFailed : ExitStatus.inputError)
        } catch let error as CofferFormatsError {
            Terminal.flushStandardOutput()
            Terminal.reportError(error.description)
            Terminal.exit(ExitStatus.inputError)
        } catch {
            Terminal.flushStandardOutput()
            if exitCode(for: error) == .success {
                // --help and --version: ArgumentParser's text, on standard output.
                print(fullMessage(for: error))
                Terminal.exit(0)
            }
            let message = self.message(for: error).trimmingTrailingWhitespace
            Terminal.reportError(message, hint: "run '\(helpCommand(for: error))' for usage")
            Terminal.exit(ExitStatus.inputError)
        }
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
    static let current = "0.1.0"
}

/// Coffer's exit statuses.
enum ExitStatus {
    /// A check ran and did not pass: a digest or tag mismatch.
    static let checkFailed: Int32 = 1
    /// A usage error or unusable input: bad flags, unreadable files, malformed data.
    static let inputError: Int32 = 2
}
