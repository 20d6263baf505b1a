import CofferHummingbird
import Foundation
import GRDB
import PostgresNIO

/// What a failing database call says in a log line or a message: PostgreSQL's own message and
/// SQLSTATE, or how the connection failed. Never a password, a statement's values or a file path of
/// the TLS library.
enum DatabaseFailure {
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as PSQLError:
            if let info = error.serverInfo, let state = info[.sqlState] {
                // A prepared statement the connection should hold, missing or already there: a pooler
                // that hands one client's statements to several server connections.
                let pooler = ["26000", "42P05"].contains(state)
                    ? "; a connection pooler in transaction mode that does not keep prepared statements? (docs/DEPLOYMENT.md)" : ""
                return "\(info[.message] ?? "an error") (SQLSTATE \(state))" + pooler
            }
            var text = "\(error.code)"
            if let underlying = error.underlying { text += ": " + describe(underlying) }
            return text
        case let error as StoreFailure:
            return error.reason
        case let error as ServerConfigurationError:
            return error.reason
        case is CancellationError:
            return "cancelled"
        default:
            // A TLS error's text ends in the TLS library's source file ("… at /path/handshake.cc:393").
            let text = String(describing: error)
            let cut = text.replacingOccurrences(of: #" at /[^\]\s]*"#, with: "", options: .regularExpression)
            return cut.clipped(toUTF8: 300)
        }
    }

    /// Whether `error` says the database cannot be reached (rather than that one statement failed):
    /// a connection that failed or closed, a server shutting down or refusing connections, a call that
    /// took longer than its bound.
    static func isOutage(_ error: any Error) -> Bool {
        switch error {
        case let error as StoreFailure:
            return error.isOutage
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] {
                // 08: connection exception; 57P01-57P03: shutting down, crashed, not accepting yet;
                // 53300: too many connections.
                return state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(state)
            }
            return [.connectionError, .serverClosedConnection, .uncleanShutdown, .poolClosed, .sslUnsupported, .failedToAddSSLHandler]
                .contains(error.code)
        default:
            return false
        }
    }
}

/// A store call that failed in the database, or was refused or abandoned because the database is not
/// answering: the route answers `503` with `Retry-After`, and the log says ``reason`` (PostgreSQL's
/// message and SQLSTATE, or how the connection failed; never a password or a statement's values).
struct StoreFailure: LoggableFailure, CustomStringConvertible {
    /// Why, for the log.
    let reason: String
    /// Whether the database cannot be reached (rather than one statement failing).
    let isOutage: Bool
    /// Whether the call was refused without trying, the database being down already (the outage
    /// itself was logged once, when it was found).
    var refusedWhileDown = false
    var logDescription: String { reason }
    var description: String { reason }

    /// The failure `error` stands for, when it is the database's: PostgreSQL's and SQLite's errors.
    static func wrapping(_ error: any Error) -> (any Error)? {
        guard error is PSQLError || error is DatabaseError else { return nil }
        return StoreFailure(reason: DatabaseFailure.describe(error), isOutage: DatabaseFailure.isOutage(error))
    }
}

/// Bounds every store call, and fails fast once the database is down.
///
/// Each call gets ``DatabaseLimits/callTimeout``; when it runs over, it fails as ``StoreFailure`` at
/// once and the call is cancelled (``Deadline``: the answer does not wait for the driver to stop).
/// A call that fails because the database cannot be reached (``DatabaseFailure/isOutage(_:)``) marks
/// the database down: from then on calls fail at once, without waiting, except one call a
/// second, which tries the database again; the first that succeeds marks it up. So during an outage
/// requests are answered `503` in microseconds instead of each waiting out its bound, and the server
/// recovers by itself when the database is back.
final class DatabaseGate: @unchecked Sendable {
    let limits: DatabaseLimits
    private let lock = NSLock()
    /// When the database was last found down; nil while it answers.
    private var downSince: ContinuousClock.Instant?
    /// When a call last went through to a down database to try it.
    private var lastTry: ContinuousClock.Instant?
    /// The cause of the latest outage, for the log.
    private(set) var lastFailure: String?
    /// Called when the state changes (true: up), for the log and the `coffer_database_up` gauge.
    let onChange: @Sendable (Bool, String?) -> Void
    /// Called with the number of calls under way each time it changes.
    let onCallsInFlight: @Sendable (Int) -> Void
    private var inFlight = 0

    init(limits: DatabaseLimits, onCallsInFlight: @escaping @Sendable (Int) -> Void = { _ in }, onChange: @escaping @Sendable (Bool, String?) -> Void = { _, _ in }) {
        self.limits = limits
        self.onChange = onChange
        self.onCallsInFlight = onCallsInFlight
    }

    /// Whether the database answered its last call.
    var isUp: Bool { lock.withLock { downSince == nil } }

    /// Runs `body` within the call bound, or refuses at once while the database is down.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let now = ContinuousClock.now
        let refused: String? = lock.withLock {
            guard downSince != nil else { return nil }
            if let lastTry, lastTry.duration(to: now) < .seconds(1) { return lastFailure ?? "the database is not answering" }
            lastTry = now
            return nil
        }
        if let refused { throw StoreFailure(reason: "the database is down (\(refused)); not tried again within a second", isOutage: true, refusedWhileDown: true) }
        onCallsInFlight(lock.withLock { inFlight += 1; return inFlight })
        defer { onCallsInFlight(lock.withLock { inFlight -= 1; return inFlight }) }
        do {
            let value = try await bounded(body)
            markUp()
            return value
        } catch {
            if DatabaseFailure.isOutage(error) { markDown(DatabaseFailure.describe(error)) }
            throw StoreFailure.wrapping(error) ?? error
        }
    }

    private func bounded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = limits.callTimeout
        // A value of an optional type comes back doubly wrapped; nil at the outer level is the deadline.
        guard let value = try await Deadline.run(within: timeout, { try await Wrapped(value: body()) }) else {
            throw StoreFailure(reason: "the database did not answer within \(timeout)", isOutage: true)
        }
        return value.value
    }

    private func markUp() {
        let changed = lock.withLock {
            defer { downSince = nil; lastTry = nil }
            return downSince != nil
        }
        if changed { onChange(true, nil) }
    }

    private func markDown(_ cause: String) {
        let changed = lock.withLock {
            defer {
                if downSince == nil { downSince = .now }
                lastTry = .now
                lastFailure = cause
            }
            return downSince == nil
        }
        if changed { onChange(false, cause) }
    }
}

/// A value carried through ``Deadline`` (whose nil means the deadline passed, even for a call whose
/// own value is optional).
private struct Wrapped<T: Sendable>: Sendable {
    let value: T
}
