import CofferServer
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `coffer serve`'s listeners: a port checked before the database is touched, the `listening on …`
/// line once every listener is up, and a bind failure worded with its address.
actor Listeners {
    private let expected: Int
    private var ready = 0
    private var mainPort: Int?
    private let announce: @Sendable (Int) -> Void

    /// Announces the main listener's port once `expected` listeners are up.
    init(expected: Int, announce: @escaping @Sendable (Int) -> Void) {
        self.expected = expected
        self.announce = announce
    }

    /// A listener is up (the main one at `port` when `main`).
    func up(_ port: Int, main: Bool) {
        ready += 1
        if main { mainPort = port }
        if ready == expected, let mainPort { announce(mainPort) }
    }

    /// Fails, naming the address and why, when `host:port` cannot be listened on now (in use, not an
    /// address of this machine, a privileged port). Port 0 always can.
    static func checkFree(host: String, port: Int, what: String) async throws {
        guard port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            try await channel.close()
        } catch {
            throw failure(error, address: "\(host):\(port)", what: what)
        }
    }

    /// A listener's failure to bind, with its address; any other error as it is.
    static func failure(_ error: any Error, host: String, port: Int, metricsHost: String, metricsPort: Int?) -> any Error {
        guard error is IOError || error is SocketAddressError else { return error }
        let message = String(describing: error)
        if let metricsPort, message.contains(":\(metricsPort)") || message.contains("\(metricsHost)") && !message.contains(host) {
            return failure(error, address: "\(metricsHost):\(metricsPort)", what: "--metrics-port")
        }
        return failure(error, address: "\(host):\(port)", what: "--port")
    }

    private static func failure(_ error: any Error, address: String, what: String) -> CommandFailure {
        let reason: String
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE: reason = "the address is in use (another server listens there)"
        case EACCES: reason = "permission denied (ports below 1024 need a privilege)"
        case EADDRNOTAVAIL: reason = "no network interface of this machine has that address"
        default:
            reason = error is SocketAddressError ? "the host name does not resolve" : String(describing: error)
        }
        return CommandFailure("cannot listen on \(address) (\(what)): \(reason)", hint: "choose another \(what), or stop what listens there")
    }
}

/// SIGHUP: reads the TLS certificate and key again. Without a certificate it logs that there is
/// nothing to reload; either way SIGHUP never ends the server.
struct CertificateReloading: Service {
    let certificate: ServerCertificate?
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            guard let certificate else {
                logger.notice("SIGHUP: no TLS certificate to reload (the server runs without --cert)")
                continue
            }
            do {
                try certificate.reload()
                logger.notice("TLS certificate reloaded: new connections use it", metadata: ["certificate": .string(certificate.certificatePath)])
            } catch {
                logger.error("TLS certificate not reloaded: the one in use stays", metadata: ["reason": .string(error.reason)])
            }
        }
    }
}

/// The separate listener that serves `/metrics`.
enum MetricsListener {
    static func application(
        registry: PrometheusCollectorRegistry, host: String, port: Int, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void
    ) -> some Service {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            var buffer = ByteBuffer(bytes: registry.emitToBuffer())
            buffer.writeString(ProcessMetrics.text(version: CofferVersion.number, commit: CofferVersion.commit))
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"], body: ResponseBody(byteBuffer: buffer))
        }
        return Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "coffer-metrics"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
