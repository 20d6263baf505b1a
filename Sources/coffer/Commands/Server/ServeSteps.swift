import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferServer
import Foundation
import Logging

// `coffer serve`'s environment variables and its steps around serving: migrating only, closing the
// store, reading an admin key, the database's bounds.
extension Serve {
    /// The database's bounds the options give.
    var databaseLimits: DatabaseLimits {
        var limits = DatabaseLimits()
        limits.connectTimeout = .milliseconds(Int64(databaseConnectTimeout * 1000))
        limits.statementTimeout = .milliseconds(Int64(databaseStatementTimeout * 1000))
        limits.maximumConnections = databaseConnections
        limits.certificateAuthorityFile = databaseCA
        return limits
    }

    /// The options read from `COFFER_…` variables too (``EnvironmentOptions``): all but
    /// --abandon-master-keyring, which loses data and is only ever typed.
    static let environment = EnvironmentOptions(options: [
        ("host", .value), ("port", .value), ("database", .value), ("cert", .value), ("key", .value),
        ("public-scheme", .value), ("public-authority", .value), ("max-age", .value), ("header-timeout", .value),
        ("register-limit", .value), ("failure-limit", .value), ("rotate-limit", .value), ("encryption-key-limit", .value), ("sign-up-limit", .value),
        ("admin-key", .list), ("registration", .value), ("master-key-file", .list), ("data-key-scope", .value),
        ("metrics-port", .value), ("metrics-host", .value), ("key-cache-ms", .value), ("log-level", .value),
        ("log-format", .value), ("trusted-proxy", .list), ("database-connect-timeout", .value),
        ("database-statement-timeout", .value), ("database-connections", .value), ("database-ca", .value),
        ("readiness-timeout", .value), ("drain-timeout", .value), ("migrate-only", .flag), ("dry-run", .flag),
    ])

    /// `--migrate-only`: the migrations applied (each logged), or with `--dry-run` listed, and nothing served.
    func migrate(_ location: DatabaseLocation, limits: DatabaseLimits, logger: Logger) throws {
        let dryRun = dryRun
        try runBlocking {
            do {
                if dryRun {
                    let pending = try await location.pendingMigrations(logger: logger, limits: limits)
                    if pending.isEmpty { Terminal.writeOut("\(location): no migration to apply\n") }
                    for migration in pending { Terminal.writeOut("would apply migration \(migration.version): \(migration.title)\n") }
                } else {
                    let store = try await location.open(logger: logger, limits: limits)
                    let version = try await store.schemaVersion()
                    await Self.close(store, logger: logger)
                    Terminal.writeOut("\(location): schema at version \(version)\n")
                }
            } catch let error as ServerConfigurationError {
                throw CommandFailure("cannot migrate the database: \(error.reason)", hint: error.hint)
            }
        }
    }

    /// Closes the store, waiting at most two seconds (a pool still trying to reach a database that is
    /// gone must not hold the process after its drain).
    static func close(_ store: any RegistrationStore, logger: Logger) async {
        let closed = try? await Deadline.run(within: .seconds(2)) { () -> Bool in
            try? await store.close()
            return true
        }
        if closed != true { logger.warning("the database connections did not close within 2 s; ending anyway") }
    }

    /// An admin's public key from `path`; a private key is refused (an admin key file is copied to
    /// every server, so it must not be able to sign).
    static func adminKey(_ path: String) throws -> VerifyingKey {
        let refusal = CommandFailure(
            "--admin-key \(path) is a private key: the server takes only an admin's public key", hint: "give its public key: coffer key convert \(path) --to pem --public-only -o admin.pub"
        )
        let imported: ImportedKey
        do {
            imported = try ImportedKey(importing: try KeyFile(contentsOf: path).bytes)
        } catch let error as CofferFormatsError where error.code == .passwordRequired {
            throw refusal
        } catch let error as CofferFormatsError {
            throw CommandFailure("--admin-key \(path): \(error.reason)")
        }
        switch imported.key {
        case .signing: throw refusal
        case .verifying(let key): return key
        }
    }
}
