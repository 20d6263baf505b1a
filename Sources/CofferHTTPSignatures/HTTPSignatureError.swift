public import CofferCore

/// The error `CofferHTTPSignatures` throws: a stable ``Code`` and a reason that names the component or
/// parameter concerned, never a secret.
public struct HTTPSignatureError: CofferError {
    /// A stable classification.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`missing-component`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// A covered component has no value in the message (a missing header, a query parameter that
        /// is absent, `@authority` on a request without one).
        public static let missingComponent = Code(rawValue: "missing-component")
        /// A component or parameter is not one RFC 9421 defines, or is used where it does not apply.
        public static let invalidComponent = Code(rawValue: "invalid-component")
        /// A component is listed twice.
        public static let duplicateComponent = Code(rawValue: "duplicate-component")
        /// A signature parameter is unknown, of the wrong type, or missing where it is needed.
        public static let invalidParameter = Code(rawValue: "invalid-parameter")

        // Verification: each of these answers "why was this request refused" (the middleware's reason).

        /// The message has no `Signature-Input`/`Signature` pair (that the policy would consider).
        public static let missingSignature = Code(rawValue: "missing-signature")
        /// `Signature-Input`, `Signature` or `Content-Digest` cannot be parsed, or they do not match up.
        public static let malformedSignature = Code(rawValue: "malformed-signature")
        /// No key is registered under the signature's `keyid`.
        public static let unknownKey = Code(rawValue: "unknown-key")
        /// The `keyid` names a key that an admin disabled or revoked: it no longer signs anything.
        public static let keyRevoked = Code(rawValue: "key-revoked")
        /// The signature's `alg` names another algorithm than the key's.
        public static let algorithmMismatch = Code(rawValue: "algorithm-mismatch")
        /// The signature is past its `expires`, or older than the policy's maximum age.
        public static let expired = Code(rawValue: "expired")
        /// The signature's `created` lies in the future beyond the allowed clock skew.
        public static let createdInFuture = Code(rawValue: "created-in-future")
        /// The same signature (or nonce) was already accepted within its validity window.
        public static let replayed = Code(rawValue: "replayed")
        /// The signature does not cover a component the policy requires, or lacks a required parameter.
        public static let componentNotCovered = Code(rawValue: "component-not-covered")
        /// The signature's `tag` is not the one the policy expects.
        public static let tagMismatch = Code(rawValue: "tag-mismatch")
        /// The body does not match its `Content-Digest`.
        public static let digestMismatch = Code(rawValue: "digest-mismatch")
        /// The signature is not valid for this message under this key.
        public static let badSignature = Code(rawValue: "bad-signature")
        /// A key store or replay cache failed; the request could not be judged (a server error, not the
        /// client's fault).
        public static let unavailable = Code(rawValue: "unavailable")
        /// A raw HTTP message cannot be read (bad request line, header, length or limit).
        public static let malformedMessage = Code(rawValue: "malformed-message")
        /// A key cannot make or check signatures with the requested algorithm.
        public static let unsupportedAlgorithm = Code(rawValue: "unsupported-algorithm")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong.
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

extension HTTPSignatureError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: HTTPSignatureError.missingComponent)`, a caller `catch HTTPSignatureError.missingComponent`. Their reason
    // says only the code; code that throws gives a reason with `HTTPSignatureError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> HTTPSignatureError { HTTPSignatureError(code, comparisonReason(code)) }

    /// An error of code ``Code/missingComponent`` (`missing-component`), for comparing with a thrown one.
    public static var missingComponent: HTTPSignatureError { matching(.missingComponent) }

    /// An error of code ``Code/invalidComponent`` (`invalid-component`), for comparing with a thrown one.
    public static var invalidComponent: HTTPSignatureError { matching(.invalidComponent) }

    /// An error of code ``Code/duplicateComponent`` (`duplicate-component`), for comparing with a thrown one.
    public static var duplicateComponent: HTTPSignatureError { matching(.duplicateComponent) }

    /// An error of code ``Code/invalidParameter`` (`invalid-parameter`), for comparing with a thrown one.
    public static var invalidParameter: HTTPSignatureError { matching(.invalidParameter) }

    /// An error of code ``Code/missingSignature`` (`missing-signature`), for comparing with a thrown one.
    public static var missingSignature: HTTPSignatureError { matching(.missingSignature) }

    /// An error of code ``Code/malformedSignature`` (`malformed-signature`), for comparing with a thrown one.
    public static var malformedSignature: HTTPSignatureError { matching(.malformedSignature) }

    /// An error of code ``Code/unknownKey`` (`unknown-key`), for comparing with a thrown one.
    public static var unknownKey: HTTPSignatureError { matching(.unknownKey) }

    /// An error of code ``Code/keyRevoked`` (`key-revoked`), for comparing with a thrown one.
    public static var keyRevoked: HTTPSignatureError { matching(.keyRevoked) }

    /// An error of code ``Code/algorithmMismatch`` (`algorithm-mismatch`), for comparing with a thrown one.
    public static var algorithmMismatch: HTTPSignatureError { matching(.algorithmMismatch) }

    /// An error of code ``Code/expired`` (`expired`), for comparing with a thrown one.
    public static var expired: HTTPSignatureError { matching(.expired) }

    /// An error of code ``Code/createdInFuture`` (`created-in-future`), for comparing with a thrown one.
    public static var createdInFuture: HTTPSignatureError { matching(.createdInFuture) }

    /// An error of code ``Code/replayed`` (`replayed`), for comparing with a thrown one.
    public static var replayed: HTTPSignatureError { matching(.replayed) }

    /// An error of code ``Code/componentNotCovered`` (`component-not-covered`), for comparing with a thrown one.
    public static var componentNotCovered: HTTPSignatureError { matching(.componentNotCovered) }

    /// An error of code ``Code/tagMismatch`` (`tag-mismatch`), for comparing with a thrown one.
    public static var tagMismatch: HTTPSignatureError { matching(.tagMismatch) }

    /// An error of code ``Code/digestMismatch`` (`digest-mismatch`), for comparing with a thrown one.
    public static var digestMismatch: HTTPSignatureError { matching(.digestMismatch) }

    /// An error of code ``Code/badSignature`` (`bad-signature`), for comparing with a thrown one.
    public static var badSignature: HTTPSignatureError { matching(.badSignature) }

    /// An error of code ``Code/unavailable`` (`unavailable`), for comparing with a thrown one.
    public static var unavailable: HTTPSignatureError { matching(.unavailable) }

    /// An error of code ``Code/malformedMessage`` (`malformed-message`), for comparing with a thrown one.
    public static var malformedMessage: HTTPSignatureError { matching(.malformedMessage) }

    /// An error of code ``Code/unsupportedAlgorithm`` (`unsupported-algorithm`), for comparing with a thrown one.
    public static var unsupportedAlgorithm: HTTPSignatureError { matching(.unsupportedAlgorithm) }
}
