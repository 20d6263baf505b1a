import CofferCore
public import CofferCrypto
import CofferFormats
public import CofferHTTPSignatures
public import CofferHummingbird
import Foundation
public import Hummingbird
import HummingbirdTLS
import HummingbirdCore
import HTTPTypes
public import Logging
public import Metrics
import NIOCore
import NIOSSL

/// The registration flow behind `coffer serve`:
///
/// - `POST /register` with `{"publicKey": "<PEM or JWK>"}` (and `"algorithm"` for RSA keys), signed by
///   that key (docs/SERVER.md, "Proof of possession"), answers `201 {"keyId", "algorithm"}`; with
///   `{"algorithm": "hmac-sha256"}` it answers `201 {"keyId", "algorithm", "secret"}` — the only time
///   that secret is sent.
/// - `POST /register_user` with `{"email", "name"}` answers `201` only for a request signed by a
///   registered key, covering `@method`, `@target-uri` and `content-digest` and carrying `created`;
///   otherwise `401` with a problem-details body. A replayed request is `401` too.
/// - `GET /health` answers `200 {"status": "ok"}` when the store answers.
///
/// Hardened for the open internet: TLS 1.2 at least, with ECDHE and AEAD ciphers only; a request head
/// that has not arrived in full within ``Options/headerTimeout`` ends the connection, however slowly
/// its bytes trickle in, and idle keep-alive connections close after the same time; `/register` and
/// failed signature checks are limited per client address (`429` with `Retry-After`).
public struct RegistrationServer: Sendable {
    /// Settings of the signed routes.
    public struct Options: Sendable {
        /// The scheme clients sign in `@target-uri` (`https` behind TLS, or behind a TLS-terminating
        /// proxy). A request signed for the other scheme is refused with a `detail` that says so.
        public var scheme = "http"
        /// The authority clients sign, when a proxy rewrites `Host`.
        public var authority: String?
        /// The oldest signature accepted, in seconds.
        public var maximumAge: Int64 = 300
        /// How long a client has to send a whole request head (from connecting, or from the previous
        /// response), and how long an idle keep-alive connection stays open: 20 seconds.
        public var headerTimeout: Duration = .seconds(20)
        /// `POST /register` calls accepted per client address per minute (also the burst); nil for no
        /// limit. 20 by default.
        public var registrationsPerMinute: Int? = 20
        /// Failed signature checks (`401` on a signed route) accepted per client address per minute
        /// before the address gets `429` without verification; nil for no limit. 60 by default.
        public var signatureFailuresPerMinute: Int? = 60
        /// The clock every route reads (``ServerClock``): the times it records and the per-hour limits
        /// by its wall clock, the per-address limits (``registrationsPerMinute``,
        /// ``signatureFailuresPerMinute``) by its monotonic clock. The system's by default; a test holds
        /// it still (``ServerClock/held(atSeconds:)``), so that a limit it reaches holds however slowly
        /// the machine runs the test.
        public var clock: ServerClock = .system
        /// The monotonic reading of ``clock``, which the per-address limits refill by.
        @available(*, deprecated, renamed: "clock.monotonicSeconds")
        public var rateLimitClock: @Sendable () -> Double {
            get { clock.monotonicSeconds }
            set { clock.monotonicSeconds = newValue }
        }
        /// The admin identities: public keys (never shared secrets) whose signed requests may manage the
        /// allow-list and issue registration tokens (docs/SERVER.md, "Admin API"); their `keyid` is their Coffer
        /// key id. None by default: no admin API.
        public var adminKeys: [VerifyingKey] = []
        /// Who may `POST /register`; nil for the default: ``RegistrationMode/token`` when there is an
        /// admin key to issue tokens, ``RegistrationMode/open`` otherwise.
        public var registration: RegistrationMode?
        /// How long an instance trusts a key record it read: a key disabled or revoked through any
        /// instance is refused by every other within this time. Half a second.
        public var keyRecordMaximumAge: Duration = .milliseconds(500)
        /// The bounds of one page of the admin API's key and user listings: records, and bytes of them
        /// as written (tests make them small).
        var adminPage = (records: 10_000, bytes: 8 << 20)

        /// Versions of one owner's data key that `POST /data-keys/rotate` makes per hour, counted in the
        /// database (so across instances); nil for no limit. 10 by default.
        public var dataKeyRotationsPerHour: Int? = 10
        /// Changes of one key's encryption key that `POST /encryption-key` makes per hour, counted in its
        /// history (so across instances); nil for no limit. 10 by default.
        public var encryptionKeyChangesPerHour: Int? = 10
        /// Users one key may sign up through `POST /register_user`, in all (every sign-up it asks for
        /// counts, an address already registered included), counted with the insert (so across
        /// instances); nil for no limit. 10 by default: a device signs up its own user.
        public var signUpsPerKey: Int? = 10

        /// The master keys this instance holds (docs/SERVER.md, "The master keyring"): they wrap stored
        /// data keys and HMAC secrets; nil for no data-key routes (`POST /data-keys`) and HMAC secrets
        /// stored in clear. Check them against the database before serving
        /// (``ServerMasterKeyring/check(_:against:abandoningRecordedKeyring:now:)``); a router used
        /// without that check makes it before its first write.
        public var masterKeys: ServerMasterKeyring?
        /// One master key: shorthand for ``masterKeys`` holding this key alone (nil for none).
        public var masterKey: ServerMasterKey? {
            get { masterKeys?.keys.first }
            set { masterKeys = newValue.map(ServerMasterKeyring.init(holding:)) }
        }
        /// Whose data key a device gets: its own (the default) or its user's.
        public var dataKeyScope: DataKeyScope = .device

        /// Where the server's metrics go (docs/SERVER.md, "Operations"); the bootstrapped swift-metrics
        /// system's factory by default (a no-op until something is bootstrapped).
        public var metricsFactory: any MetricsFactory = MetricsSystem.factory

        /// How long each store call may take (``DatabaseLimits/callTimeout``) before its request is
        /// answered `503` with `Retry-After`; give the same limits to ``DatabaseLocation/open(logger:limits:timeout:)``.
        /// Once a call finds the database down, calls fail at once (one a second tries again) until it
        /// answers.
        public var database = DatabaseLimits()
        /// How long `GET /ready` waits for the database before it answers `503 unavailable`: a probe
        /// must be answered before the orchestrator's own timeout. One second.
        public var readinessTimeout: Duration = .seconds(1)

        /// The proxies whose `X-Forwarded-For`, `-Proto` and `-Host` this server believes: the client
        /// address its limits count by, and the scheme and authority signatures are checked against.
        /// None by default: those headers are ignored.
        public var trustedProxies = TrustedProxies()
        /// Whether ``scheme`` was set by the operator (`--public-scheme`): then a trusted proxy's
        /// `X-Forwarded-Proto` does not override it, as ``authority``, when set, wins over its
        /// `X-Forwarded-Host`. False by default: the proxy's report wins over the default scheme.
        public var schemeIsPinned = false

        /// The registration mode in force: ``registration``, or the default it stands for.
        public var effectiveRegistration: RegistrationMode { registration ?? (adminKeys.isEmpty ? .open : .token) }

        /// The defaults: plain HTTP, five minutes, the limits above, no admin, open registration.
        public init() {}
    }

    /// The store.
    public let store: any RegistrationStore
    /// The settings.
    public let options: Options

    /// A server over `store`.
    public init(store: any RegistrationStore, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    /// The policy every signed route applies (`/register_user`, the device routes, the admin API;
    /// `/register` adds a nonce to it): built here only.
    public var policy: HTTPSignaturePolicy {
        var policy = HTTPSignaturePolicy(requiring: [.method, .targetURI, .field("content-digest")])
        policy.requiresCreated = true
        policy.maximumAge = options.maximumAge
        return policy
    }

    /// The routes: the public ones, those a registered device signs (with its data keys when there are
    /// master keys) and the admin API (when there are admin keys), each a Hummingbird route collection
    /// of its own, behind the metrics and the `503` for a failing store; what none of them takes is
    /// answered `404` or `405` with a problem document.
    /// - Throws: ``ServerConfigurationError`` `.invalidAdminKey` for an admin key that cannot sign HTTP
    ///   requests (an RSA key needs an algorithm, so admin keys are EC or Ed25519).
    public func router() throws -> Router<HTTPSignatureContext> {
        let parts = try RouteParts(server: self)
        let router = Router(context: HTTPSignatureContext.self)
        router.add(middleware: AccessLog(
            metrics: parts.metrics, proxies: options.trustedProxies, pinnedAuthority: options.authority != nil, pinnedScheme: options.schemeIsPinned
        ))
        router.add(middleware: UnavailableOnFailure())
        if let admin = AdminRoutes(parts) { router.addRoutes(admin.routes, atPath: "admin") }
        router.addRoutes(PublicRoutes(parts).routes)
        router.addRoutes(DeviceRoutes(parts).routes)
        if let dataKeys = DataKeyRoutes(parts) { router.addRoutes(dataKeys.routes) }
        let countFailure: (@Sendable (HTTPSignatureContext) -> Void)? = parts.signatureFailures.map { limit in
            let limiter = limit.limiter
            return { @Sendable context in _ = limiter.take(RegistrationServer.clientAddress(context)) }
        }
        router.add(middleware: UnmatchedRoutes(router.routes, countingFailure: countFailure))
        parts.metrics.prepare(routes: router.routes.map { $0.path.description }, maximumConnections: options.database.maximumConnections)
        return router
    }

    /// What each metric the server makes counts (its `# HELP` text), by metric name: for a metrics
    /// factory that writes help lines (swift-metrics itself carries none).
    public static var metricHelp: [String: String] { ServerMetrics.help }

    /// What the per-address limits count the client by (``TrustedProxies/limitKey(_:)``: an IPv4
    /// address, an IPv6 /64): a trusted proxy's report of its address, else the connection's peer
    /// ("unknown" where the transport has none).
    static func clientAddress(_ context: HTTPSignatureContext) -> String {
        TrustedProxies.limitKey(context.forwarded?.clientAddress ?? context.remoteAddress?.ipAddress ?? "unknown")
    }

    /// Seconds until an hour has passed since `oldest` (at least 1): when a per-hour limit counted from
    /// `oldest` lets the next one through.
    static func secondsUntilHourEnds(since oldest: Int64?, now: Int64) -> Int {
        Int(max(1, (oldest ?? now) + 3600 - now))
    }

    /// `429 Too Many Requests` with `Retry-After` and a problem body.
    static func tooManyRequests(retryAfter seconds: Int, _ what: String) -> Response {
        var response = ProblemDetails(status: .tooManyRequests, reason: "rate-limited", detail: "\(what); try again in \(seconds) s").response()
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    /// A platform label: 1 to 32 of `a-z`, `0-9` and `-`.
    static func isPlatformLabel(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// The SHA-256 of a registration token's secret, hex: what the store keeps.
    static func tokenHash(_ secret: String) -> String { DigestAlgorithm.sha256.hash(secret).hex }
}

extension RegistrationServer {
    /// The Hummingbird application that serves ``router()`` on `host:port` (port 0 picks a free one),
    /// over TLS when a certificate chain and key (PEM files) are given. `onListening` receives the
    /// bound port once the server accepts connections.
    public func application(
        host: String, port: Int, certificatePath: String? = nil, keyPath: String? = nil, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        var certificate: ServerCertificate?
        if let certificatePath, let keyPath { certificate = try ServerCertificate(certificatePath: certificatePath, keyPath: keyPath) }
        return try application(host: host, port: port, certificate: certificate, logger: logger, onListening: onListening)
    }

    /// The Hummingbird application that serves ``router()`` on `host:port` (port 0 picks a free one),
    /// over TLS with `certificate` when given (each handshake takes the pair it holds, so
    /// ``ServerCertificate/reload()`` changes the certificate without closing a connection).
    /// `onListening` receives the bound port once the server accepts connections.
    public func application(
        host: String, port: Int, certificate: ServerCertificate?, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        // Hummingbird's idle timer runs from the connection's start and from each response, and only a
        // whole request head (or body part) resets it: bytes trickling in do not keep a connection open.
        let http = HTTP1Channel.Configuration(idleTimeout: .nanoseconds(Int64(options.headerTimeout / .nanoseconds(1))))
        var server: HTTPServerBuilder = .http1(configuration: http)
        if let certificate {
            let (chain, key) = certificate.pair
            let base = Self.tlsConfiguration(certificateChain: chain, privateKey: key)
            server = try .tls(.http1(configuration: http), tlsConfiguration: certificate.configuration(base))
        }
        return Application(
            router: try router(),
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "coffer"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    /// The server's TLS: 1.2 at least; for 1.2, ECDHE key exchange with AEAD ciphers only (no CBC, no
    /// static RSA). TLS 1.3's suites are all AEAD.
    static func tlsConfiguration(certificateChain: [NIOSSLCertificateSource], privateKey: NIOSSLPrivateKeySource) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: certificateChain, privateKey: privateKey)
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuiteValues = [
            .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ]
        return configuration
    }
}
