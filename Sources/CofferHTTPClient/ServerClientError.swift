public import CofferCore

/// What ``AdminClient`` and ``DataKeyClient`` throw: a stable code, a reason, and for a refusal the HTTP status and the
/// problem document's `reason` (`unknown-key`, `key-revoked`, `rate-limited`…).
public struct ServerClientError: CofferError {
    /// A stable classification.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The request could not be sent or its answer not read.
        public static let unreachable = Code(rawValue: "unreachable")
        /// The server answered with an error status (see ``ServerClientError/problemReason``).
        public static let refused = Code(rawValue: "refused")
        /// The server answered 2xx with something that is not the admin API's JSON.
        public static let unexpectedAnswer = Code(rawValue: "unexpected-answer")
        /// The HTTP client's configuration could not be read, so a signed request could not be kept from
        /// following redirects; nothing was sent (`HTTPClient.execute(signing:body:with:timeout:)`).
        public static let unsupportedClient = Code(rawValue: "unsupported-client")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What happened.
    public let reason: String
    /// The HTTP status of a refusal.
    public let status: Int?
    /// The problem document's `reason` of a refusal.
    public let problemReason: String?
    /// The Coffer source location that raised the error.
    public let location: String
    /// The lower layer's error, when there is one.
    public let underlying: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code, _ reason: String, status: Int? = nil, problemReason: String? = nil, underlying: (any Error)? = nil,
        fileID: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.status = status
        self.problemReason = problemReason
        self.underlying = underlying
        self.location = "\(fileID):\(line)"
    }
}
