import CofferCore
import CofferHTTPSignatures
import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes
import Logging
import NIOCore

/// What the route collections are built from, made once per ``RegistrationServer/router()``: the store
/// (timed), the metrics, the clock, the signature policy and the checks built on it, the limits. One of
/// each, shared by every collection that needs it.
struct RouteParts: Sendable {
    let options: RegistrationServer.Options
    /// The store, each call timed (`coffer_store_seconds`) and bounded (``DatabaseGate``).
    let store: any RegistrationStore
    let metrics: ServerMetrics
    let clock: ServerClock
    /// ``RegistrationServer/policy``, built once.
    let policy: HTTPSignaturePolicy
    /// Wraps data keys and HMAC secrets; nil without master keys.
    let writer: MasterKeyWriter?
    /// The admin keys by key id; empty for no admin API.
    let adminKeys: [String: HTTPVerificationKey]
    /// `POST /register` calls per address; nil for no limit.
    let registrations: AddressRateLimiter?
    /// Failed signature checks per address; nil for no limit.
    let signatureFailures: SignatureFailureLimit?
    /// The registered keys, as the device routes' signature check reads them.
    let keys: StoreKeyProvider
    /// Records, once a minute per key, that a key signed a request it was accepted for.
    let uses: KeyUseRecorder

    init(server: RegistrationServer) throws {
        let options = server.options
        let metrics = ServerMetrics(factory: options.metricsFactory)
        let databaseUp = metrics.databaseUp
        databaseUp.record(1)
        let inFlight = metrics.callsInFlight
        let gate = DatabaseGate(limits: options.database, onCallsInFlight: { inFlight.record($0) }) { up, cause in
            databaseUp.record(up ? 1 : 0)
            let logger = Logger(label: "coffer.serve")
            if up { logger.notice("the database answers again") } else { logger.error("the database is not answering: requests get 503 until it does", metadata: ["cause": .string(cause ?? "")]) }
        }
        let store: any RegistrationStore = MeasuredStore(server.store, metrics: metrics, gate: gate)

        let monotonic = options.clock.monotonicSeconds
        var admins: [String: HTTPVerificationKey] = [:]
        for key in options.adminKeys {
            do {
                admins[key.fingerprint.keyID] = try HTTPVerificationKey(key)
            } catch {
                throw ServerConfigurationError(.invalidAdminKey, "the admin key \(key.fingerprint.keyID) cannot sign HTTP requests: \(error.reason)", underlying: error)
            }
        }
        self.options = options
        self.metrics = metrics
        self.store = store
        clock = options.clock
        policy = server.policy
        writer = options.masterKeys.map { MasterKeyWriter(keyring: $0, store: store) }
        adminKeys = admins
        registrations = options.registrationsPerMinute.map { AddressRateLimiter(perMinute: $0, now: monotonic) }
        signatureFailures = options.signatureFailuresPerMinute.map {
            SignatureFailureLimit(limiter: AddressRateLimiter(perMinute: $0, now: monotonic), metrics: metrics)
        }
        keys = StoreKeyProvider(store: store, masterKeys: options.masterKeys, maximumAge: options.keyRecordMaximumAge)
        uses = KeyUseRecorder(store: store)
    }

    /// The signature check of a signed route group: ``policy`` over `keys`, replays recorded in the store.
    func signatureCheck(keys: some HTTPSignatureKeyProvider, maximumBodySize: Int) -> HTTPSignatureMiddleware<HTTPSignatureContext> {
        HTTPSignatureMiddleware<HTTPSignatureContext>(
            verifier: HTTPMessageVerifier(policy: policy, keys: keys, replayCache: store), scheme: options.scheme, authority: options.authority,
            maximumBodySize: maximumBodySize, metricsFactory: options.metricsFactory
        )
    }

    /// A route group for requests signed by registered devices: the failure limit, then the signature
    /// check (`defersReplayRecord`: the route writes the replay record with its own effect), then
    /// ``ProblemAnswers``.
    func deviceSigned(_ routes: RouteCollection<HTTPSignatureContext>, defersReplayRecord: Bool = false) -> RouterGroup<HTTPSignatureContext> {
        var group = routes.group()
        if let signatureFailures { group = group.add(middleware: signatureFailures) }
        var check = signatureCheck(keys: keys, maximumBodySize: 64 * 1024)
        check.defersReplayRecordToRoute = defersReplayRecord
        return group.add(middleware: check).add(middleware: SignerNote()).add(middleware: ProblemAnswers())
    }
}

/// Counts failed signature checks (a body too large to verify among them) per address and, once an
/// address has used its allowance,
/// answers `429` before verifying anything, until a token is back.
struct SignatureFailureLimit: RouterMiddleware {
    typealias Context = HTTPSignatureContext
    let limiter: AddressRateLimiter
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let address = RegistrationServer.clientAddress(context)
        if let wait = limiter.retryAfter(address) {
            metrics.rateLimited("signature-failures")
            return RegistrationServer.tooManyRequests(retryAfter: wait, "too many failed signature checks from this address")
        }
        let response = try await next(request, context)
        // A body too large to verify counts as a failed check: under /admin/ both are answered as an
        // unknown path (which counts too), and must count the same.
        if response.status == .unauthorized || response.status == .contentTooLarge { _ = limiter.take(address) }
        return response
    }
}

extension ProblemDetails {
    /// `404 unknown-key`: no key is registered under `keyID` (shown cut to 80 characters).
    static func unknownKey(_ keyID: String) -> ProblemDetails {
        ProblemDetails(status: .notFound, reason: "unknown-key", detail: "no key is registered as '\(keyID.clipped(toUTF8: 80))'")
    }

    /// `401 missing-signature`: a signed route reached without a verified signature (the signature check
    /// stands before every such route, so this is a refusal that should never be needed).
    static let missingSignature = ProblemDetails(status: .unauthorized, reason: "missing-signature", detail: "the request is not signed")
}

extension HTTPSignatureContext {
    /// The key id of the request's verified signature.
    /// - Throws: ``ProblemDetails/missingSignature`` when there is none.
    func signerKeyID() throws(ProblemDetails) -> String {
        guard let keyID = verifiedSignature?.keyID else { throw .missingSignature }
        return keyID
    }
}

/// The one JSON writer of the server's answers: keys sorted by their UTF-8 bytes, slashes unescaped.
/// A flat object of strings and integers (``FlatJSONObject``, the signed routes' answers) is written
/// directly; anything else through `JSONEncoder` set to write the same bytes.
enum JSONAnswer {
    /// `status` with `value` as an `application/json` body.
    static func response(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let data: Data
        if let flat = value as? FlatJSONObject {
            data = flat.encoded
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // invariant: the answers are plain structs of strings, integers and booleans, which always encode.
            data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        }
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// How many bytes `value` takes as an answer writes it.
    static func size(of value: some Encodable) -> Int {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value).count) ?? 0
    }

    /// `status` with a flat object of `fields` as the body.
    static func response(_ status: HTTPResponse.Status, _ fields: [String: FlatJSONValue]) -> Response {
        response(status, FlatJSONObject(fields))
    }
}
