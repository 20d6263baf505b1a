public import CofferHTTPSignatures
import Foundation
public import Hummingbird
import HTTPTypes
public import Metrics
public import NIOCore

/// A request context that can carry the signature a ``HTTPSignatureMiddleware`` verified.
public protocol HTTPSignatureRequestContext: RequestContext {
    /// The verified signature; set by the middleware before any route behind it runs.
    var verifiedSignature: HTTPVerifiedSignature? { get set }
}

/// The request context to use when signatures are all a server needs from its context.
public struct HTTPSignatureContext: HTTPSignatureRequestContext, RemoteAddressRequestContext {
    /// Hummingbird's own storage.
    public var coreContext: CoreRequestContextStorage
    /// The verified signature (see ``HTTPSignatureRequestContext``).
    public var verifiedSignature: HTTPVerifiedSignature?
    /// The address of the connection's peer (for per-client limits and logs); nil where there is none.
    public let remoteAddress: SocketAddress?

    /// A fresh context for one request.
    public init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Hummingbird 2 middleware that lets through only requests whose HTTP message signature (RFC 9421)
/// satisfies the verifier's policy, and puts the verified key identity into the context.
///
/// Refused requests get `401 Unauthorized` with a ``ProblemDetails`` body whose `reason` says why
/// (`missing-signature`, `unknown-key`, `expired`, `replayed`, `component-not-covered`,
/// `digest-mismatch`, `bad-signature`, …) and never echoes a secret; a failing key store or replay cache
/// gives `503` (`unavailable`), and a body over ``maximumBodySize`` gives `413` (`body-too-large`). The
/// body is read (up to ``maximumBodySize``) to check `Content-Digest` and stays available to the route.
///
/// ```swift
/// let router = Router(context: HTTPSignatureContext.self)
/// router.group("api").add(middleware: HTTPSignatureMiddleware(verifier: verifier))
///     .post("orders") { request, context in "signed by \(context.verifiedSignature!.keyID)" }
/// ```
public struct HTTPSignatureMiddleware<Context: HTTPSignatureRequestContext>: RouterMiddleware {
    /// The verifier and its policy.
    public let verifier: HTTPMessageVerifier
    /// The scheme clients sign in `@target-uri`/`@scheme`: `https` behind TLS or a TLS-terminating
    /// proxy, `http` otherwise. It replaces whatever scheme the request carries: an HTTP/1.1 request line
    /// does not say, and the server stack fills in a guess (Hummingbird says `http` on a TLS connection
    /// too), while the server knows what its clients reach.
    public var scheme: String
    /// The authority the client signed, when a proxy in front rewrites `Host`; nil to use the request's.
    public var authority: String?
    /// The largest body read for the digest check; a larger one gets `413`.
    public var maximumBodySize: Int
    /// Where refusals are counted: `coffer_signature_refusals_total{reason}` (swift-metrics; the
    /// bootstrapped system's factory by default).
    public var metricsFactory: any MetricsFactory
    /// Whether the route writes the replay record itself, in the same transaction as its own effect
    /// (`context.verifiedSignature.replayObligation`): a request then takes effect and is remembered,
    /// or neither, in one write instead of two. What the route does not take, the middleware writes
    /// once the route has answered, and a replay found then replaces the route's answer; so a route
    /// behind it may have no effect before it takes the record (Coffer's own routes only).
    package var defersReplayRecordToRoute = false

    /// A middleware; see the properties for what each parameter means.
    public init(
        verifier: HTTPMessageVerifier, scheme: String = "https", authority: String? = nil, maximumBodySize: Int = 1 << 20,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.verifier = verifier
        self.scheme = scheme
        self.authority = authority
        self.maximumBodySize = maximumBodySize
        self.metricsFactory = metricsFactory
    }

    private func countRefusal(_ reason: String) {
        Counter(label: "coffer_signature_refusals_total", dimensions: [("reason", reason)], factory: metricsFactory).increment()
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumBodySize)
        } catch is NIOTooManyBytesError {
            context.logger.info("signature refused", metadata: ["reason": "body-too-large"])
            countRefusal("body-too-large")
            return ProblemDetails(
                status: .contentTooLarge, reason: "body-too-large",
                detail: "the body is larger than \(maximumBodySize) bytes, the most this server reads to check its digest"
            ).response()
        }
        var head = request.head
        // Assigned only when different: a request head's pseudo-header fields are copied on each write.
        if head.scheme != scheme { head.scheme = scheme }
        if let authority, head.authority != authority { head.authority = authority }
        let body = buffer.readableBytes == 0 ? nil : Array(buffer.readableBytesView)
        var context = context
        guard defersReplayRecordToRoute else {
            do {
                let verified = try await verifier.verify(head, body: body)
                context.logger[metadataKey: "signature.keyid"] = .string(verified.keyID)
                context.verifiedSignature = consume verified
            } catch {
                return refusal(error, context: context)
            }
            return try await next(request, context)
        }
        let obligation: HTTPReplayObligation?
        do {
            let (verified, record) = try await verifier.verifyDeferringReplayRecord(head, body: body)
            obligation = record.map(HTTPReplayObligation.init)
            context.logger[metadataKey: "signature.keyid"] = .string(verified.keyID)
            // Moved into the context, then given its obligation there: no second copy of its strings.
            context.verifiedSignature = verified
            context.verifiedSignature?.replayObligation = obligation
        } catch {
            return refusal(error, context: context)
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPSignatureError where error.code == .replayed {
            // The route's own write found the record already there.
            return refusal(error, context: context)
        }
        if let record = obligation?.take(), let label = context.verifiedSignature?.label {
            do {
                try await verifier.recordFirstUse(record, label: label)
            } catch {
                return refusal(error, context: context)
            }
        }
        return response
    }

    /// Logs and counts a refusal and answers it (``problem(status:error:)``).
    private func refusal(_ error: HTTPSignatureError, context: Context) -> Response {
        let status: HTTPResponse.Status = error.code == .unavailable ? .serviceUnavailable : .unauthorized
        countRefusal(error.code.rawValue)
        if error.code == .unavailable {
            context.logger.error("signature check could not run", metadata: ["reason": .string(error.reason)])
        } else {
            context.logger.info("signature refused", metadata: ["reason": .string(error.code.rawValue)])
        }
        return Self.problem(status: status, error: error)
    }

    /// The ``ProblemDetails`` response for a refusal: `401` with `WWW-Authenticate: Signature`, or `503`
    /// when the check could not run (`error.code == .unavailable`, whose reason is not shown).
    public static func problem(status: HTTPResponse.Status, error: HTTPSignatureError) -> Response {
        let detail = error.code == .unavailable ? "the server could not check the signature; try again later" : error.reason
        let problem = ProblemDetails(
            status: status, reason: error.code.rawValue,
            title: status == .unauthorized ? "The request's signature was refused" : "The signature could not be checked",
            detail: detail
        )
        return problem.response(headers: status == .unauthorized ? [.wwwAuthenticate: "Signature"] : [:])
    }
}
