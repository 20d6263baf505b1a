/// The error every `CofferCore` API throws: a stable ``Code`` to branch on, a reason a person can act
/// on ("expected X, found Y"), and where in Coffer it was raised.
///
/// The description never contains the bytes being decoded, so an error can be logged even when the
/// input was a secret.
public struct CofferCoreError: CofferError {
    /// A stable, machine-readable classification. New codes may be added; existing ones keep their meaning.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`invalid-character`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// Text input contained a character the encoding does not allow (including any whitespace).
        public static let invalidCharacter = Code(rawValue: "invalid-character")
        /// Text input had a length that no valid encoding produces.
        public static let invalidLength = Code(rawValue: "invalid-length")
        /// Text input decoded, but is not the one canonical encoding of its bytes (stray padding bits).
        public static let nonCanonicalEncoding = Code(rawValue: "non-canonical-encoding")
        /// A file or folder does not exist.
        public static let fileNotFound = Code(rawValue: "file-not-found")
        /// The operating system refused access to a file or folder.
        public static let permissionDenied = Code(rawValue: "permission-denied")
        /// A path named a folder where a file was expected.
        public static let isDirectory = Code(rawValue: "is-directory")
        /// Reading or writing failed for another reason reported by the operating system.
        public static let ioFailure = Code(rawValue: "io-failure")
        /// An argument was outside the range the API accepts.
        public static let invalidArgument = Code(rawValue: "invalid-argument")
        /// A file that was to be created exists already (before the work, or by the time it was done).
        public static let fileExists = Code(rawValue: "file-exists")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human explanation, written to say what was expected and what was found.
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

extension CofferCoreError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: CofferCoreError.invalidCharacter)`, a caller `catch CofferCoreError.invalidCharacter`. Their reason
    // says only the code; code that throws gives a reason with `CofferCoreError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> CofferCoreError { CofferCoreError(code, comparisonReason(code)) }

    /// An error of code ``Code/invalidCharacter`` (`invalid-character`), for comparing with a thrown one.
    public static var invalidCharacter: CofferCoreError { matching(.invalidCharacter) }

    /// An error of code ``Code/invalidLength`` (`invalid-length`), for comparing with a thrown one.
    public static var invalidLength: CofferCoreError { matching(.invalidLength) }

    /// An error of code ``Code/nonCanonicalEncoding`` (`non-canonical-encoding`), for comparing with a thrown one.
    public static var nonCanonicalEncoding: CofferCoreError { matching(.nonCanonicalEncoding) }

    /// An error of code ``Code/fileNotFound`` (`file-not-found`), for comparing with a thrown one.
    public static var fileNotFound: CofferCoreError { matching(.fileNotFound) }

    /// An error of code ``Code/permissionDenied`` (`permission-denied`), for comparing with a thrown one.
    public static var permissionDenied: CofferCoreError { matching(.permissionDenied) }

    /// An error of code ``Code/isDirectory`` (`is-directory`), for comparing with a thrown one.
    public static var isDirectory: CofferCoreError { matching(.isDirectory) }

    /// An error of code ``Code/ioFailure`` (`io-failure`), for comparing with a thrown one.
    public static var ioFailure: CofferCoreError { matching(.ioFailure) }

    /// An error of code ``Code/invalidArgument`` (`invalid-argument`), for comparing with a thrown one.
    public static var invalidArgument: CofferCoreError { matching(.invalidArgument) }

    /// An error of code ``Code/fileExists`` (`file-exists`), for comparing with a thrown one.
    public static var fileExists: CofferCoreError { matching(.fileExists) }
}
