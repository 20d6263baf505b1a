#if canImport(Security) && canImport(Darwin)
public import Foundation
import Security

/// A `URLSessionDelegate` that applies a ``PinningPolicy`` on Apple platforms: the system's trust
/// evaluation (chain and hostname, with the policy's anchors when it names its own) first, then the
/// host's pins against the evaluated chain, reporting every evaluation to the evaluator's callback.
///
/// ```swift
/// let delegate = PinningURLSessionDelegate(evaluator: PinningEvaluator(policy: policy))
/// let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
/// ```
public final class PinningURLSessionDelegate: NSObject, URLSessionDelegate, Sendable {
    /// The evaluator applied to every server trust challenge.
    public let evaluator: PinningEvaluator

    /// A delegate applying `evaluator`.
    public init(evaluator: PinningEvaluator) {
        self.evaluator = evaluator
    }

    /// Answers a server-trust challenge: the system's evaluation for the host, then the pins; anything else gets the default handling.
    public func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust
        else { return (.performDefaultHandling, nil) }
        let host = challenge.protectionSpace.host
        SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
        switch evaluator.policy.trust {
        case .system:
            break
        case .only(let anchors), .systemAnd(let anchors):
            let certificates = anchors.compactMap { anchor -> SecCertificate? in
                guard let der = try? PinningPolicy.derBytes(of: anchor) else { return nil }
                return SecCertificateCreateWithData(nil, Data(der) as CFData)
            }
            SecTrustSetAnchorCertificates(trust, certificates as CFArray)
            if case .systemAnd = evaluator.policy.trust { SecTrustSetAnchorCertificatesOnly(trust, false) }
        }
        var error: CFError?
        let trusted = SecTrustEvaluateWithError(trust, &error)
        let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate] ?? []).compactMap {
            try? ChainCertificate(der: Array(SecCertificateCopyData($0) as Data))
        }
        let report = evaluator.evaluateSystemValidated(chain: chain, trusted: trusted, failure: error.map { "\($0)" }, hostname: host)
        return report.isAccepted ? (.useCredential, URLCredential(trust: trust)) : (.cancelAuthenticationChallenge, nil)
    }
}
#endif
