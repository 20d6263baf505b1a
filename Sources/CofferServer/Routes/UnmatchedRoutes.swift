import CofferHummingbird
import Hummingbird
import HTTPTypes

/// Answers what no route takes with a problem document like every other refusal: a path the server
/// serves asked with another method is `405 method-not-allowed` with `Allow` listing the methods it
/// takes (RFC 9110 §15.5.6); any other path is `404 not-found`. (Hummingbird's own answer is a bare
/// `404` with no body, for both.)
///
/// Each such answer counts as a failure toward the client address's failure limit, as a failed
/// signature check does: an admin path is refused with the same `404` whether the admin API is there
/// (a failed admin check, counted) or not (an unknown path), so the two must count the same, or the
/// limit's `429` on the next signed request would tell an outsider which.
///
/// Added to the router after every route, so it wraps only the router's not-found responder.
struct UnmatchedRoutes<Context: RequestContext>: RouterMiddleware {
    /// Each served path's segments (`{name}` for a captured one) and the methods it takes.
    let routes: [(segments: [Substring], methods: [HTTPRequest.Method])]
    /// Counts an unmatched request toward its address's failure limit; nil when there is no limit.
    let countFailure: (@Sendable (Context) -> Void)?

    /// The answer for a path the server does not have: also every answer the admin API gives anyone but
    /// an admin (``AdminOnly``).
    static func notFound() -> Response {
        ProblemDetails(status: .notFound, reason: "not-found", detail: "this server has no route at this path").response()
    }

    /// Over the router's routes; those under `/admin/` are left out, so that a method they do not take is
    /// `404` like any other request that does not show an admin's signature.
    init(_ descriptions: [Router<Context>.RouteDescription], countingFailure countFailure: (@Sendable (Context) -> Void)? = nil) {
        self.countFailure = countFailure
        var methods: [String: [HTTPRequest.Method]] = [:]
        for route in descriptions where route.path.description.split(separator: "/").first != "admin" {
            methods[route.path.description, default: []].append(route.method)
        }
        routes = methods.sorted { $0.key < $1.key }.map { path, methods in
            (path.split(separator: "/"), methods.sorted { $0.rawValue < $1.rawValue })
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            countFailure?(context)
            let segments = request.uri.path.split(separator: "/")
            let allowed = routes.filter { Self.matches($0.segments, segments) }.flatMap(\.methods)
            guard !allowed.isEmpty else { return Self.notFound() }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            var response = ProblemDetails(
                status: .methodNotAllowed, reason: "method-not-allowed", detail: "this path takes \(names), not \(request.method.rawValue.clipped(toUTF8: 16))"
            ).response()
            response.headers[.allow] = names
            return response
        }
    }

    /// Whether a request path's segments fit a route's (a `{name}` segment fits any one segment).
    static func matches(_ route: [Substring], _ path: [Substring]) -> Bool {
        route.count == path.count && zip(route, path).allSatisfy { template, segment in
            (template.hasPrefix("{") && template.hasSuffix("}")) || template == segment
        }
    }
}
