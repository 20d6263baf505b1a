/// The error every `CofferCore` API throws: a stable ``Code`` to branch on, a reason a person can act
/// on ("expected X, found Y"), and where in Coffer it was raised.
///
/// The description never contains the bytes being decoded, so an error can be logged even when the
/// input was a secret.
public struct CofferCoreError: CofferError {
    /// A stable, machine-readable classification. New codes may be added; existing ones keep their meaning.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
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
