import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferServer
import Foundation
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the registration server: apps register keys, then sign their requests (RFC 9421).",
        discussion: """
            Routes (docs/SERVER.md and docs/openapi.yaml have every field and status):
              POST /register
                  {"publicKey": "<PEM or JWK>"}, signed by that key (RFC 9421, with
                  created and a nonce: proof that the caller holds it; 'coffer
                  server register' signs it) -> 201 {"keyId", "algorithm"}; RSA keys
                  add "algorithm": "rsa-pss-sha512" or "rsa-v1_5-sha256".
                  {"algorithm": "hmac-sha256"} -> 201 {"keyId", "algorithm", "secret"},
                  the only time the secret is ever sent.
              POST /register_user
                  {"email", "name"}, signed by a registered key, covering @method,
                  @target-uri and content-digest, with created -> 201; otherwise 401
                  with a problem-details body saying why; a replayed request is 401.
                  The address is not verified: the user makes no device a member.
              POST /encryption-key
                  {"encryptionKey": PEM}, signed by a registered key: sets the key
                  its data keys are sealed to (logged, kept in the key's history).
              GET /health
                  200 {"status": "ok"} while the process serves (liveness: never asks
                  the database).
              GET /ready
                  200 when the database answers with every migration applied and,
                  with master keys, the fleet's wrapping key held (readiness); 503
                  with Retry-After otherwise. Answered within a second.
              POST /data-keys
                  Signed by a device that registered an "encryptionKey" (X25519 or
                  P-256): its 256-bit data key sealed to that key with HPKE (needs
                  --master-key-file).
              POST /data-keys/rotate
                  A new version (at most --rotate-limit versions an hour).

            With --data-key-scope user a data key is the user's, shared by the devices an admin \
            linked to the user (coffer server keys link) once the backend verified who the user is.

            Master keys: --master-key-file FILE (32 raw bytes, mode 0600 or 0400; repeatable) or \
            COFFER_MASTER_KEY (base64) wrap stored data keys and HMAC secrets. The database records \
            the key its fleet wraps with; an instance that lacks it does not start, and says which \
            ids it holds and which the database records. The first keyed instance on a new database \
            records its first key. Rotation: give every instance both keys, then 'coffer server \
            master-key promote', 'rewrap' and 'retire' (coffer server master-key --help). Without a \
            master key, HMAC secrets are stored in clear, and an instance refuses a database whose \
            keyring is recorded.

            The allow-list: --admin-key PUB (repeatable; a public key file, EC or Ed25519) names the \
            admins. Their RFC 9421-signed requests (keyid = the key's Coffer key id) may list, disable, \
            enable and revoke registered keys, link devices to users and issue registration tokens \
            (GET/POST /admin/…, docs/SERVER.md); to anyone else, every /admin/ path answers 404 as a \
            path that does not exist. --registration open|token|closed says who may POST /register: token \
            (the default with an admin key) needs {"token": …} from an admin, closed registers \
            nobody, open (the default without one) lets anyone register — a warning says so at start. \
            A disabled or revoked key is refused by every instance within a second (401 key-revoked).

            Storage: a SQLite file (default $XDG_DATA_HOME/coffer/server.sqlite, or --database \
            sqlite:PATH), or PostgreSQL (--database postgres://user:password@host:port/db, \
            sslmode=disable|prefer|require|verify-ca|verify-full; --database-ca FILE or sslrootcert=FILE \
            names the authorities that sign the database's certificate) so that several instances behind \
            a load balancer share registered keys and the replay cache. COFFER_DATABASE keeps a password \
            out of the process list. At start PostgreSQL's own error is the message (a wrong password, a \
            missing database), each migration applied is logged, and a database a newer release migrated \
            is refused, naming both versions. --migrate-only applies the migrations and ends (with \
            --dry-run it lists them and changes nothing).

            During a database outage: waiting for a connection is bounded by --database-connect-timeout, \
            a statement by --database-statement-timeout; a request whose database call runs over, or that \
            comes once the database was found down, is answered 503 with Retry-After at once, and the \
            server tries the database again once a second and recovers by itself. SIGINT or SIGTERM lets \
            requests in flight finish for up to --drain-timeout seconds, then ends the process.

            Hardening: with --cert, TLS 1.2 at least with ECDHE and AEAD ciphers only. A client must send a \
            whole request head within --header-timeout seconds of connecting (or of the previous \
            response) however slowly its bytes trickle in, and idle keep-alive connections close after \
            the same time. Per client address, /register is limited to --register-limit calls a minute \
            and signed routes to --failure-limit failed signature checks a minute; beyond that the answer \
            is 429 with Retry-After (0 turns a limit off). The database URL is never printed with its \
            password.

            Behind a proxy: --trusted-proxy ADDR (repeatable; an address or a CIDR range) names the \
            proxies whose X-Forwarded-For gives the client's address (the rightmost address that is not \
            a trusted proxy: the limits count by it) and whose X-Forwarded-Proto and X-Forwarded-Host give \
            the scheme and authority clients sign (over --public-scheme and --public-authority). From \
            any other peer those headers are ignored. At --log-level debug a bad-signature answer logs \
            the target the server rebuilt.

            --metrics-port P serves Prometheus metrics at /metrics on a separate listener (requests by \
            route and status, request duration by route, signature refusals by reason, rate-limited \
            requests, store latency, data keys issued, whether the database answers), never on the public \
            port.

            Logs go to standard error, as text or (--log-format json) one JSON object a line: one access \
            line per request (route, status, duration, request id, client address, the key id of a \
            verified signature), and the cause of a database failure (never a password). The request id \
            is the client's X-Request-ID when it sends a plain one (letters, digits, -_.:, at most 128), \
            else a new one; the answer carries it in X-Request-ID. SIGHUP reads --cert and --key again \
            (new connections get the new pair; open ones keep theirs; a pair that does not load is logged \
            and the old one stays). The first line on standard output is 'listening on \
            http(s)://HOST:PORT' once every listener accepts connections; files, keys and ports are \
            checked before the database is opened.

            Every option can also be set in the environment (the command line wins): --some-option is \
            COFFER_SOME_OPTION; a repeatable option takes a comma-separated list; \
            --abandon-master-keyring is only ever a command-line flag. COFFER_MASTER_KEY (base64) is a \
            master key itself.
            \(Serve.environment.helpList)

            Examples:
              coffer serve
              coffer serve --port 8443 --cert server.pem --key server.key
              coffer serve --admin-key admin.pub --registration token
              COFFER_DATABASE=postgres://coffer:pw@db/coffer coffer serve --port 8081
              coffer serve --trusted-proxy 10.0.0.0/8 --log-format json
              COFFER_DATABASE=postgres://… coffer serve --migrate-only --dry-run
            """
    )

    @Option(help: ArgumentHelp("The address to listen on.", valueName: "host"))
    var host: String = "127.0.0.1"

    @Option(help: ArgumentHelp("The port (0 picks a free one).", valueName: "port"))
    var port: Int = 8080

    @Option(help: ArgumentHelp("A SQLite file (a path, or sqlite:PATH) or postgres://… (default: COFFER_DATABASE, else the SQLite file in the XDG data folder).", valueName: "url"))
    var database: String?

    @Option(help: ArgumentHelp("The TLS certificate chain (PEM); with --key, serves HTTPS.", valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The TLS private key (PEM).", valueName: "file"))
    var key: String?

    @Option(name: .customLong("public-scheme"), help: ArgumentHelp("The scheme clients sign, when a TLS-terminating proxy is in front (default: https with --cert, else http).", valueName: "scheme"))
    var publicScheme: String?

    @Option(name: .customLong("public-authority"), help: ArgumentHelp("The host[:port] clients sign, when a proxy rewrites Host.", valueName: "authority"))
    var publicAuthority: String?

    @Option(name: .customLong("max-age"), help: ArgumentHelp("The oldest signature accepted, in seconds.", valueName: "seconds"))
    var maxAge: Int64 = 300

    @Option(name: .customLong("header-timeout"), help: ArgumentHelp("Seconds a client has to send a whole request head; idle connections close after it too.", valueName: "seconds"))
    var headerTimeout: Int = 20

    @Option(name: .customLong("register-limit"), help: ArgumentHelp("POST /register calls per client address per minute (0: no limit).", valueName: "n"))
    var registerLimit: Int = 20

    @Option(name: .customLong("failure-limit"), help: ArgumentHelp("Failed signature checks per client address per minute before 429 (0: no limit).", valueName: "n"))
    var failureLimit: Int = 60

    @Option(name: .customLong("rotate-limit"), help: ArgumentHelp("Versions of one data key made per hour before POST /data-keys/rotate is 429 (0: no limit).", valueName: "n"))
    var rotateLimit: Int = 10

    @Option(name: .customLong("encryption-key-limit"), help: ArgumentHelp("Changes of one key's encryption key per hour before POST /encryption-key is 429 (0: no limit).", valueName: "n"))
    var encryptionKeyLimit: Int = 10

    @Option(name: .customLong("sign-up-limit"), help: ArgumentHelp("Users one key may sign up through POST /register_user, in all, before 409 sign-up-limit (0: no limit).", valueName: "n"))
    var signUpLimit: Int = 10

    @Option(name: .customLong("admin-key"), help: ArgumentHelp("An admin's public key file (EC or Ed25519; repeatable).", valueName: "file"))
    var adminKeys: [String] = []

    @Option(help: ArgumentHelp("Who may POST /register: open, token or closed (default: token with --admin-key, else open).", valueName: "mode"))
    var registration: String?

    @Option(name: .customLong("master-key-file"), help: ArgumentHelp("A master key: 32 random bytes (raw), mode 0600 or 0400, that wrap stored data keys and HMAC secrets; enables POST /data-keys (repeatable: the keys of a rotation). Or COFFER_MASTER_KEY (base64).", valueName: "file"))
    var masterKeyFiles: [String] = []

    @Flag(name: .customLong("abandon-master-keyring"), help: "When these master keys lack the one the database wraps with: start a new keyring with the first of them instead of refusing. Every data key and HMAC secret wrapped under the database's keys is LOST for good. Only for keys that are lost.")
    var abandonMasterKeyring = false

    @Option(name: .customLong("data-key-scope"), help: ArgumentHelp("Whose data key a device gets: device (its own) or user (its user's, shared by the user's devices).", valueName: "scope"))
    var dataKeyScope: String = "device"

    @Option(name: .customLong("metrics-port"), help: ArgumentHelp("Serve Prometheus metrics at /metrics on this port (0 picks one), never on the public port.", valueName: "port"))
    var metricsPort: Int?

    @Option(name: .customLong("metrics-host"), help: ArgumentHelp("The address the metrics port listens on.", valueName: "host"))
    var metricsHost: String = "127.0.0.1"

    @Option(name: .customLong("key-cache-ms"), help: ArgumentHelp("How long an instance trusts a key record it read, in ms (0–1000): a revocation reaches every instance within it.", valueName: "ms"))
    var keyCacheMilliseconds: Int = 500

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(name: .customLong("log-format"), help: ArgumentHelp("text, or json: one JSON object a line.", valueName: "format"))
    var logFormat: String = "text"

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp("A proxy whose X-Forwarded-For/-Proto/-Host are believed: an IP address or CIDR range (repeatable).", valueName: "addr"))
    var trustedProxies: [String] = []

    @Option(name: .customLong("database-connect-timeout"), help: ArgumentHelp("Seconds to wait for a database connection (to connect, or for a pooled one to come free).", valueName: "seconds"))
    var databaseConnectTimeout: Double = 0.5

    @Option(name: .customLong("database-statement-timeout"), help: ArgumentHelp("Seconds a database statement may run (PostgreSQL's statement_timeout).", valueName: "seconds"))
    var databaseStatementTimeout: Double = 1

    @Option(name: .customLong("database-connections"), help: ArgumentHelp("The most PostgreSQL connections this instance holds (the pool's size).", valueName: "n"))
    var databaseConnections: Int = 10

    @Option(name: .customLong("database-ca"), help: ArgumentHelp("The certificate authorities (PEM) that sign PostgreSQL's certificate, for sslmode=verify-ca or verify-full.", valueName: "file"))
    var databaseCA: String?

    @Option(name: .customLong("readiness-timeout"), help: ArgumentHelp("Seconds GET /ready waits for the database before it answers 503.", valueName: "seconds"))
    var readinessTimeout: Double = 1

    @Option(name: .customLong("drain-timeout"), help: ArgumentHelp("Seconds requests in flight get to finish after SIGTERM or SIGINT.", valueName: "seconds"))
    var drainTimeout: Double = 10

    @Flag(name: .customLong("migrate-only"), help: "Apply the database's migrations (each is logged) and end, serving nothing.")
    var migrateOnly = false

    @Flag(name: .customLong("dry-run"), help: "With --migrate-only: list the migrations that would run, and change nothing.")
    var dryRun = false

    func validate() throws {
        if (cert == nil) != (key == nil) { throw ValidationError("--cert and --key go together") }
        if !(0...65535).contains(port) { throw ValidationError("--port must be 0 to 65535") }
        if !(1...3600).contains(headerTimeout) { throw ValidationError("--header-timeout must be 1 to 3600 seconds") }
        if registerLimit < 0 || failureLimit < 0 || rotateLimit < 0 || encryptionKeyLimit < 0 || signUpLimit < 0 {
            throw ValidationError("--register-limit, --failure-limit, --rotate-limit, --encryption-key-limit and --sign-up-limit must be 0 (no limit) or more")
        }
        if Logger.Level(rawValue: logLevel) == nil { throw ValidationError("--log-level takes trace, debug, info, notice, warning, error or critical") }
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0 to 65535") }
        if let metricsPort, metricsPort != 0, metricsPort == port { throw ValidationError("--metrics-port must differ from --port: metrics never go on the public port") }
        if !(0...1000).contains(keyCacheMilliseconds) { throw ValidationError("--key-cache-ms must be 0 to 1000") }
        if DataKeyScope(rawValue: dataKeyScope) == nil { throw ValidationError("--data-key-scope takes device or user") }
        if let registration, RegistrationMode(rawValue: registration) == nil { throw ValidationError("--registration takes open, token or closed") }
        if registration == "token" && adminKeys.isEmpty { throw ValidationError("--registration token needs an --admin-key to issue tokens") }
        if ServerLogHandler.Format(rawValue: logFormat) == nil { throw ValidationError("--log-format takes text or json") }
        if !(0.05...60).contains(databaseConnectTimeout) { throw ValidationError("--database-connect-timeout must be 0.05 to 60 seconds") }
        if !(0.05...3600).contains(databaseStatementTimeout) { throw ValidationError("--database-statement-timeout must be 0.05 to 3600 seconds") }
        if !(1...1000).contains(databaseConnections) { throw ValidationError("--database-connections must be 1 to 1000") }
        if !(0.05...60).contains(readinessTimeout) { throw ValidationError("--readiness-timeout must be 0.05 to 60 seconds") }
        if !(0...3600).contains(drainTimeout) { throw ValidationError("--drain-timeout must be 0 to 3600 seconds") }
        if let publicScheme, publicScheme != "http" && publicScheme != "https" { throw ValidationError("--public-scheme takes http or https") }
        if let publicAuthority, !TrustedProxies.isAuthority(publicAuthority) {
            throw ValidationError("--public-authority takes a host[:port] (letters, digits, '.', '-', ':' and [ ] for IPv6), not '\(publicAuthority.clipped(toUTF8: 64))'")
        }
        if dryRun && !migrateOnly { throw ValidationError("--dry-run goes with --migrate-only") }
        if abandonMasterKeyring && masterKeyFiles.isEmpty && ProcessInfo.processInfo.environment["COFFER_MASTER_KEY"] == nil {
            throw ValidationError("--abandon-master-keyring starts a new keyring with a master key: give --master-key-file")
        }
    }

    /// Checks the master keys against the database's keyring before anything is served: an instance
    /// that lacks the fleet's wrapping key ends here, naming the ids on both sides.
    static func checkMasterKeys(_ keyring: ServerMasterKeyring?, in store: any RegistrationStore, abandoning: Bool, logger: Logger) async throws {
        let check: MasterKeyringCheck
        do {
            check = try await ServerMasterKeyring.check(keyring, against: store, abandoningRecordedKeyring: abandoning)
        } catch {
            try? await store.close()
            throw MasterKeyFiles.failure(error, holdingKeys: keyring != nil)
        }
        for note in check.notes { logger.warning("\(note)") }
        if let wrapping = check.wrappingKeyID {
            logger.info("master keyring checked", metadata: ["wrapping": .string(wrapping), "held": .string(keyring?.keyIDs.joined(separator: ",") ?? "")])
        }
    }

    func run() throws {
        // A log line standard error cannot take (its reader has gone: a pipeline's reader quit, a log
        // shipper restarting) is dropped rather than the end of the server. SwiftNIO ignores SIGPIPE
        // once it runs; the lines before it (the open-registration warning) would otherwise be fatal.
        // The server makes no temporary files, so the cleanup handler this replaces has nothing to do.
        _ = signal(SIGPIPE, SIG_IGN)
        // Until the reload service traps it, a SIGHUP (a `systemctl reload` during start) must not end
        // the process, as its default action would.
        _ = signal(SIGHUP, SIG_IGN)
        let format = ServerLogHandler.Format(rawValue: logFormat) ?? .text
        let level = Logger.Level(rawValue: logLevel) ?? .info
        // Every logger of the process (PostgreSQL's, Hummingbird's, the routes') writes through one
        // handler, in one format.
        LoggingSystem.bootstrap { label in
            var handler = ServerLogHandler.standardError(label: label, format: format)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "coffer.serve")

        // Everything that can be wrong without the database is checked first, and named.
        let location: DatabaseLocation
        do {
            location = try DatabaseLocation(database ?? ProcessInfo.processInfo.environment["COFFER_DATABASE"])
            if databaseCA != nil, case .sqlite = location { throw ServerConfigurationError(.invalidDatabaseLocation, "--database-ca is for a PostgreSQL database") }
        } catch let error as ServerConfigurationError {
            throw CommandFailure(reporting: error)
        }
        let limits = databaseLimits
        if migrateOnly {
            return try migrate(location, limits: limits, logger: logger)
        }
        var options = RegistrationServer.Options()
        options.scheme = publicScheme ?? (cert == nil ? "http" : "https")
        options.schemeIsPinned = publicScheme != nil
        options.authority = publicAuthority
        options.maximumAge = maxAge
        options.headerTimeout = .seconds(headerTimeout)
        options.registrationsPerMinute = registerLimit == 0 ? nil : registerLimit
        options.signatureFailuresPerMinute = failureLimit == 0 ? nil : failureLimit
        options.dataKeyRotationsPerHour = rotateLimit == 0 ? nil : rotateLimit
        options.encryptionKeyChangesPerHour = encryptionKeyLimit == 0 ? nil : encryptionKeyLimit
        options.signUpsPerKey = signUpLimit == 0 ? nil : signUpLimit
        options.adminKeys = try adminKeys.map(Self.adminKey)
        options.registration = registration.flatMap(RegistrationMode.init(rawValue:))
        options.keyRecordMaximumAge = .milliseconds(keyCacheMilliseconds)
        options.masterKeys = try MasterKeyFiles.keyring(files: masterKeyFiles)
        options.dataKeyScope = DataKeyScope(rawValue: dataKeyScope) ?? .device
        options.database = limits
        options.readinessTimeout = .milliseconds(Int64(readinessTimeout * 1000))
        do {
            options.trustedProxies = try TrustedProxies(trustedProxies)
        } catch {
            throw CommandFailure(reporting: error)
        }
        var certificate: ServerCertificate?
        if let cert, let key {
            do {
                certificate = try ServerCertificate(certificatePath: cert, keyPath: key)
            } catch {
                throw CommandFailure(reporting: error)
            }
        }
        let (host, port, metricsHost, metricsPort, abandon) = (host, port, metricsHost, metricsPort, abandonMasterKeyring)
        ProcessMetrics.started = Date()
        let drain = Duration.milliseconds(Int64(drainTimeout * 1000))
        let registry = PrometheusCollectorRegistry()
        if metricsPort != nil { options.metricsFactory = HelpfulPrometheusFactory(registry: registry, help: RegistrationServer.metricHelp) }
        let scheme = cert == nil ? "http" : "https"
        if options.trustedProxies.trustsEveryAddress {
            logger.warning("--trusted-proxy trusts every address: any client can choose the address its limits count by and the target it signs")
        }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        try runBlocking { [logger, options, certificate] in
            try await Listeners.checkFree(host: host, port: port, what: "--port")
            if let metricsPort { try await Listeners.checkFree(host: metricsHost, port: metricsPort, what: "--metrics-port") }
            if options.effectiveRegistration == .open {
                logger.warning(options.adminKeys.isEmpty
                    ? "registration is open: anyone can register a key (start with --admin-key PUB for tokens, or --registration closed)"
                    : "registration is open: anyone can register a key (--registration token makes each registration need an admin's token)")
            }
            let store: any RegistrationStore
            do {
                store = try await location.open(logger: logger, limits: limits)
            } catch let error as ServerConfigurationError {
                throw CommandFailure("cannot open the database: \(error.reason)", hint: error.hint)
            } catch {
                throw CommandFailure("cannot open the database \(location): \(error)")
            }
            logger.info("database open", metadata: ["database": .string(location.description)])
            try await Self.checkMasterKeys(options.masterKeys, in: store, abandoning: abandon, logger: logger)
            let listeners = Listeners(expected: metricsPort == nil ? 1 : 2) { port in
                Terminal.writeOut("listening on \(scheme)://\(shownHost):\(port)\n")
                Terminal.flushStandardOutput()
            }
            let server = RegistrationServer(store: store, options: options)
            let application = try server.application(host: host, port: port, certificate: certificate, logger: logger) { bound in
                await listeners.up(bound, main: true)
            }
            var services: [any Service] = [application, CertificateReloading(certificate: certificate, logger: logger)]
            if let metricsPort {
                services.append(MetricsListener.application(registry: registry, host: metricsHost, port: metricsPort, logger: logger) { bound in
                    logger.info("metrics on http://\(metricsHost):\(bound)/metrics")
                    await listeners.up(bound, main: false)
                })
            }
            var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            configuration.maximumGracefulShutdownDuration = drain
            configuration.maximumCancellationDuration = .seconds(5)
            do {
                try await ServiceGroup(configuration: configuration).run()
            } catch {
                await Self.close(store, logger: logger)
                throw Listeners.failure(error, host: host, port: port, metricsHost: metricsHost, metricsPort: metricsPort)
            }
            await Self.close(store, logger: logger)
            logger.info("stopped")
        }
    }
}
