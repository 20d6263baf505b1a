/// An error whose ``logDescription`` may go into a log: it names its cause and nothing secret (no
/// password, no key, no statement's values).
///
/// When a signature check cannot run because its key store or replay cache failed,
/// ``HTTPSignatureMiddleware`` logs the cause from the failure's ``logDescription`` when it has one,
/// and only the error's type otherwise: an arbitrary error's text may name a database and its
/// credentials.
public protocol LoggableFailure: Error {
    /// The cause, safe to log.
    var logDescription: String { get }
}

/// What a log line may say of an error (see ``LoggableFailure``).
public enum FailureCause {
    /// `error`'s ``LoggableFailure/logDescription`` when it has one, else its type.
    public static func of(_ error: any Error) -> String {
        (error as? any LoggableFailure)?.logDescription ?? String(reflecting: type(of: error))
    }
}
