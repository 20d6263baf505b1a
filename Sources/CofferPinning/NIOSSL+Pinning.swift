import NIOCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import NIOSSL
import SwiftASN1
import X509

extension PinningPolicy {
    /// A client TLS configuration that trusts this policy's anchors and verifies chains and hostnames
    /// (`.fullVerification`): the base for ``PinningEvaluator/makeClientHandler(configuration:serverHostname:)``
    /// and for AsyncHTTPClient.
    /// - Throws: when an anchor cannot be handed to BoringSSL.
    public func makeTLSConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        configuration.minimumTLSVersion = .tlsv12
        switch trust {
        case .system:
            configuration.trustRoots = .default
        case .only(let anchors):
            configuration.trustRoots = .certificates(try anchors.map(Self.nioCertificate))
        case .systemAnd(let anchors):
            configuration.trustRoots = .default
            configuration.additionalTrustRoots = [.certificates(try anchors.map(Self.nioCertificate))]
        }
        return configuration
    }

    static func nioCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: derBytes(of: certificate), format: .der)
    }

    static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}

extension PinningEvaluator {
    /// A NIOSSL custom verification callback for a connection to `hostname` that replaces BoringSSL's
    /// verification with this evaluator's: chain and hostname validation, then the pins. The
    /// handshake fails unless the verdict accepts; the validated chain is handed to NIOSSL, so
    /// `NIOSSLHandler.peerValidatedCertificateChain` reports it afterwards.
    public func verificationCallback(hostname: String) -> NIOSSLCustomVerificationCallbackWithMetadata {
        let name = HostNames.normalized(hostname)
        return { certificates, promise in
            let der: [[UInt8]]
            do {
                der = try certificates.map { try $0.toDERBytes() }
            } catch {
                promise.succeed(.failed)
                return
            }
            // A chain validated before for this host: only the pins are checked, without leaving the event loop.
            if let outcome = self.cachedEvaluation(servedChain: der, hostname: name, at: Date()) {
                promise.succeed(self.verificationResult(outcome, served: der, certificates))
                return
            }
            promise.completeWithValidation {
                self.verificationResult(await self.evaluate(servedChain: der, hostname: name), served: der, certificates)
            }
        }
    }

    /// NIOSSL's answer for an evaluation: failed unless accepted, else the validated chain, reusing the
    /// certificates the server sent and BoringSSL's copy of the anchor.
    private func verificationResult(
        _ outcome: PinningReport, served der: [[UInt8]], _ certificates: [NIOSSLCertificate]
    ) -> NIOSSLVerificationResultWithMetadata {
        guard outcome.isAccepted, !outcome.validatedChain.isEmpty else { return .failed }
        var validated: [NIOSSLCertificate] = []
        for certificate in outcome.validatedChain {
            if let sent = zip(der, certificates).first(where: { $0.0 == certificate.der })?.1 {
                validated.append(sent)
            } else if let anchor = anchors.boringSSLCopy(of: certificate.der) {
                validated.append(anchor)
            } else {
                return .failed
            }
        }
        return .certificateVerified(VerificationMetadata(ValidatedCertificateChain(validated)))
    }

    /// A client TLS handler for a raw SwiftNIO channel that applies this evaluator to `serverHostname`
    /// (also sent as SNI unless it is an IP address).
    /// - Parameters:
    ///   - configuration: the TLS configuration; by default ``PinningPolicy/makeTLSConfiguration()``.
    ///     Its certificate verification must not be `.none`.
    ///   - serverHostname: the name the server must prove, sent as SNI unless it is an IP address.
    public func makeClientHandler(configuration: TLSConfiguration? = nil, serverHostname: String) throws -> NIOSSLClientHandler {
        let context = try NIOSSLContext(configuration: configuration ?? policy.makeTLSConfiguration())
        return try makeClientHandler(context: context, serverHostname: serverHostname)
    }

    /// A client TLS handler on an existing context (reuse one context for many connections; building
    /// a context loads the trust store).
    public func makeClientHandler(context: NIOSSLContext, serverHostname: String) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(
            context: context,
            serverHostname: Self.isIPAddress(serverHostname) ? nil : serverHostname,
            customVerificationCallbackWithMetadata: verificationCallback(hostname: serverHostname)
        )
    }
}

extension AnchorEncodings {
    /// BoringSSL's copy of an anchor (DER), parsed once per evaluator rather than on every handshake.
    func boringSSLCopy(of der: [UInt8]) -> NIOSSLCertificate? {
        if let found = boringSSLCopies.withLockedValue({ $0[der] }) { return found }
        guard let copy = try? NIOSSLCertificate(bytes: der, format: .der) else { return nil }
        boringSSLCopies.withLockedValue { copies in
            if copies.count >= 1_024 { copies.removeAll() }
            copies[der] = copy
        }
        return copy
    }
}
