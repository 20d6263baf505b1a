public import CofferCore
import CofferCrypto

/// The error `CofferFormats` APIs throw: a stable ``Code``, a reason that says what was expected and
/// what was found, and (for line-based inputs) the line it concerns.
public struct CofferFormatsError: CofferError {
    /// A stable, machine-readable classification.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`malformed-checksum-line`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// A checksum-list line is not in GNU (`HEX  NAME`) or BSD (`ALGO (NAME) = HEX`) form.
        public static let malformedChecksumLine = Code(rawValue: "malformed-checksum-line")
        /// A checksum-list line names or implies a different algorithm than the one being checked.
        public static let algorithmMismatch = Code(rawValue: "algorithm-mismatch")
        /// An email address is empty or has no `@`.
        public static let invalidEmail = Code(rawValue: "invalid-email")
        /// Key bytes or text are not in any format Coffer reads, or are damaged.
        public static let malformedKey = Code(rawValue: "malformed-key")
        /// The key is well-formed but not what the operation needs (a public key where a private one is needed).
        public static let wrongKeyKind = Code(rawValue: "wrong-key-kind")
        /// An encrypted key needs a password and none was given.
        public static let passwordRequired = Code(rawValue: "password-required")
        /// The password does not decrypt the key (or the encrypted key is damaged; the two cannot be told apart).
        public static let wrongPassword = Code(rawValue: "wrong-password")
        /// A key-derivation cost is above the limit the reader enforces.
        public static let costTooHigh = Code(rawValue: "cost-too-high")
        /// The bytes read as more than one kind of key (Apple's 97-byte EC data: a P-384 public key or a
        /// P-256 private key); the caller must say which.
        public static let ambiguousKey = Code(rawValue: "ambiguous-key")
        /// The key uses an algorithm or option Coffer does not support.
        public static let unsupported = Code(rawValue: "unsupported")
        /// A signature file is malformed, truncated, or of an unknown version or algorithm.
        public static let malformedSignature = Code(rawValue: "malformed-signature")
        /// Encrypted input is malformed, truncated, or of an unknown version, before any secret was used.
        public static let malformedCiphertext = Code(rawValue: "malformed-ciphertext")
        /// The password or key is wrong, or the data was altered: deliberately one error.
        public static let authenticationFailed = Code(rawValue: "authentication-failed")
        /// No stanza of the file can be opened with the key given (another key or recipient).
        public static let noMatchingKey = Code(rawValue: "no-matching-key")
        /// A parameter is outside its documented range.
        public static let invalidArgument = Code(rawValue: "invalid-argument")
        /// An input or output is larger than the operation can take (a bound that protects memory).
        public static let tooLarge = Code(rawValue: "too-large")
        /// swift-crypto (BoringSSL) refused or failed an operation; its error is the ``CofferFormatsError/underlying`` error.
        public static let cryptographicFailure = Code(rawValue: "cryptographic-failure")
        /// The private key cannot be written: it is held by hardware (a token, the Secure Enclave,
        /// wrapped as `SigningKey(_:)` of a `CustomSigningKey`) and only signs there.
        public static let keyNotExportable = Code(rawValue: "key-not-exportable")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human explanation: what was expected, what was found.
    public let reason: String
    /// The 1-based line of the input this error concerns, when the input is line-based.
    public let line: Int?
    /// The Coffer source location that raised the error, for bug reports.
    public let location: String
    /// The lower layer's error that caused this one, when there is one.
    public let underlying: (any Error)?

    /// Creates an error. Library code passes its own location implicitly.
    public init(
        _ code: Code, _ reason: String, line: Int? = nil, underlying: (any Error)? = nil,
        fileID: StaticString = #fileID, sourceLine: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.line = line
        self.underlying = underlying
        self.location = "\(fileID):\(sourceLine)"
    }

    /// The reason, prefixed by `line N: ` when the error concerns a line.
    public var description: String {
        if let line { return "line \(line): \(reason)" }
        return reason
    }
}

extension CofferFormatsError {
    /// Runs `body` for an entry point whose failures are all of this module's kind: a
    /// `CofferFormatsError` passes through; a lower layer's error (`CofferCryptoError`, `CofferCoreError`,
    /// swift-crypto's) becomes one, with the original as ``underlying``.
    /// For file entry points, whose errors are of two Coffer types: a file that cannot be read or
    /// written passes through as `CofferCoreError` (its code says which: not found, permission denied, a
    /// full disk), ``CofferFormatsError`` passes through, and anything else is wrapped as in
    /// ``wrapping(_:_:)``.
    static func passingFileErrors<Result>(_ operation: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as CofferCoreError {
            throw error
        } catch {
            return try wrapping(operation) { () throws -> Result in throw error }
        }
    }

    static func wrapping<Result>(_ operation: String, _ body: () throws -> Result) throws(CofferFormatsError) -> Result {
        try wrapping(body) { error in
            switch error {
            case let error as CofferCryptoError:
                let code: Code = switch error.code {
                case .authenticationFailed: .authenticationFailed
                case .cryptographicFailure: .cryptographicFailure
                default: .invalidArgument
                }
                return CofferFormatsError(code, "\(operation): \(error.reason)", underlying: error)
            case let error as CofferCoreError:
                return CofferFormatsError(.invalidArgument, "\(operation): \(error.reason)", underlying: error)
            default:
                return CofferFormatsError(.cryptographicFailure, "\(operation) failed in swift-crypto", underlying: error)
            }
        }
    }
}

extension CofferFormatsError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: CofferFormatsError.malformedChecksumLine)`, a caller `catch CofferFormatsError.malformedChecksumLine`. Their reason
    // says only the code; code that throws gives a reason with `CofferFormatsError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> CofferFormatsError { CofferFormatsError(code, comparisonReason(code)) }

    /// An error of code ``Code/malformedChecksumLine`` (`malformed-checksum-line`), for comparing with a thrown one.
    public static var malformedChecksumLine: CofferFormatsError { matching(.malformedChecksumLine) }

    /// An error of code ``Code/algorithmMismatch`` (`algorithm-mismatch`), for comparing with a thrown one.
    public static var algorithmMismatch: CofferFormatsError { matching(.algorithmMismatch) }

    /// An error of code ``Code/invalidEmail`` (`invalid-email`), for comparing with a thrown one.
    public static var invalidEmail: CofferFormatsError { matching(.invalidEmail) }

    /// An error of code ``Code/malformedKey`` (`malformed-key`), for comparing with a thrown one.
    public static var malformedKey: CofferFormatsError { matching(.malformedKey) }

    /// An error of code ``Code/wrongKeyKind`` (`wrong-key-kind`), for comparing with a thrown one.
    public static var wrongKeyKind: CofferFormatsError { matching(.wrongKeyKind) }

    /// An error of code ``Code/passwordRequired`` (`password-required`), for comparing with a thrown one.
    public static var passwordRequired: CofferFormatsError { matching(.passwordRequired) }

    /// An error of code ``Code/wrongPassword`` (`wrong-password`), for comparing with a thrown one.
    public static var wrongPassword: CofferFormatsError { matching(.wrongPassword) }

    /// An error of code ``Code/costTooHigh`` (`cost-too-high`), for comparing with a thrown one.
    public static var costTooHigh: CofferFormatsError { matching(.costTooHigh) }

    /// An error of code ``Code/ambiguousKey`` (`ambiguous-key`), for comparing with a thrown one.
    public static var ambiguousKey: CofferFormatsError { matching(.ambiguousKey) }

    /// An error of code ``Code/unsupported`` (`unsupported`), for comparing with a thrown one.
    public static var unsupported: CofferFormatsError { matching(.unsupported) }

    /// An error of code ``Code/malformedSignature`` (`malformed-signature`), for comparing with a thrown one.
    public static var malformedSignature: CofferFormatsError { matching(.malformedSignature) }

    /// An error of code ``Code/malformedCiphertext`` (`malformed-ciphertext`), for comparing with a thrown one.
    public static var malformedCiphertext: CofferFormatsError { matching(.malformedCiphertext) }

    /// An error of code ``Code/authenticationFailed`` (`authentication-failed`), for comparing with a thrown one.
    public static var authenticationFailed: CofferFormatsError { matching(.authenticationFailed) }

    /// An error of code ``Code/noMatchingKey`` (`no-matching-key`), for comparing with a thrown one.
    public static var noMatchingKey: CofferFormatsError { matching(.noMatchingKey) }

    /// An error of code ``Code/invalidArgument`` (`invalid-argument`), for comparing with a thrown one.
    public static var invalidArgument: CofferFormatsError { matching(.invalidArgument) }

    /// An error of code ``Code/tooLarge`` (`too-large`), for comparing with a thrown one.
    public static var tooLarge: CofferFormatsError { matching(.tooLarge) }

    /// An error of code ``Code/cryptographicFailure`` (`cryptographic-failure`), for comparing with a thrown one.
    public static var cryptographicFailure: CofferFormatsError { matching(.cryptographicFailure) }

    /// An error of code ``Code/keyNotExportable`` (`key-not-exportable`), for comparing with a thrown one.
    public static var keyNotExportable: CofferFormatsError { matching(.keyNotExportable) }
}
