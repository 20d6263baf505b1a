public import CofferCore

/// The error the pinning APIs throw: a stable ``Code`` and a reason that says what was expected and what
/// was found. Reasons name hosts, pins and certificate subjects, which are public; never key material.
public struct PinningError: CofferError {
    /// A stable, machine-readable classification.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
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
