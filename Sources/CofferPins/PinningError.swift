public import CofferCore

/// The error the pinning APIs throw: a stable ``Code`` and a reason that says what was expected and what
/// was found. Reasons name hosts, pins and certificate subjects, which are public; never key material.
public struct PinningError: CofferError {
    /// A stable, machine-readable classification.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`malformed-pin`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// A pin was not the base64 of a 32-byte SHA-256 digest, or had an unknown prefix.
        public static let malformedPin = Code(rawValue: "malformed-pin")
        /// A host rule broke a policy rule: fewer than two pins without `allowingSinglePin`, an empty or
        /// duplicated host, or no chain position to match.
        public static let invalidPolicy = Code(rawValue: "invalid-policy")
        /// Bytes were not a certificate, public key or private key in PEM or DER.
        public static let malformedCertificate = Code(rawValue: "malformed-certificate")
        /// The served chain did not validate (chain or hostname), so pins were not even consulted.
        public static let chainNotTrusted = Code(rawValue: "chain-not-trusted")
        /// The chain validated but no certificate in the allowed positions matched a pin.
        public static let pinMismatch = Code(rawValue: "pin-mismatch")
        /// Connecting or the TLS handshake failed for a reason other than the two above.
        public static let connectionFailed = Code(rawValue: "connection-failed")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human explanation: what was expected, what was found, what to do.
    public let reason: String

    /// The Coffer source location that raised the error, for bug reports.
    public let location: String
    /// The lower layer's error that caused this one (a key store's, a TLS library's), when there is one.
    public let underlying: (any Error)?

    /// Creates an error. Library code passes its own location implicitly.
    public init(_ code: Code, _ reason: String, underlying: (any Error)? = nil, fileID: StaticString = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.location = "\(fileID):\(line)"
    }
}

extension PinningError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: PinningError.malformedPin)`, a caller `catch PinningError.malformedPin`. Their reason
    // says only the code; code that throws gives a reason with `PinningError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> PinningError { PinningError(code, comparisonReason(code)) }

    /// An error of code ``Code/malformedPin`` (`malformed-pin`), for comparing with a thrown one.
    public static var malformedPin: PinningError { matching(.malformedPin) }

    /// An error of code ``Code/invalidPolicy`` (`invalid-policy`), for comparing with a thrown one.
    public static var invalidPolicy: PinningError { matching(.invalidPolicy) }

    /// An error of code ``Code/malformedCertificate`` (`malformed-certificate`), for comparing with a thrown one.
    public static var malformedCertificate: PinningError { matching(.malformedCertificate) }

    /// An error of code ``Code/chainNotTrusted`` (`chain-not-trusted`), for comparing with a thrown one.
    public static var chainNotTrusted: PinningError { matching(.chainNotTrusted) }

    /// An error of code ``Code/pinMismatch`` (`pin-mismatch`), for comparing with a thrown one.
    public static var pinMismatch: PinningError { matching(.pinMismatch) }

    /// An error of code ``Code/connectionFailed`` (`connection-failed`), for comparing with a thrown one.
    public static var connectionFailed: PinningError { matching(.connectionFailed) }
}
