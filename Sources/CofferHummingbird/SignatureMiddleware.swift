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
    /// What a trusted proxy reported of the request (its client, and the scheme and authority the
    /// client signed), which the middleware verifies the signature against; nil (the default) for a
    /// request that did not come through one.
    var forwarded: ForwardedRequest? { get }
}

/// The request context to use when signatures are all a server needs from its context.
public struct HTTPSignatureContext: HTTPSignatureRequestContext, RemoteAddressRequestContext {
    /// Hummingbird's own storage.
    public var coreContext: CoreRequestContextStorage
    /// The verified signature (see ``HTTPSignatureRequestContext``).
    public var verifiedSignature: HTTPVerifiedSignature?
    /// The address of the connection's peer (for per-client limits and logs); nil where there is none.
    public let remoteAddress: SocketAddress?
    /// What a trusted proxy reported of the request; set by the server's proxy check, nil otherwise.
    public var forwarded: ForwardedRequest?

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
/// A `bad-signature` whose only fault is the scheme — the client signed `http://` where ``scheme`` is
/// `https`, or the reverse, as when a server behind a TLS-terminating proxy is told `http` — is still
/// refused, and its `detail` says that it would verify under the other scheme and names ``scheme``
/// (`HTTPMessageVerifier.otherSchemeThatVerifies(_:body:now:)`, checked only after the refusal).
///
/// ```swift
/// let router = Router(context: HTTPSignatureContext.self)
/// router.group("api").add(middleware: HTTPSignatureMiddleware(verifier: verifier))
///     .post("orders") { request, context in "signed by \(context.verifiedSignature?.keyID ?? "")" }
/// ```
public struct HTTPSignatureMiddleware<Context: HTTPSignatureRequestContext>: RouterMiddleware {
    /// The verifier and its policy.
    public let verifier: HTTPMessageVerifier
    /// The scheme clients sign in `@target-uri`/`@scheme`: `https` behind TLS or a TLS-terminating
    /// proxy, `http` otherwise. It replaces whatever scheme the request carries: an HTTP/1.1 request line
    /// does not say, and the server stack fills in a guess (Hummingbird says `http` on a TLS connection
    /// too), while the server knows what its clients reach. A request signed for the other of `http`
    /// and `https` is refused with a `detail` that says so and names this setting.
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
        let head = context.signedTarget(of: request.head, scheme: scheme, authority: authority)
        let body = buffer.readableBytes == 0 ? nil : Array(buffer.readableBytesView)
        var context = context
        guard defersReplayRecordToRoute else {
            do {
                let verified = try await verifier.verify(head, body: body)
                context.logger[metadataKey: "signature.keyid"] = .string(verified.keyID)
                context.verifiedSignature = consume verified
            } catch {
                return await refusal(error, context: context, head: head, body: body)
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
            return await refusal(error, context: context, head: head, body: body)
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPSignatureError where error.code == .replayed {
            // The route's own write found the record already there.
            return await refusal(error, context: context)
        }
        if let record = obligation?.take(), let label = context.verifiedSignature?.label {
            do {
                try await verifier.recordFirstUse(record, label: label)
            } catch {
                return await refusal(error, context: context)
            }
        }
        return response
    }

    /// Logs and counts a refusal and answers it (``problem(status:error:)``). A `bad-signature` for `head`
    /// that the other scheme would verify says so (see ``schemeMismatch(_:expected:signed:setting:)``).
    private func refusal(_ error: HTTPSignatureError, context: Context, head: HTTPRequest? = nil, body: [UInt8]? = nil) async -> Response {
        var error = error
        // Only after a refusal, and only for bad-signature: a success never pays for this check.
        var signedScheme: String?
        if error.code == .badSignature, let head {
            context.logger.debug("bad-signature: the target the server rebuilt", metadata: ["target_uri": .string(head.rebuiltTargetURI)])
            if let signed = await verifier.otherSchemeThatVerifies(head, body: body) {
                error = Self.schemeMismatch(error, expected: head.scheme ?? scheme, signed: signed)
                signedScheme = signed
            }
        }
        let status: HTTPResponse.Status = error.code == .unavailable ? .serviceUnavailable : .unauthorized
        countRefusal(error.code.rawValue)
        if error.code == .unavailable {
            let cause = error.underlying.map(FailureCause.of) ?? error.reason
            context.logger.error("signature check could not run", metadata: ["reason": .string(error.reason), "cause": .string(cause)])
        } else if let signedScheme {
            context.logger.info("signature refused", metadata: ["reason": .string(error.code.rawValue), "signed_scheme": .string(signedScheme)])
        } else {
            context.logger.info("signature refused", metadata: ["reason": .string(error.code.rawValue)])
        }
        return Self.problem(status: status, error: error)
    }

    /// The `bad-signature` refusal of a request that would verify under the `signed` scheme instead of
    /// the `expected` one: the same code, and a reason that says which scheme the client signed and that
    /// the server's public scheme is what to check. It names no signature or key: with several
    /// signatures, the one that failed first need not be the one that verifies under the other scheme.
    /// The request stays refused.
    package static func schemeMismatch(_ error: HTTPSignatureError, expected: String, signed: String) -> HTTPSignatureError {
        HTTPSignatureError(
            error.code,
            "the request's signature does not verify as a request to \(expected)://, and one it carries verifies as a request to \(signed)://: the client signed the scheme \(signed) and this server expects \(expected). Configure the server with the scheme clients reach it with (https behind a TLS-terminating proxy), or have clients sign that one",
            underlying: error.underlying
        )
    }

    /// The ``ProblemDetails`` response for a refusal: `401` with `WWW-Authenticate: Signature`, or `503`
    /// with `Retry-After: 1` when the check could not run (`error.code == .unavailable`, whose reason is
    /// not shown).
    public static func problem(status: HTTPResponse.Status, error: HTTPSignatureError) -> Response {
        let detail = error.code == .unavailable ? "the server could not check the signature; try again later" : error.reason
        let problem = ProblemDetails(
            status: status, reason: error.code.rawValue,
            title: status == .unauthorized ? "The request's signature was refused" : "The signature could not be checked",
            detail: detail
        )
        return problem.response(headers: status == .unauthorized ? [.wwwAuthenticate: "Signature"] : [.retryAfter: "1"])
    }
}
