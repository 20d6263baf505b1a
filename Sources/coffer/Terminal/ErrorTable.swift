import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import CofferKeychain
import CofferPinning
import CofferPKCS11
import CofferServer

/// How the CLI reports an error a library threw and no command worded itself: one row per public error
/// type of every library module, giving the exit status and the `hint:` line (as age's CLI does, hints
/// are the CLI's: library errors carry only their code and reason). The message is the error's reason
/// (for `CofferFormatsError`, its description, which names the input's line); never where in Coffer it
/// was raised, which only `debugDescription` shows. An error of a type with no row (a networking
/// stack's, ArgumentParser's) goes to the root command's usage report.
///
/// `ErrorTableTests` (CofferCLITests) fails when a library gains a public error type without a row here.
enum ErrorTable {
    /// What to print and how to exit.
    struct Report: Equatable {
        let message: String
        let hint: String?
        let exitStatus: Int32
    }

    /// One library error type and how each of its errors is reported.
    struct Row: Sendable {
        let report: @Sendable (any Error) -> Report?

        init<E: Error>(_ type: E.Type, _ report: @escaping @Sendable (E) -> Report) {
            self.report = { ($0 as? E).map(report) }
        }
    }

    /// The report for `error`, or nil when its type has no row.
    static func report(for error: any Error) -> Report? {
        rows.lazy.compactMap { $0.report(error) }.first
    }

    /// A failure (check ran and failed) for the codes in `failed`, an input error for the others.
    private static func status<C: Hashable>(_ code: C, failedFor failed: Set<C>) -> Int32 {
        failed.contains(code) ? ExitStatus.checkFailed : ExitStatus.inputError
    }

    static let rows: [Row] = [
        Row(CofferCoreError.self) { error in
            Report(message: error.reason, hint: error.code == .fileExists ? "choose another name, or pass --force to replace it" : nil, exitStatus: ExitStatus.inputError)
        },
        Row(CofferCryptoError.self) { error in
            Report(message: error.reason, hint: nil, exitStatus: ExitStatus.inputError)
        },
        Row(CofferFormatsError.self) { error in
            Report(
                message: error.description, hint: error.code == .costTooHigh ? Hint.decryptionCost : nil,
                exitStatus: status(error.code, failedFor: [.wrongPassword, .authenticationFailed, .noMatchingKey])
            )
        },
        Row(KeychainError.self) { error in
            let hint: String? = switch error.code {
            case .interactionNotAllowed: "run 'coffer keychain unlock' first"
            case .noSuchKeychain: "create one with 'coffer keychain create'"
            case .keyringUnavailable: "each command will ask for the password instead"
            case .userWideKeyringNotAllowed: "start a session keyring first ('keyctl session'), or pass --user-keyring to accept the user-wide one"
            default: nil
            }
            return Report(message: error.reason, hint: hint, exitStatus: status(error.code, failedFor: [.authenticationFailed, .itemNotFound, .dataCorrupted]))
        },
        Row(PinningError.self) { error in
            Report(
                message: error.reason, hint: error.code == .malformedPin ? Hint.pinText : nil,
                exitStatus: status(error.code, failedFor: [.chainNotTrusted, .pinMismatch])
            )
        },
        Row(PKCS11Error.self) { error in
            // A wrong PIN is a failed check, as a wrong password is.
            Report(message: error.reason, hint: nil, exitStatus: status(error.code, failedFor: [.pinIncorrect]))
        },
        Row(HTTPSignatureError.self) { error in
            Report(message: error.reason, hint: nil, exitStatus: ExitStatus.inputError)
        },
        Row(InMemoryReplayCache.ReplayCacheFull.self) { error in
            Report(message: error.description, hint: nil, exitStatus: ExitStatus.inputError)
        },
        Row(ServerClientError.self) { error in
            Report(message: error.reason, hint: nil, exitStatus: ExitStatus.inputError)
        },
        Row(ServerConfigurationError.self) { error in
            // The server's configuration errors carry their own advice (a database URL's form, a key
            // file's mode), worded without flags.
            Report(message: error.description, hint: error.hint, exitStatus: ExitStatus.inputError)
        },
    ]
}

extension CommandFailure {
    /// The failure the table reports for `error` (a library error no command worded itself); an error
    /// of a type without a row keeps its description, as an input error.
    init(reporting error: any Error) {
        let report = ErrorTable.report(for: error) ?? ErrorTable.Report(message: "\(error)", hint: nil, exitStatus: ExitStatus.inputError)
        self.init(report.message, hint: report.hint, exitCode: report.exitStatus)
    }
}
