public import AsyncHTTPClient
import NIOCore
import NIOSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPClient.Configuration {
    /// A configuration whose connections apply `evaluator`'s policy.
    ///
    /// ```swift
    /// let client = HTTPClient(eventLoopGroupProvider: .singleton,
    ///                         configuration: try .pinned(by: PinningEvaluator(policy: policy)))
    /// ```
    ///
    /// How: BoringSSL validates the chain and hostname against the policy's anchors (the TLS
    /// configuration of ``PinningPolicy/makeTLSConfiguration()``), then, before the connection carries
    /// a request, the pins are checked on the validated server certificate; a connection that fails them
    /// is closed and the request fails with ``PinningError`` `.pinMismatch`.
    ///
    /// - Important: AsyncHTTPClient exposes only the server's own certificate after the handshake, and
    ///   not the host it asked for. So every rule that covers one of the certificate's DNS names applies
    ///   (and every IP-literal rule naming one of its IP subjectAltNames), and a certificate with no DNS
    ///   subjectAltName — named by its common name or an IP address, so it could stand for any pinned
    ///   host — is refused by a policy with rules unless an IP-literal rule selects it and holds
    ///   (docs/PINNING.md, "One decision for every integration"). Intermediate or root pins can match
    ///   only when the path can be rebuilt from the leaf, `knownIntermediates` and the policy's anchors. Pins of your own server keys (current and
    ///   backup) always work; for intermediate pins pass the intermediates, or use a raw SwiftNIO client
    ///   with ``PinningEvaluator/makeClientHandler(context:serverHostname:)``, which sees the whole chain.
    ///
    /// The configuration also turns off AsyncHTTPClient's retrying of failed connection attempts
    /// (`connectionPool.retryConnectionEstablishment`), so a refused server fails the request at once
    /// with the ``PinningError`` instead of after the request's deadline; set it back to `true` to
    /// retry transient network failures too.
    public static func pinned(by evaluator: PinningEvaluator, knownIntermediates: [ChainCertificate] = []) throws -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        try configuration.applyPinning(evaluator, knownIntermediates: knownIntermediates)
        return configuration
    }

    /// Applies `evaluator`'s policy to this configuration's connections, replacing its TLS configuration
    /// (keeping a client certificate) and running before any connection initializer already set. See
    /// ``pinned(by:knownIntermediates:)``. With connection retries on (AsyncHTTPClient's default), a
    /// refused server fails the request with the ``PinningError`` when the request's deadline passes.
    public mutating func applyPinning(_ evaluator: PinningEvaluator, knownIntermediates: [ChainCertificate] = []) throws {
        var tls = try evaluator.policy.makeTLSConfiguration()
        if let existing = tlsConfiguration {
            tls.certificateChain = existing.certificateChain
            tls.privateKey = existing.privateKey
        }
        tlsConfiguration = tls
        let check: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.pipeline.handler(type: NIOSSLHandler.self).whenComplete { found in
                guard case .success(let handler) = found else {
                    // Plain http: no TLS to pin.
                    promise.succeed(())
                    return
                }
                guard let der = handler.peerCertificate.flatMap({ try? $0.toDERBytes() }) else {
                    promise.fail(PinningError(.chainNotTrusted, "the server presented no certificate"))
                    return
                }
                // A path rebuilt before for this leaf: only the pins are checked, without leaving the event loop.
                if let outcome = evaluator.cachedEvaluation(validatedLeaf: der, intermediates: knownIntermediates, at: Date()) {
                    promise.completeWith(Result { try Self.accept(outcome) })
                    return
                }
                guard let leaf = try? ChainCertificate(der: der) else {
                    promise.fail(PinningError(.chainNotTrusted, "the server's certificate could not be parsed"))
                    return
                }
                promise.completeWithValidation {
                    try Self.accept(await evaluator.evaluate(validatedLeaf: leaf, intermediates: knownIntermediates))
                }
            }
            return promise.futureResult.flatMapError { error in
                channel.close(promise: nil)
                return channel.eventLoop.makeFailedFuture(error)
            }
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

    /// Throws the ``PinningError`` for an outcome that rejects the connection.
    private static func accept(_ outcome: PinningReport) throws {
        guard outcome.isAccepted else {
            throw PinningError(.pinMismatch, "no pin of the policy for \(outcome.rule?.host ?? outcome.host) matched the server's certificates (\(outcome.verdict))")
        }
    }
}
