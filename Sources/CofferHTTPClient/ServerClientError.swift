public import CofferCore

/// What ``AdminClient`` and ``DataKeyClient`` throw: a stable code, a reason, and for a refusal the HTTP status and the
/// problem document's `reason` (`unknown-key`, `key-revoked`, `rate-limited`…).
public struct ServerClientError: CofferError {
    /// A stable classification.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`unreachable`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
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

extension ServerClientError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: ServerClientError.unreachable)`, a caller `catch ServerClientError.unreachable`. Their reason
    // says only the code; code that throws gives a reason with `ServerClientError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> ServerClientError { ServerClientError(code, comparisonReason(code)) }

    /// An error of code ``Code/unreachable`` (`unreachable`), for comparing with a thrown one.
    public static var unreachable: ServerClientError { matching(.unreachable) }

    /// An error of code ``Code/refused`` (`refused`), for comparing with a thrown one.
    public static var refused: ServerClientError { matching(.refused) }

    /// An error of code ``Code/unexpectedAnswer`` (`unexpected-answer`), for comparing with a thrown one.
    public static var unexpectedAnswer: ServerClientError { matching(.unexpectedAnswer) }

    /// An error of code ``Code/unsupportedClient`` (`unsupported-client`), for comparing with a thrown one.
    public static var unsupportedClient: ServerClientError { matching(.unsupportedClient) }
}
