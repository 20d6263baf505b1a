import CofferHummingbird
import Hummingbird
import HTTPTypes

/// The routes anyone may call (docs/SERVER.md, "Public routes"): `GET /health`, `GET /ready` and
/// `POST /register` (limited per client address).
struct PublicRoutes: Sendable {
    let store: any RegistrationStore
    let metrics: ServerMetrics
    let registrations: AddressRateLimiter?
    let registration: RegisterRoute
    /// The master keys, whose wrapping key `/ready` checks the database for.
    let masterKeys: ServerMasterKeyring?
    /// How long `/ready` waits for the database.
    let readinessTimeout: Duration

    init(_ parts: RouteParts) {
        readinessTimeout = parts.options.readinessTimeout
        store = parts.store
        masterKeys = parts.options.masterKeys
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

    /// `200 {"status": "ok"}` while the process serves: liveness, which never asks the database (an
    /// orchestrator that restarted every instance during a database outage would make it worse).
    @Sendable func health(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        JSONAnswer.response(.ok, ["status": "ok"])
    }

    /// Readiness, answered within ``readinessTimeout``: `200 {"status": "ready", "schema"}` when the
    /// database answers with the schema this release needs and, with master keys, holds the fleet's
    /// wrapping key; `503` with `Retry-After` and `migrating` (and the schema found),
    /// `master-key-unavailable` or `unavailable` otherwise.
    @Sendable func ready(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let (store, keyring) = (store, masterKeys)
        do {
            if let answer = try await Deadline.run(within: readinessTimeout, { try await Self.readiness(of: store, holding: keyring) }) { return answer }
            context.logger.notice("not ready", metadata: ["cause": .string("the database did not answer within \(readinessTimeout)")])
        } catch {
            context.logger.notice("not ready", metadata: ["cause": .string(FailureCause.of(error))])
        }
        return Self.notReady(["status": "unavailable"])
    }

    /// `/ready`'s answer once the database answered.
    static func readiness(of store: any RegistrationStore, holding keyring: ServerMasterKeyring?) async throws -> Response {
        try await store.ping()
        let version = try await store.schemaVersion()
        guard version >= RegistrationSQL.latestVersion else {
            return notReady(["status": "migrating", "schema": .integer(Int64(version))])
        }
        if let keyring {
            // A read, never a write: an unauthenticated probe records nothing. A keyring the database
            // does not record (yet, or any more) is recorded by the instance's next write.
            let recorded: [MasterKeyRecord]
            do {
                recorded = try await store.masterKeyring()
            } catch let error as ServerConfigurationError where error.code == .invalidRecord {
                return notReady(["status": "master-key-unavailable", "schema": .integer(Int64(version))])
            }
            if let wrapping = recorded.first(where: { $0.state == .wrapping })?.keyID, keyring.key(id: wrapping) == nil {
                // The database answered: what is missing is the key it wraps with, not the database.
                return notReady(["status": "master-key-unavailable", "schema": .integer(Int64(version))])
            }
        }
        return JSONAnswer.response(.ok, ["status": "ready", "schema": .integer(Int64(version))])
    }

    static func notReady(_ fields: [String: FlatJSONValue]) -> Response {
        var response = JSONAnswer.response(.serviceUnavailable, fields)
        response.headers[.retryAfter] = "1"
        return response
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
