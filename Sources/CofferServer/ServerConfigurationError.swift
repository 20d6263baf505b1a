public import CofferCore
public import CofferHummingbird

/// The error the registration server's setup and stores throw: a stable ``Code``, a reason that never
/// shows a database password, what to do about it when there is something to say, the throw site and
/// the driver's error underneath.
public struct ServerConfigurationError: CofferError {
    /// A stable classification.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`invalid-database-location`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// The database location (`sqlite:PATH`, a `postgres://` URL, or the default) cannot be used.
        public static let invalidDatabaseLocation = Code(rawValue: "invalid-database-location")
        /// The database did not answer, or refused to open.
        public static let databaseUnavailable = Code(rawValue: "database-unavailable")
        /// A stored record cannot be used (a key with neither a public key nor a secret).
        public static let invalidRecord = Code(rawValue: "invalid-record")
        /// The master key that wraps data keys is not 32 bytes, or cannot be read.
        public static let invalidMasterKey = Code(rawValue: "invalid-master-key")
        /// A master key file others may read (its mode is not 0600 or 0400).
        public static let exposedMasterKeyFile = Code(rawValue: "exposed-master-key-file")
        /// The master keys an instance holds do not include the one its database wraps with (or a
        /// keyring change asked for a key the database's records forbid).
        public static let masterKeyringMismatch = Code(rawValue: "master-keyring-mismatch")
        /// The key named (to promote, or to start a new keyring with) is recorded retired or abandoned:
        /// a key given up never wraps again.
        public static let masterKeyGivenUp = Code(rawValue: "master-key-given-up")
        /// A stored row is wrapped under a master key this instance does not hold, or does not open.
        public static let masterKeyUnavailable = Code(rawValue: "master-key-unavailable")
        /// A key record does not match its authentication tag, carries none where the database records a
        /// master keyring, or holds its secret in clear there: it was written outside Coffer.
        public static let unauthenticRecord = Code(rawValue: "unauthentic-record")
        /// An admin key cannot sign HTTP requests (RSA needs an algorithm; admin keys are EC or Ed25519).
        public static let invalidAdminKey = Code(rawValue: "invalid-admin-key")
        /// The TLS certificate or key cannot be read, or the key is not the certificate's.
        public static let invalidTLSCertificate = Code(rawValue: "invalid-tls-certificate")
        /// A trusted proxy is not an IP address or a CIDR range.
        public static let invalidProxyAddress = Code(rawValue: "invalid-proxy-address")
        /// The database's schema is newer than this release knows: a newer release migrated it.
        public static let schemaNewerThanServer = Code(rawValue: "schema-newer-than-server")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What is wrong; never a password.
    public let reason: String
    /// What to do about it, when there is something to say.
    public let hint: String?
    /// The Coffer source location that raised the error, for bug reports.
    public let location: String
    /// The driver's or the platform's error underneath, when there is one.
    public let underlying: (any Error)?

    /// Creates an error. Library code passes its own location implicitly.
    public init(
        _ code: Code, _ reason: String, hint: String? = nil, underlying: (any Error)? = nil,
        fileID: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.hint = hint
        self.underlying = underlying
        self.location = "\(fileID):\(line)"
    }
}

extension ServerConfigurationError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: ServerConfigurationError.invalidDatabaseLocation)`, a caller `catch ServerConfigurationError.invalidDatabaseLocation`. Their reason
    // says only the code; code that throws gives a reason with `ServerConfigurationError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> ServerConfigurationError { ServerConfigurationError(code, comparisonReason(code)) }

    /// An error of code ``Code/invalidDatabaseLocation`` (`invalid-database-location`), for comparing with a thrown one.
    public static var invalidDatabaseLocation: ServerConfigurationError { matching(.invalidDatabaseLocation) }

    /// An error of code ``Code/databaseUnavailable`` (`database-unavailable`), for comparing with a thrown one.
    public static var databaseUnavailable: ServerConfigurationError { matching(.databaseUnavailable) }

    /// An error of code ``Code/invalidRecord`` (`invalid-record`), for comparing with a thrown one.
    public static var invalidRecord: ServerConfigurationError { matching(.invalidRecord) }

    /// An error of code ``Code/invalidMasterKey`` (`invalid-master-key`), for comparing with a thrown one.
    public static var invalidMasterKey: ServerConfigurationError { matching(.invalidMasterKey) }

    /// An error of code ``Code/exposedMasterKeyFile`` (`exposed-master-key-file`), for comparing with a thrown one.
    public static var exposedMasterKeyFile: ServerConfigurationError { matching(.exposedMasterKeyFile) }

    /// An error of code ``Code/masterKeyringMismatch`` (`master-keyring-mismatch`), for comparing with a thrown one.
    public static var masterKeyringMismatch: ServerConfigurationError { matching(.masterKeyringMismatch) }

    /// An error of code ``Code/masterKeyGivenUp`` (`master-key-given-up`), for comparing with a thrown one.
    public static var masterKeyGivenUp: ServerConfigurationError { matching(.masterKeyGivenUp) }

    /// An error of code ``Code/masterKeyUnavailable`` (`master-key-unavailable`), for comparing with a thrown one.
    public static var masterKeyUnavailable: ServerConfigurationError { matching(.masterKeyUnavailable) }

    /// An error of code ``Code/unauthenticRecord`` (`unauthentic-record`), for comparing with a thrown one.
    public static var unauthenticRecord: ServerConfigurationError { matching(.unauthenticRecord) }
    /// An error of code ``Code/invalidAdminKey`` (`invalid-admin-key`), for comparing with a thrown one.
    public static var invalidAdminKey: ServerConfigurationError { matching(.invalidAdminKey) }

    /// An error of code ``Code/schemaNewerThanServer`` (`schema-newer-than-server`), for comparing with a thrown one.
    public static var schemaNewerThanServer: ServerConfigurationError { matching(.schemaNewerThanServer) }

    /// An error of code ``Code/invalidProxyAddress`` (`invalid-proxy-address`), for comparing with a thrown one.
    public static var invalidProxyAddress: ServerConfigurationError { matching(.invalidProxyAddress) }

    /// An error of code ``Code/invalidTLSCertificate`` (`invalid-tls-certificate`), for comparing with a thrown one.
    public static var invalidTLSCertificate: ServerConfigurationError { matching(.invalidTLSCertificate) }
}

extension ServerConfigurationError: LoggableFailure {
    /// The code and the reason, which never holds a password, a key or a row's values.
    public var logDescription: String { "\(code): \(reason)" }
}
