/// The error `CofferHTTPSignatures` throws: a stable ``Code`` and a reason that names the component or
/// parameter concerned, never a secret.
public struct HTTPSignatureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable classification.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A covered component has no value in the message (a missing header, a query parameter that
        /// is absent, `@authority` on a request without one).
        public static let missingComponent = Code(rawValue: "missing-component")
        /// A component or parameter is not one RFC 9421 defines, or is used where it does not apply.
        public static let invalidComponent = Code(rawValue: "invalid-component")
        /// A component is listed twice.
        public static let duplicateComponent = Code(rawValue: "duplicate-component")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
