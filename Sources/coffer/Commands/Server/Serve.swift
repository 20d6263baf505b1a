import ArgumentParser
import CofferCore
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
                  200 {"status": "ok"} when the database answers.
              GET /ready
                  200 when the database answers with every migration applied.
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
            sslmode=disable|prefer|require) so that several instances behind a load balancer share \
            registered keys and the replay cache. The database URL can also come from the \
            COFFER_DATABASE environment variable, which keeps a password out of the process list.

            Hardening: with --cert, TLS 1.2 at least with ECDHE and AEAD ciphers only. A client must send a \
            whole request head within --header-timeout seconds of connecting (or of the previous \
            response) however slowly its bytes trickle in, and idle keep-alive connections close after \
            the same time. Per client address, /register is limited to --register-limit calls a minute \
            and signed routes to --failure-limit failed signature checks a minute; beyond that the answer \
            is 429 with Retry-After (0 turns a limit off; behind a proxy every client shares the \
            proxy's address). The database URL is never printed with its password.

            --metrics-port P serves Prometheus metrics at /metrics on a separate listener (requests by \
            route and status, signature refusals by reason, rate-limited requests, store latency, data \
            keys issued), never on the public port.

            Logs are structured (swift-log) on standard error; SIGINT or SIGTERM stops the server \
            gracefully (requests in flight finish). The first line on standard output is \
            'listening on http(s)://HOST:PORT' once connections are accepted.

            Examples:
              coffer serve
              coffer serve --port 8443 --cert server.pem --key server.key
              coffer serve --admin-key admin.pub --registration token
              COFFER_DATABASE=postgres://coffer:pw@db/coffer coffer serve --port 8081
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

    func validate() throws {
        if (cert == nil) != (key == nil) { throw ValidationError("--cert and --key go together") }
        if !(0...65535).contains(port) { throw ValidationError("--port must be 0 to 65535") }
        if !(1...3600).contains(headerTimeout) { throw ValidationError("--header-timeout must be 1 to 3600 seconds") }
        if registerLimit < 0 || failureLimit < 0 || rotateLimit < 0 || encryptionKeyLimit < 0 {
            throw ValidationError("--register-limit, --failure-limit, --rotate-limit and --encryption-key-limit must be 0 (no limit) or more")
        }
        if Logger.Level(rawValue: logLevel) == nil { throw ValidationError("--log-level takes trace, debug, info, notice, warning, error or critical") }
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0 to 65535") }
        if let metricsPort, metricsPort != 0, metricsPort == port { throw ValidationError("--metrics-port must differ from --port: metrics never go on the public port") }
        if !(0...1000).contains(keyCacheMilliseconds) { throw ValidationError("--key-cache-ms must be 0 to 1000") }
        if DataKeyScope(rawValue: dataKeyScope) == nil { throw ValidationError("--data-key-scope takes device or user") }
        if let registration, RegistrationMode(rawValue: registration) == nil { throw ValidationError("--registration takes open, token or closed") }
        if registration == "token" && adminKeys.isEmpty { throw ValidationError("--registration token needs an --admin-key to issue tokens") }
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
        let location: DatabaseLocation
        do {
            location = try DatabaseLocation(database ?? ProcessInfo.processInfo.environment["COFFER_DATABASE"])
        } catch let error as ServerConfigurationError {
            throw CommandFailure(reporting: error)
        }
        // A log line standard error cannot take (its reader has gone: a pipeline's reader quit, a log
        // shipper restarting) is dropped rather than the end of the server. SwiftNIO ignores SIGPIPE
        // once it runs; the lines before it (the open-registration warning) would otherwise be fatal.
        // The server makes no temporary files, so the cleanup handler this replaces has nothing to do.
        _ = signal(SIGPIPE, SIG_IGN)
        var logger = Logger(label: "coffer.serve", factory: ServerLogHandler.standardError)
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var options = RegistrationServer.Options()
        options.scheme = publicScheme ?? (cert == nil ? "http" : "https")
        options.authority = publicAuthority
        options.maximumAge = maxAge
        options.headerTimeout = .seconds(headerTimeout)
        options.registrationsPerMinute = registerLimit == 0 ? nil : registerLimit
        options.signatureFailuresPerMinute = failureLimit == 0 ? nil : failureLimit
        options.dataKeyRotationsPerHour = rotateLimit == 0 ? nil : rotateLimit
        options.encryptionKeyChangesPerHour = encryptionKeyLimit == 0 ? nil : encryptionKeyLimit
        options.adminKeys = try adminKeys.map { try KeyFiles.importKey($0, passwords: .prompting).verifyingKey }
        options.registration = registration.flatMap(RegistrationMode.init(rawValue:))
        options.keyRecordMaximumAge = .milliseconds(keyCacheMilliseconds)
        options.masterKeys = try MasterKeyFiles.keyring(files: masterKeyFiles)
        options.dataKeyScope = DataKeyScope(rawValue: dataKeyScope) ?? .device
        let registry = PrometheusCollectorRegistry()
        if metricsPort != nil { options.metricsFactory = PrometheusMetricsFactory(registry: registry) }
        if options.effectiveRegistration == .open {
            logger.warning("registration is open: anyone can register a key (start with --admin-key PUB for tokens, or --registration closed)")
        }
        let scheme = cert == nil ? "http" : "https"
        let (host, port, cert, key, metricsHost, metricsPort, abandon) = (host, port, cert, key, metricsHost, metricsPort, abandonMasterKeyring)
        try runBlocking { [logger, options] in
            let store: any RegistrationStore
            do {
                store = try await location.open(logger: logger)
            } catch let error as ServerConfigurationError {
                throw CommandFailure("cannot open the database: \(error.description)", hint: error.hint)
            } catch {
                throw CommandFailure("cannot open the database \(location): \(error)")
            }
            logger.info("database open", metadata: ["database": .string(location.description)])
            try await Self.checkMasterKeys(options.masterKeys, in: store, abandoning: abandon, logger: logger)
            let server = RegistrationServer(store: store, options: options)
            let application = try server.application(host: host, port: port, certificatePath: cert, keyPath: key, logger: logger) { bound in
                Terminal.writeOut("listening on \(scheme)://\(host):\(bound)\n")
                Terminal.flushStandardOutput()
            }
            var services: [any Service] = [application]
            if let metricsPort {
                let router = Router()
                router.get("metrics") { _, _ -> Response in
                    Response(
                        status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer()))
                    )
                }
                services.append(Application(
                    router: router, configuration: ApplicationConfiguration(address: .hostname(metricsHost, port: metricsPort), serverName: "coffer-metrics"),
                    onServerRunning: { channel in logger.info("metrics on http://\(metricsHost):\(channel.localAddress?.port ?? metricsPort)/metrics") },
                    logger: logger
                ))
            }
            do {
                try await ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
            logger.info("stopped")
        }
    }
}
