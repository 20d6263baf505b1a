import CofferHummingbird
import Hummingbird
import HTTPTypes

/// Answers what no route takes with a problem document like every other refusal: a path the server
/// serves asked with another method is `405 method-not-allowed` with `Allow` listing the methods it
/// takes (RFC 9110 §15.5.6); any other path is `404 not-found`. (Hummingbird's own answer is a bare
/// `404` with no body, for both.)
///
/// Added to the router after every route, so it wraps only the router's not-found responder.
struct UnmatchedRoutes<Context: RequestContext>: RouterMiddleware {
    /// Each served path's segments (`{name}` for a captured one) and the methods it takes.
    let routes: [(segments: [Substring], methods: [HTTPRequest.Method])]

    /// The answer for a path the server does not have: also every answer the admin API gives anyone but
    /// an admin (``AdminOnly``).
    static func notFound() -> Response {
        ProblemDetails(status: .notFound, reason: "not-found", detail: "this server has no route at this path").response()
    }

    /// Over the router's routes; those under `/admin/` are left out, so that a method they do not take is
    /// `404` like any other request that does not show an admin's signature.
    init(_ descriptions: [Router<Context>.RouteDescription]) {
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
            let segments = request.uri.path.split(separator: "/")
            let allowed = routes.filter { Self.matches($0.segments, segments) }.flatMap(\.methods)
            guard !allowed.isEmpty else { return Self.notFound() }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            var response = ProblemDetails(
                status: .methodNotAllowed, reason: "method-not-allowed", detail: "this path takes \(names), not \(request.method.rawValue.prefix(16))"
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
