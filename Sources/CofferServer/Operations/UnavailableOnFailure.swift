import CofferHummingbird
import Hummingbird
import NIOHTTP1
import Logging

/// Turns an error a route throws — the database failing in the middle of a request — into `503
/// unavailable` with `Retry-After: 1`, a problem document that names nothing internal
/// (docs/openapi.yaml), instead of Hummingbird's bare `500`. The cause goes to the log for the operator
/// (``FailureCause``: the database's own message for a store failure, else the error's type). Errors that carry their own
/// HTTP answer (`HTTPResponseError`: an unknown route, a bad path parameter) pass through.
struct UnavailableOnFailure<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch let error as HTTPParserError {
            // The client's bytes, not the server: a body that does not parse (a malformed chunk).
            context.logger.info("request body did not parse", metadata: ["error": .string(String(describing: error))])
            return ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "the request's body could not be read as HTTP/1.1").response()
        } catch {
            // A store failure's own redacted cause, else the type only: an arbitrary error's text can name
            // the database and its credentials.
            let level: Logger.Level = (error as? StoreFailure)?.refusedWhileDown == true ? .notice : .error
            context.logger.log(level: level, "request failed", metadata: ["route": .string(context.endpointPath ?? "unmatched"), "cause": .string(FailureCause.of(error))])
            return ProblemDetails(
                status: .serviceUnavailable, reason: "unavailable", detail: "the server could not complete the request; try again later"
            ).response(headers: [.retryAfter: "1"])
        }
    }
}
