public import CofferCore

/// The error `CofferCrypto` APIs throw for requests that cannot be honoured: a stable ``Code`` and a
/// reason that says what was expected and what was found. Reasons never contain key material.
///
/// Reading a file can also fail with `CofferCore`'s `CofferCoreError` (not found, permission denied).
public struct CofferCryptoError: CofferError {
    /// A stable, machine-readable classification.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`invalid-key`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// A key was empty, too short to be safe, or otherwise unusable.
        public static let invalidKey = Code(rawValue: "invalid-key")
        /// A requested tag length was below the safe minimum or above the algorithm's output.
        public static let invalidTagLength = Code(rawValue: "invalid-tag-length")
        /// An algorithm name was not recognised.
        public static let unknownAlgorithm = Code(rawValue: "unknown-algorithm")
        /// A sealed message did not authenticate.
        public static let authenticationFailed = Code(rawValue: "authentication-failed")
        /// A numeric argument (a byte count, a size) was out of range.
        public static let invalidArgument = Code(rawValue: "invalid-argument")
        /// Stored parameters are weaker than the caller's floor (a password hash too cheap to trust).
        public static let weakParameters = Code(rawValue: "weak-parameters")
        /// Parameters ask for more work than the caller's ``PasswordKDFLimits`` allow (a hostile header
        /// or stored record); nothing was computed.
        public static let costTooHigh = Code(rawValue: "cost-too-high")
        /// swift-crypto (BoringSSL) refused or failed an operation on valid-looking input; its error is
        /// the ``CofferCryptoError/underlying`` error.
        public static let cryptographicFailure = Code(rawValue: "cryptographic-failure")
        /// A key held outside Coffer (a ``CustomSigningKey``: a PKCS #11 token, the Secure Enclave) failed
        /// to sign (the token was removed, the PIN refused), or made a signature its own public key does
        /// not verify; the key's error is the ``CofferCryptoError/underlying`` error. Nothing was signed.
        public static let customKeyFailed = Code(rawValue: "custom-key-failed")
        /// The private key cannot be exported: it is held by hardware (a ``CustomSigningKey``) and only
        /// signs there.
        public static let keyNotExportable = Code(rawValue: "key-not-exportable")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human explanation: what was expected, what was found.
    public let reason: String
    /// The Coffer source location that raised the error, for bug reports.
    public let location: String
    /// The lower layer's error that caused this one, when there is one.
    public let underlying: (any Error)?

    /// Creates an error. Library code passes its own location implicitly.
    public init(_ code: Code, _ reason: String, underlying: (any Error)? = nil, fileID: StaticString = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.location = "\(fileID):\(line)"
    }
}

extension CofferCryptoError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: CofferCryptoError.invalidKey)`, a caller `catch CofferCryptoError.invalidKey`. Their reason
    // says only the code; code that throws gives a reason with `CofferCryptoError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> CofferCryptoError { CofferCryptoError(code, comparisonReason(code)) }

    /// An error of code ``Code/invalidKey`` (`invalid-key`), for comparing with a thrown one.
    public static var invalidKey: CofferCryptoError { matching(.invalidKey) }

    /// An error of code ``Code/invalidTagLength`` (`invalid-tag-length`), for comparing with a thrown one.
    public static var invalidTagLength: CofferCryptoError { matching(.invalidTagLength) }

    /// An error of code ``Code/unknownAlgorithm`` (`unknown-algorithm`), for comparing with a thrown one.
    public static var unknownAlgorithm: CofferCryptoError { matching(.unknownAlgorithm) }

    /// An error of code ``Code/authenticationFailed`` (`authentication-failed`), for comparing with a thrown one.
    public static var authenticationFailed: CofferCryptoError { matching(.authenticationFailed) }

    /// An error of code ``Code/invalidArgument`` (`invalid-argument`), for comparing with a thrown one.
    public static var invalidArgument: CofferCryptoError { matching(.invalidArgument) }

    /// An error of code ``Code/weakParameters`` (`weak-parameters`), for comparing with a thrown one.
    public static var weakParameters: CofferCryptoError { matching(.weakParameters) }

    /// An error of code ``Code/costTooHigh`` (`cost-too-high`), for comparing with a thrown one.
    public static var costTooHigh: CofferCryptoError { matching(.costTooHigh) }

    /// An error of code ``Code/cryptographicFailure`` (`cryptographic-failure`), for comparing with a thrown one.
    public static var cryptographicFailure: CofferCryptoError { matching(.cryptographicFailure) }

    /// An error of code ``Code/customKeyFailed`` (`custom-key-failed`), for comparing with a thrown one.
    public static var customKeyFailed: CofferCryptoError { matching(.customKeyFailed) }

    /// An error of code ``Code/keyNotExportable`` (`key-not-exportable`), for comparing with a thrown one.
    public static var keyNotExportable: CofferCryptoError { matching(.keyNotExportable) }
}
