import CofferHummingbird
import Hummingbird

/// Turns an error a route throws — the database failing in the middle of a request — into `503
/// unavailable`, a problem document that names nothing internal (docs/openapi.yaml), instead of
/// Hummingbird's bare `500`. The error goes to the log for the operator. Errors that carry their own
/// HTTP answer (`HTTPResponseError`: an unknown route, a bad path parameter) pass through.
struct UnavailableOnFailure<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            // The type only: a database error's text can name the database and its credentials.
            context.logger.error("request failed", metadata: ["route": .string(context.endpointPath ?? "unmatched"), "error": .string(String(reflecting: type(of: error)))])
            return ProblemDetails(
                status: .serviceUnavailable, reason: "unavailable", detail: "the server could not complete the request; try again later"
            ).response()
        }
    }
}
