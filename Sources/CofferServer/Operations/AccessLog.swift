import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes
import Logging

/// The first thing every request meets: it believes a trusted proxy's forwarded headers
/// (``TrustedProxies``), gives the request its id (the client's `X-Request-ID` when it is a plain
/// token, else a new one) in every log line and in the answer's `X-Request-ID`, and when the answer
/// is ready writes one access line (route, status, duration, request id, client address, and the key
/// id of a verified signature) and counts it (`coffer_requests_total`, `coffer_request_duration_seconds`).
struct AccessLog: RouterMiddleware {
    typealias Context = HTTPSignatureContext
    let metrics: ServerMetrics
    let proxies: TrustedProxies
    /// Whether the operator set the authority clients sign (`--public-authority`).
    let pinnedAuthority: Bool
    /// Whether the operator set the scheme clients sign (`--public-scheme`).
    let pinnedScheme: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        let peer = TrustedProxies.canonical(context.remoteAddress?.ipAddress ?? "unknown")
        if !proxies.isEmpty, var forwarded = proxies.forwarded(by: peer, fields: request.headers) {
            // What the operator set is not the client's to change: a pinned authority or scheme wins
            // over the proxy's report of what the client reached (nginx's $http_host is the client's Host).
            if pinnedAuthority { forwarded.authority = nil }
            if pinnedScheme { forwarded.scheme = nil }
            context.forwarded = forwarded
        }
        let id = Self.requestID(request.headers[.xRequestID])
        context.logger[metadataKey: "hb.request.id"] = nil
        context.logger[metadataKey: "request.id"] = .string(id)
        let record = AccessRecord()
        let client = context.forwarded?.clientAddress ?? peer
        let status: Int
        var response: Response
        do {
            response = try await AccessRecord.$current.withValue(record) { try await next(request, context) }
            status = Int(response.status.code)
        } catch let error as any HTTPResponseError {
            // Answered here rather than by Hummingbird, so that the answer carries its request id too.
            response = try error.response(from: request, context: context)
            status = Int(response.status.code)
        } catch {
            log(request, context: context, status: 500, start: start, client: client, keyID: record.keyID)
            throw error
        }
        response.headers[.xRequestID] = id
        log(request, context: context, status: status, start: start, client: client, keyID: record.keyID)
        return response
    }

    private func log(_ request: Request, context: Context, status: Int, start: ContinuousClock.Instant, client: String, keyID: String?) {
        let elapsed = start.duration(to: .now)
        let route = context.endpointPath ?? "unmatched"
        metrics.request(route: route, status: status, duration: elapsed)
        var metadata: Logger.Metadata = [
            "method": .string(request.method.rawValue), "route": .string(route), "status": .stringConvertible(status),
            "duration_ms": .string(Self.milliseconds(elapsed)),
            "client": .string(client),
        ]
        if let keyID { metadata["key_id"] = .string(keyID) }
        context.logger.info("request", metadata: metadata)
    }

    /// `duration` in milliseconds with three decimals (`12.345`), without Foundation's `String(format:)`.
    static func milliseconds(_ duration: Duration) -> String {
        let micros = max(0, duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// The client's `X-Request-ID` when it is 1 to 128 of letters, digits and `-_.:`, else 16 new hex digits.
    static func requestID(_ given: String?) -> String {
        if let given, (1...128).contains(given.utf8.count),
           given.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || [0x2D, 0x5F, 0x2E, 0x3A].contains($0) }) {
            return given
        }
        return String(UInt64.random(in: .min ... .max), radix: 16).leftPadded(to: 16)
    }
}

/// What the routes learn of a request that its access line reports: the key that signed it.
final class AccessRecord: @unchecked Sendable {
    @TaskLocal static var current: AccessRecord?
    private let lock = NSLock()
    private var signer: String?

    /// The key id of the request's verified signature, once one is.
    var keyID: String? {
        get { lock.withLock { signer } }
        set { lock.withLock { signer = newValue } }
    }
}

/// Notes the verified signer for the access line; stands right after a signature check.
struct SignerNote: RouterMiddleware {
    typealias Context = HTTPSignatureContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let keyID = context.verifiedSignature?.keyID { AccessRecord.current?.keyID = keyID }
        return try await next(request, context)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
