public import HTTPTypes
public import Hummingbird
import NIOCore

/// An RFC 9457 problem-details answer (`application/problem+json`), as every Coffer middleware and server
/// route writes one.
///
/// One scheme for every refusal: `type` is ``typePrefix`` followed by ``reason`` (for example
/// `https://coffer.dev/problems/replayed`), `reason` repeats the last segment for clients that match on
/// a short code, `status` repeats the HTTP status, and `detail` says what was wrong without echoing any
/// secret.
///
/// ```swift
/// ProblemDetails(status: .badRequest, reason: "invalid-email", detail: "email must be an address").response()
/// ```
public struct ProblemDetails: Sendable, Hashable {
    /// What every problem `type` URI starts with.
    public static let typePrefix = "https://coffer.dev/problems/"

    /// The HTTP status of the answer.
    public var status: HTTPResponse.Status
    /// A short, stable code in kebab case (`bad-signature`, `rate-limited`); the last segment of ``type``.
    public var reason: String
    /// A human-readable summary of the problem type.
    public var title: String
    /// What was wrong with this request.
    public var detail: String

    /// A problem; `title` defaults to the status's reason phrase.
    public init(status: HTTPResponse.Status, reason: String, title: String? = nil, detail: String) {
        self.status = status
        self.reason = reason
        self.title = title ?? status.reasonPhrase
        self.detail = detail
    }

    /// The problem type URI: ``typePrefix`` + ``reason``.
    public var type: String { Self.typePrefix + reason }

    /// The JSON body, with sorted keys.
    public var body: [UInt8] {
        Array(FlatJSONObject([
            "type": .string(type), "title": .string(title), "status": .integer(Int64(status.code)),
            "reason": .string(reason), "detail": .string(detail),
        ]).encoded)
    }

    /// The response: status, `Content-Type: application/problem+json`, any extra `headers`, and ``body``.
    public func response(headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/problem+json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// A problem is also an error a route throws (Hummingbird's `HTTPResponseError`): Hummingbird answers it
/// with ``response(headers:)``, the same bytes a route that returns the problem's response sends.
extension ProblemDetails: HTTPResponseError {
    /// ``response(headers:)``, whatever the request.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }
}
