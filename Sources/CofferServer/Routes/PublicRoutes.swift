import CofferHummingbird
import Hummingbird

/// The routes anyone may call (docs/SERVER.md, "Public routes"): `GET /health`, `GET /ready` and
/// `POST /register` (limited per client address).
struct PublicRoutes: Sendable {
    let store: any RegistrationStore
    let metrics: ServerMetrics
    let registrations: AddressRateLimiter?
    let registration: RegisterRoute

    init(_ parts: RouteParts) {
        store = parts.store
        metrics = parts.metrics
        registrations = parts.registrations
        registration = RegisterRoute(parts)
    }

    /// The collection to add at the root.
    var routes: RouteCollection<HTTPSignatureContext> {
        let routes = RouteCollection(context: HTTPSignatureContext.self).add(middleware: ProblemAnswers())
        routes.get("health", use: health)
        routes.get("ready", use: ready)
        routes.post("register", use: register)
        return routes
    }

    /// `200 {"status": "ok"}` when the store answers, `503 {"status": "unavailable"}` otherwise.
    @Sendable func health(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        do {
            try await store.ping()
            return JSONAnswer.response(.ok, ["status": "ok"])
        } catch {
            return JSONAnswer.response(.serviceUnavailable, ["status": "unavailable"])
        }
    }

    /// `200 {"status": "ready", "schema"}` when the store answers with the schema this release needs;
    /// `503` with `migrating` (and the schema found) or `unavailable` otherwise.
    @Sendable func ready(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        do {
            try await store.ping()
            let version = try await store.schemaVersion()
            guard version >= RegistrationSQL.latestVersion else {
                return JSONAnswer.response(.serviceUnavailable, ["status": "migrating", "schema": .integer(Int64(version))])
            }
            return JSONAnswer.response(.ok, ["status": "ready", "schema": .integer(Int64(version))])
        } catch {
            return JSONAnswer.response(.serviceUnavailable, ["status": "unavailable"])
        }
    }

    /// `POST /register`, once the address is within its limit (``RegisterRoute``).
    @Sendable func register(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        if let wait = registrations?.take(RegistrationServer.clientAddress(context)) {
            metrics.rateLimited("registration")
            context.logger.notice("registration refused: rate limit", metadata: ["address": .string(RegistrationServer.clientAddress(context))])
            return RegistrationServer.tooManyRequests(retryAfter: wait, "too many registrations from this address")
        }
        return try await registration.respond(to: request, context: context)
    }
}
