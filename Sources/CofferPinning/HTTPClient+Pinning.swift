public import AsyncHTTPClient
import NIOCore
import NIOSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPClient.Configuration {
    /// A configuration for a client that talks to `host` only, every connection held to `host`'s rule
    /// of `evaluator`'s policy.
    ///
    /// ```swift
    /// let evaluator = PinningEvaluator(policy: policy)
    /// let api = HTTPClient(eventLoopGroupProvider: .singleton,
    ///                      configuration: try .pinned(by: evaluator, host: "api.example.com"))
    /// ```
    ///
    /// How: BoringSSL validates the chain and host name against the policy's anchors (the TLS
    /// configuration of ``PinningPolicy/makeTLSConfiguration()``). Then, before the connection carries
    /// a request, the server's certificate is validated again with swift-certificates **for `host`**
    /// (path to the anchors and RFC 6125 identity), and `host`'s rule applies to that path. A connection
    /// that fails is closed, and the request fails with `PinningError` (`.pinMismatch` or
    /// `.chainNotTrusted`) before a byte of it is sent.
    ///
    /// The host is part of the configuration because AsyncHTTPClient does not tell a connection hook
    /// which host a request asked for, and the certificate cannot say it: NIOSSL accepts a certificate
    /// whose IP subjectAltName equals the connected address whatever name was asked for. So:
    /// - Make one client per host you call (docs/PINNING.md, "AsyncHTTPClient"). A request this client
    ///   sends to another host reaches only a server that proves to be `host` under `host`'s rule;
    ///   any other is refused after the handshake, before the request is sent.
    /// - Redirects are not followed (`redirectConfiguration = .disallow`): the 3xx response is returned,
    ///   and a request to its `Location` goes through the client for that host, under that host's rule.
    /// - A connection without NIOSSL's TLS (plain http, or Network.framework's TLS on Apple platforms
    ///   with a `NIOTSEventLoopGroup`) has no certificate to check: refused when `host`'s rule enforces.
    ///   On Apple platforms, give the client a `MultiThreadedEventLoopGroup`, or use
    ///   `PinningURLSessionDelegate`.
    ///
    /// AsyncHTTPClient exposes only the server's own certificate after the handshake, so intermediate or
    /// root pins can match only when the path can be rebuilt from the leaf, `knownIntermediates` and the
    /// policy's anchors (otherwise only the leaf can match). Pins of your own server keys (current and
    /// backup) always work; for intermediate pins pass the intermediates, or use a raw SwiftNIO client
    /// with ``PinningEvaluator/makeClientHandler(context:serverHostname:)``, which sees the whole chain.
    ///
    /// The configuration also turns off AsyncHTTPClient's retrying of failed connection attempts
    /// (`connectionPool.retryConnectionEstablishment`), so a refused server fails the request at once
    /// with the `PinningError` instead of after the request's deadline; set it back to `true` to
    /// retry transient network failures too.
    ///
    /// - Parameters:
    ///   - evaluator: the policy (anchors and host rules) and its report callback.
    ///   - host: the host this client talks to: a DNS name or an IP literal, without scheme or port.
    ///   - knownIntermediates: intermediates to rebuild the validated path with.
    /// - Throws: `PinningError` `.invalidPolicy` for a `host` that is not a host name alone; what
    ///   ``PinningPolicy/makeTLSConfiguration()`` throws.
    public static func pinned(by evaluator: PinningEvaluator, host: String, knownIntermediates: [ChainCertificate] = []) throws -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        try configuration.applyPinning(evaluator, host: host, knownIntermediates: knownIntermediates)
        return configuration
    }

    /// Binds this configuration to `host` and applies `evaluator`'s rule for it to every connection, as
    /// ``pinned(by:host:knownIntermediates:)`` does: replaces the TLS configuration (keeping a client
    /// certificate), turns redirects off, and runs before any connection initializer already set. With
    /// connection retries on (AsyncHTTPClient's default), a refused server fails the request with the
    /// `PinningError` when the request's deadline passes.
    /// - Throws: `PinningError` `.invalidPolicy` for a `host` that is not a host name alone; what
    ///   ``PinningPolicy/makeTLSConfiguration()`` throws.
    public mutating func applyPinning(_ evaluator: PinningEvaluator, host: String, knownIntermediates: [ChainCertificate] = []) throws {
        let name = try HostNames.validated(host)
        redirectConfiguration = .disallow
        try install(evaluator, host: name, knownIntermediates: knownIntermediates)
    }

    /// A configuration whose connections cannot tell which host they are for: it refuses every
    /// connection when `evaluator`'s policy has a rule that enforces now (``PinningVerdict/requestedHostUnknown``),
    /// and otherwise only validates chains against the policy's anchors.
    ///
    /// Until issue 42 this chose the rules by the names in the server's certificate, which let a
    /// certificate for another name that carries the connected IP address pass as unpinned.
    @available(*, deprecated, message: "the host asked for cannot be known here, so a policy that enforces pins refuses every connection; use pinned(by:host:knownIntermediates:), one client per host")
    public static func pinned(by evaluator: PinningEvaluator, knownIntermediates: [ChainCertificate] = []) throws -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        try configuration.install(evaluator, host: nil, knownIntermediates: knownIntermediates)
        return configuration
    }

    /// Applies `evaluator`'s policy without a host: every connection is refused when the policy has a
    /// rule that enforces now; see the deprecated `pinned(by:knownIntermediates:)`.
    @available(*, deprecated, message: "the host asked for cannot be known here, so a policy that enforces pins refuses every connection; use applyPinning(_:host:knownIntermediates:), one client per host")
    public mutating func applyPinning(_ evaluator: PinningEvaluator, knownIntermediates: [ChainCertificate] = []) throws {
        try install(evaluator, host: nil, knownIntermediates: knownIntermediates)
    }

    /// Installs the policy's TLS configuration and the check of every new connection, for `host` (nil:
    /// unknown).
    private mutating func install(_ evaluator: PinningEvaluator, host: String?, knownIntermediates: [ChainCertificate]) throws {
        var tls = try evaluator.policy.makeTLSConfiguration()
        if let existing = tlsConfiguration {
            tls.certificateChain = existing.certificateChain
            tls.privateKey = existing.privateKey
        }
        tlsConfiguration = tls
        let check: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
            Self.check(channel, evaluator: evaluator, host: host, knownIntermediates: knownIntermediates)
        }
        let http1 = http1_1ConnectionDebugInitializer
        let http2 = http2ConnectionDebugInitializer
        http1_1ConnectionDebugInitializer = { channel in
            check(channel).flatMap { http1?(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
        }
        http2ConnectionDebugInitializer = { channel in
            check(channel).flatMap { http2?(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
        }
    }

    /// Succeeds when the connection `channel` may carry requests for `host`; otherwise closes it and fails
    /// with the `PinningError`.
    private static func check(_ channel: any Channel, evaluator: PinningEvaluator, host: String?, knownIntermediates: [ChainCertificate]) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.pipeline.handler(type: NIOSSLHandler.self).whenComplete { found in
            guard case .success(let handler) = found else {
                // No NIOSSL handshake: plain http, or another TLS stack. Nothing to check, so a rule that
                // enforces refuses.
                let outcome = host.map { evaluator.evaluateWithoutTLS(hostname: $0) } ?? evaluator.evaluateForUnknownHost(validatedLeaf: nil)
                promise.completeWith(Result { try accept(outcome) })
                return
            }
            guard let der = handler.peerCertificate.flatMap({ try? $0.toDERBytes() }) else {
                promise.fail(PinningError(.chainNotTrusted, "the server presented no certificate"))
                return
            }
            guard let host else {
                let leaf = try? ChainCertificate(der: der)
                promise.completeWith(Result { try accept(evaluator.evaluateForUnknownHost(validatedLeaf: leaf)) })
                return
            }
            // A path rebuilt before for this leaf and host: only the pins are checked, without leaving the event loop.
            if let outcome = evaluator.cachedEvaluation(validatedLeaf: der, intermediates: knownIntermediates, hostname: host, at: Date()) {
                promise.completeWith(Result { try accept(outcome) })
                return
            }
            guard let leaf = try? ChainCertificate(der: der) else {
                promise.fail(PinningError(.chainNotTrusted, "the server's certificate could not be parsed"))
                return
            }
            promise.completeWithValidation {
                try accept(await evaluator.evaluate(validatedLeaf: leaf, intermediates: knownIntermediates, hostname: host))
            }
        }
        return promise.futureResult.flatMapError { error in
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// Throws the `PinningError` for an outcome that rejects the connection.
    private static func accept(_ outcome: PinningReport) throws {
        switch outcome.verdict {
        case _ where outcome.isAccepted:
            return
        case .chainNotTrusted(let reason):
            throw PinningError(.chainNotTrusted, "the server's certificate is not valid for \(outcome.host): \(reason)")
        case .requestedHostUnknown:
            throw PinningError(.pinMismatch, "the connection was refused: this client's configuration does not say which host it is for, and the policy enforces pins; make the client with pinned(by:host:)")
        default:
            if outcome.servedChain.isEmpty {
                throw PinningError(.pinMismatch, "\(outcome.host) is pinned, but its connection carries no TLS certificate to check (plain http, or TLS that is not NIOSSL's)")
            }
            throw PinningError(.pinMismatch, "no pin of the policy for \(outcome.rule?.host ?? outcome.host) matched the server's certificates (\(outcome.verdict))")
        }
    }
}
