import ArgumentParser
import CofferCore
import CofferServer
import Foundation
import Logging

/// The database and master keys every `master-key` command (and `coffer serve`) reads.
struct MasterKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A SQLite file (a path, or sqlite:PATH) or postgres://… (default: COFFER_DATABASE, else the SQLite file in the XDG data folder).", valueName: "url"))
    var database: String?

    @Option(name: .customLong("master-key-file"), help: ArgumentHelp("A master key file: 32 raw bytes, mode 0600 or 0400 (repeatable). Or COFFER_MASTER_KEY (base64).", valueName: "file"))
    var masterKeyFiles: [String] = []

    /// The keyring these options name; nil for none.
    func keyring() throws -> ServerMasterKeyring? {
        try MasterKeyFiles.keyring(files: masterKeyFiles)
    }

    /// Opens the database (applying migrations, as `coffer serve` does), runs `body`, closes it.
    func withStore<Value: Sendable>(_ body: @escaping @Sendable (any RegistrationStore) async throws -> Value) throws -> Value {
        let location: DatabaseLocation
        do {
            location = try DatabaseLocation(database ?? ProcessInfo.processInfo.environment["COFFER_DATABASE"])
        } catch let error as ServerConfigurationError {
            throw CommandFailure(reporting: error)
        }
        return try runBlocking {
            let store: any RegistrationStore
            do {
                // The command reports what it did itself; the database driver's notes at info level
                // (a pooled connection closed as the command ends) are not the operator's concern.
                var logger = Logger(label: "coffer.master-key")
                logger.logLevel = .warning
                store = try await location.open(logger: logger)
            } catch let error as ServerConfigurationError {
                throw CommandFailure("cannot open the database: \(error.reason)", hint: error.hint)
            }
            do {
                let value = try await body(store)
                try await store.close()
                return value
            } catch {
                try? await store.close()
                throw MasterKeyFiles.failure(error)
            }
        }
    }
}

/// Reading master keys, and saying what went wrong in the CLI's words.
enum MasterKeyFiles {
    /// The keys in `files` (in order) and in COFFER_MASTER_KEY (one base64 key, after the files); nil
    /// for none.
    static func keyring(files: [String]) throws -> ServerMasterKeyring? {
        do throws(ServerConfigurationError) {
            var keys: [ServerMasterKey] = []
            for file in files { keys.append(try ServerMasterKey(contentsOf: file)) }
            if let text = ProcessInfo.processInfo.environment["COFFER_MASTER_KEY"] {
                keys.append(try ServerMasterKey(base64Encoded: text))
            }
            return keys.isEmpty ? nil : try ServerMasterKeyring(keys)
        } catch {
            throw CommandFailure(error.reason, hint: error.hint ?? "make one with 'coffer random --raw --output master.key', and keep it out of the database")
        }
    }

    /// A library error as the CLI reports it: the keyring's refusals with the flags that answer them.
    static func failure(_ error: any Error, holdingKeys: Bool = true) -> any Error {
        guard let error = error as? ServerConfigurationError else { return error }
        switch error.code {
        case .masterKeyringMismatch where !holdingKeys:
            return CommandFailure(error.reason, hint: "give it --master-key-file with that key")
        case .masterKeyringMismatch:
            return CommandFailure(
                error.reason,
                hint: "give it --master-key-file with the key the database wraps with ('coffer server master-key status --master-key-file FILE' shows a file's id); only if that key is lost for good, 'coffer serve --abandon-master-keyring' starts a new keyring and loses every data key and HMAC secret wrapped under the old one"
            )
        default:
            return CommandFailure(reporting: error)
        }
    }
}
