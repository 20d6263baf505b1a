import NIOConcurrencyHelpers
public import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// One TLS handshake with a server, for tools: what chain does it serve, and does a policy hold for it?
/// The connection is closed right after the handshake; no application data is sent.
public enum TLSProbe {
    /// The chain `host:port` serves (leaf first), without trusting it: for discovering pins.
    /// - Parameters:
    ///   - host: the server's name or IP address.
    ///   - port: its TLS port.
    ///   - serverName: the SNI name to send (default: `host` unless it is an IP address).
    ///   - timeout: how long the connection and handshake may take.
    /// - Throws: `PinningError` `.connectionFailed` when the connection or handshake fails,
    ///   `.malformedCertificate` when a served certificate cannot be parsed.
    public static func servedChain(host: String, port: Int, serverName: String? = nil, timeout: TimeAmount = .seconds(10)) async throws(PinningError) -> [ChainCertificate] {
        let captured = NIOLockedValueBox<[NIOSSLCertificate]>([])
        var configuration = TLSConfiguration.makeClientConfiguration()
        // Hostname checks are the evaluator's job; here every chain is accepted so that it can be shown.
        configuration.certificateVerification = .noHostnameVerification
        let sni = serverName ?? (PinningEvaluator.isIPAddress(host) ? nil : host)
        try await handshake(host: host, port: port, configuration: configuration, timeout: timeout) { context in
            try NIOSSLClientHandler(context: context, serverHostname: sni, customVerificationCallbackWithMetadata: { certificates, promise in
                captured.withLockedValue { $0 = certificates }
                promise.succeed(.certificateVerified(VerificationMetadata(nil)))
            })
        }
        var chain: [ChainCertificate] = []
        for certificate in captured.withLockedValue({ $0 }) {
            guard let der = try? certificate.toDERBytes() else {
                throw PinningError(.malformedCertificate, "the server sent a certificate that cannot be encoded")
            }
            chain.append(try ChainCertificate(der: der))
        }
        return chain
    }

    /// Connects to `host:port` with `evaluator` and returns its report.
    /// - Parameters:
    ///   - host: the server's name or IP address.
    ///   - port: its TLS port.
    ///   - serverName: the name to validate and send as SNI (default: `host`).
    ///   - evaluator: the pinning decision to apply.
    ///   - timeout: how long the connection and handshake may take.
    /// - Throws: `PinningError` `.connectionFailed` when the connection fails before any certificate
    ///   was evaluated; a rejected chain is a report with a rejecting verdict, not an error.
    public static func check(host: String, port: Int, serverName: String? = nil, evaluator: PinningEvaluator, timeout: TimeAmount = .seconds(10)) async throws(PinningError) -> PinningReport {
        let outcome = NIOLockedValueBox<PinningReport?>(nil)
        let name = serverName ?? host
        let recording = PinningEvaluator(policy: evaluator.policy) { report in
            outcome.withLockedValue { $0 = report }
            evaluator.report?(report)
        }
        let configuration: TLSConfiguration
        do {
            configuration = try evaluator.policy.makeTLSConfiguration()
        } catch {
            throw PinningError(.connectionFailed, "the TLS configuration could not be built: \(error)", underlying: error)
        }
        do {
            try await handshake(host: host, port: port, configuration: configuration, timeout: timeout) { context in
                try recording.makeClientHandler(context: context, serverHostname: name)
            }
        } catch {
            // A rejected chain fails the handshake; the report says why.
            if let report = outcome.withLockedValue({ $0 }) { return report }
            throw error
        }
        guard let report = outcome.withLockedValue({ $0 }) else {
            throw PinningError(.connectionFailed, "the handshake with \(host):\(port) completed without a certificate evaluation")
        }
        return report
    }

    private static func handshake(
        host: String, port: Int, configuration: TLSConfiguration, timeout: TimeAmount,
        makeHandler: @escaping @Sendable (NIOSSLContext) throws -> NIOSSLClientHandler
    ) async throws(PinningError) {
        do {
            let context = try NIOSSLContext(configuration: configuration)
            let group = MultiThreadedEventLoopGroup.singleton
            let done = group.any().makePromise(of: Void.self)
            let channel: any Channel
            do {
                channel = try await ClientBootstrap(group: group)
                    .connectTimeout(timeout)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(try makeHandler(context))
                            try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(done: done))
                        }
                    }
                    .connect(host: host, port: port).get()
            } catch {
                done.fail(error)
                throw error
            }
            let deadline = channel.eventLoop.scheduleTask(in: timeout) {
                done.fail(PinningError(.connectionFailed, "no TLS handshake with \(host):\(port) within \(timeout.nanoseconds / 1_000_000_000) s"))
            }
            defer { deadline.cancel() }
            do {
                try await done.futureResult.get()
            } catch {
                try? await channel.close()
                throw error
            }
            try? await channel.close()
        } catch let error as PinningError {
            throw error
        } catch let error as NIOConnectionError {
            let cause = error.connectionErrors.last.map { "\($0.error)" } ?? error.dnsAAAAError.map { "\($0)" } ?? "\(error)"
            throw PinningError(.connectionFailed, "could not connect to \(host):\(port): \(cause)")
        } catch {
            throw PinningError(.connectionFailed, "could not complete a TLS handshake with \(host):\(port): \(error)", underlying: error)
        }
    }
}

/// Completes `done` when the handshake completes, fails it on the first error or when the connection
/// closes first.
private final class HandshakeWatcher: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let done: EventLoopPromise<Void>

    init(done: EventLoopPromise<Void>) { self.done = done }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { done.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(PinningError(.connectionFailed, "the server closed the connection during the handshake"))
        context.fireChannelInactive()
    }
}
