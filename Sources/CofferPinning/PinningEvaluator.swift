#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOConcurrencyHelpers
import NIOSSL
import SwiftASN1
import X509

/// Applies a ``PinningPolicy`` to a server's certificate chain: first normal chain validation (RFC 5280
/// path building to the policy's trust anchors, validity dates, key usage) and hostname validation,
/// then — only for a chain that passed — the host's pins against the certificates of the *validated*
/// path in the allowed positions. Certificates the server sent but the path does not use never match,
/// so an attacker cannot pass by appending the real server's intermediate to its own chain.
///
/// ```swift
/// let evaluator = PinningEvaluator(policy: policy) { report in
///     if !report.isAccepted || report.verdict == .reportOnlyMismatch { log(report) }
/// }
/// let report = await evaluator.evaluate(servedChain: derCertificates, hostname: "api.example.com")
/// ```
public struct PinningEvaluator: Sendable {
    /// The policy applied.
    public let policy: PinningPolicy
    /// Called once per evaluation, after the verdict, on the thread that evaluated.
    public let report: (@Sendable (PinningReport) -> Void)?
    /// Chains already validated; nil when caching is off.
    let cache: ValidationCache?
    /// The anchors met on validated paths, with their encodings (parsed once, not per connection).
    let anchors = AnchorEncodings()

    /// An evaluator for `policy`, calling `report` (if given) with every evaluation's report.
    /// - Parameters:
    ///   - policy: the hosts' pins and the trust anchors.
    ///   - report: called with every evaluation's report, for logging and metrics.
    ///   - validationCacheLifetime: how long a chain that passed validation is remembered, so
    ///     that the next connection to the same server presenting the very same certificates skips path
    ///     building and signature checks and only checks the pins (five minutes by default; `.zero` turns
    ///     the cache off). An entry never outlives the earliest expiry of its certificates; failures are
    ///     never remembered; the pins and the policy's expiry are checked on every connection.
    public init(
        policy: PinningPolicy,
        validationCacheLifetime: Duration = .seconds(300),
        report: (@Sendable (PinningReport) -> Void)? = nil
    ) {
        self.policy = policy
        self.report = report
        self.cache = validationCacheLifetime > .zero ? ValidationCache(lifetime: validationCacheLifetime) : nil
    }

    /// Evaluates a chain as served (leaf first, DER) for a connection to `hostname` (a DNS name or an
    /// IP address literal). Unparseable certificates make the verdict ``PinningVerdict/chainNotTrusted(_:)``.
    public func evaluate(servedChain der: [[UInt8]], hostname: String) async -> PinningReport {
        let date = Date()
        let name = HostNames.normalized(hostname)
        if let cached = cachedEvaluation(servedChain: der, hostname: name, at: date) { return cached }
        let served: [ChainCertificate]
        do {
            served = try der.map { bytes throws(PinningError) in try ChainCertificate(der: bytes) }
        } catch {
            return finish(PinningReport(host: name, servedChain: [], validatedChain: [], rule: policy.rule(for: name), verdict: .chainNotTrusted(error.reason), date: date))
        }
        return await evaluateUncached(served, hostname: name, at: date)
    }

    /// Evaluates parsed certificates as served (leaf first) for a connection to `hostname`.
    public func evaluate(servedChain served: [ChainCertificate], hostname: String) async -> PinningReport {
        let date = Date()
        let name = HostNames.normalized(hostname)
        if let cached = cachedEvaluation(servedChain: served.map(\.der), hostname: name, at: date) { return cached }
        return await evaluateUncached(served, hostname: name, at: date)
    }

    /// The report for a chain whose validation for `name` is cached, without suspending; nil when the
    /// chain must be validated first.
    func cachedEvaluation(servedChain der: [[UInt8]], hostname name: String, at date: Date) -> PinningReport? {
        guard let entry = cache?.entry(for: .serverChain, served: der, hostname: name, at: date) else { return nil }
        return finish(pinReport(host: name, served: entry.served, validated: entry.validated, at: date))
    }

    private func evaluateUncached(_ served: [ChainCertificate], hostname name: String, at date: Date) async -> PinningReport {
        switch await validate(served, hostname: name) {
        case .failure(let reason):
            return finish(PinningReport(host: name, servedChain: served, validatedChain: [], rule: policy.rule(for: name), verdict: .chainNotTrusted(reason.description), date: date))
        case .success(let validated):
            cache?.store(.serverChain, served: served, validated: validated, hostname: name, at: date)
            return finish(pinReport(host: name, served: served, validated: validated, at: date))
        }
    }

    /// The host's rule applied to a validated path.
    private func pinReport(host name: String, served: [ChainCertificate], validated: [ChainCertificate], at date: Date) -> PinningReport {
        let (rule, verdict) = decision(on: validated, requestedHost: name, at: date)
        return PinningReport(host: name, servedChain: served, validatedChain: validated, rule: rule, verdict: verdict, date: date)
    }

    /// The one decision every integration makes — the SwiftNIO handler, AsyncHTTPClient, URLSession and
    /// the CLI's probe — on a path that already passed chain validation and the identity check for the
    /// host the client asked for (leaf first).
    ///
    /// - The rule is chosen by `requestedHost`, the host the client asked for, and by nothing else: that
    ///   host's rule applies, or none (`notPinned`). The names a certificate carries never choose or skip a
    ///   rule: a certificate for another name that carries the connected IP address would otherwise pass
    ///   as unpinned.
    /// - Where the integration cannot know that host (`requestedHost` nil: the deprecated host-less
    ///   AsyncHTTPClient configuration), no rule can be chosen: a policy with a rule that enforces at
    ///   `date` refuses (`requestedHostUnknown`); one without lets the validated connection through.
    func decision(on path: [ChainCertificate], requestedHost: String?, at date: Date) -> (HostPins?, PinningVerdict) {
        guard let requestedHost else {
            return policy.hosts.contains { $0.isEnforcing(at: date) } ? (nil, .requestedHostUnknown) : (nil, .notPinned)
        }
        let rule = policy.rule(for: requestedHost)
        return (rule, rule.map { Self.verdict(of: $0, on: path, at: date) } ?? .notPinned)
    }

    /// Evaluates a leaf that BoringSSL already validated for an AsyncHTTPClient connection (chain to the
    /// policy's anchors, host name) on a client bound to `hostname`.
    ///
    /// BoringSSL's check is not enough to choose pins by: NIOSSL accepts a leaf whose IP subjectAltName
    /// equals the connected address whatever name was asked for, and the client may have been sent to
    /// another host. So the leaf is validated again with swift-certificates for `hostname` — the path
    /// from the leaf, `intermediates` and the policy's anchors, and RFC 6125 identity — and `hostname`'s
    /// rule applies to that path. When the path cannot be rebuilt (an intermediate the server sent but
    /// `intermediates` lacks) the leaf alone can match, once its identity for `hostname` holds; a leaf
    /// that is not valid for `hostname` is refused (`chainNotTrusted`).
    func evaluate(validatedLeaf leaf: ChainCertificate, intermediates: [ChainCertificate], hostname: String) async -> PinningReport {
        let date = Date()
        let name = HostNames.normalized(hostname)
        if let cached = cachedEvaluation(validatedLeaf: leaf.der, intermediates: intermediates, hostname: name, at: date) { return cached }
        let served = [leaf] + intermediates
        switch await validate(served, hostname: name) {
        case .success(let validated):
            cache?.store(.validatedLeaf, served: served, validated: validated, hostname: name, at: date)
            return finish(pinReport(host: name, served: [leaf], validated: validated, at: date))
        case .failure(let failure):
            guard await Self.identityHolds(for: leaf, hostname: name) else {
                return finish(PinningReport(host: name, servedChain: [leaf], validatedChain: [], rule: policy.rule(for: name), verdict: .chainNotTrusted(failure.description), date: date))
            }
            return finish(pinReport(host: name, served: [leaf], validated: [leaf], at: date))
        }
    }

    /// The report for a validated leaf (DER) whose path for `name` is cached, without suspending; nil otherwise.
    func cachedEvaluation(validatedLeaf der: [UInt8], intermediates: [ChainCertificate], hostname name: String, at date: Date) -> PinningReport? {
        let served = [der] + intermediates.map(\.der)
        guard let entry = cache?.entry(for: .validatedLeaf, served: served, hostname: name, at: date), let leaf = entry.served.first else { return nil }
        return finish(pinReport(host: name, served: [leaf], validated: entry.validated, at: date))
    }

    /// The report for a connection whose host is unknown (the deprecated host-less AsyncHTTPClient
    /// configuration): `leaf` as BoringSSL validated it (nil for a connection without NIOSSL's TLS),
    /// refused by a policy that enforces a rule now.
    func evaluateForUnknownHost(validatedLeaf leaf: ChainCertificate?) -> PinningReport {
        let date = Date()
        let path = leaf.map { [$0] } ?? []
        let (rule, verdict) = decision(on: path, requestedHost: nil, at: date)
        return finish(PinningReport(host: "", servedChain: path, validatedChain: path, rule: rule, verdict: verdict, date: date))
    }

    /// The report for a connection to `hostname` that carries no TLS this integration can check (plain
    /// http, or a TLS stack other than NIOSSL): the host's rule on an empty path, so a rule that enforces
    /// refuses it.
    func evaluateWithoutTLS(hostname: String) -> PinningReport {
        let date = Date()
        let name = HostNames.normalized(hostname)
        return finish(pinReport(host: name, served: [], validated: [], at: date))
    }

    fileprivate func finish(_ outcome: PinningReport) -> PinningReport {
        report?(outcome)
        return outcome
    }

    /// Chain and hostname validation with swift-certificates.
    private func validate(_ served: [ChainCertificate], hostname: String) async -> Result<[ChainCertificate], ValidationFailure> {
        guard let leaf = served.first else { return .failure(ValidationFailure("the server sent no certificate")) }
        var verifier = Verifier(rootCertificates: policy.rootStore) {
            RFC5280Policy()
            Self.identityPolicy(for: hostname)
        }
        let intermediates = CertificateStore(served.dropFirst().map(\.certificate))
        switch await verifier.validate(leaf: leaf.certificate, intermediates: intermediates) {
        case .validCertificate(let chain):
            return .success(anchors.chainCertificates(for: Array(chain), served: served))
        case .couldNotValidate(let failures):
            let reason = failures.first.map { "\($0.policyFailureReason)" }
                ?? "no path from \(leaf.subject) (issued by \(leaf.issuer)) to a trusted root"
            return .failure(ValidationFailure(reason))
        }
    }

    /// swift-certificates' identity check for `hostname` (a DNS name, or an IP literal with or without
    /// brackets).
    static func identityPolicy(for hostname: String) -> ServerIdentityPolicy {
        let isIP = isIPAddress(hostname)
        return ServerIdentityPolicy(serverHostname: isIP ? nil : hostname, serverIP: isIP ? String(hostname.filter { $0 != "[" && $0 != "]" }) : nil)
    }

    struct ValidationFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The verdict of `rule` on a validated path (leaf first, anchor last).
    static func verdict(of rule: HostPins, on path: [ChainCertificate], at date: Date) -> PinningVerdict {
        var matchedPin: Pin?
        for (index, certificate) in path.enumerated() {
            let position: HostPins.Positions = if index == 0 && path.count == 1 {
                [.leaf, .root]
            } else if index == 0 {
                .leaf
            } else if index == path.count - 1 {
                .root
            } else {
                .intermediates
            }
            guard !rule.positions.isDisjoint(with: position) else { continue }
            if let pin = rule.pins.first(where: { $0 == certificate.pin($0.kind) }) {
                matchedPin = pin
                break
            }
        }
        if let expires = rule.expires, expires <= date, rule.afterExpiry == .validateOnly {
            return .expiredPolicy(matched: matchedPin != nil)
        }
        if let pin = matchedPin { return .matched(pin) }
        return rule.enforcement == .enforce ? .mismatch : .reportOnlyMismatch
    }

    /// Whether `leaf` is valid for `hostname` by swift-certificates' RFC 6125 identity check alone (a DNS
    /// name matches DNS subjectAltNames, or the common name when there are none; an IP literal matches IP
    /// subjectAltNames), for a leaf whose chain BoringSSL already validated.
    static func identityHolds(for leaf: ChainCertificate, hostname: String) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore([leaf.certificate])) {
            LeafIdentityPolicy(leaf: leaf.certificate, hostname: hostname)
        }
        if case .validCertificate = await verifier.validate(leaf: leaf.certificate, intermediates: CertificateStore()) { return true }
        return false
    }

    static func isIPAddress(_ host: String) -> Bool {
        HostNames.canonicalIP(host) != nil
    }
}

extension HostPins {
    /// Whether this rule enforces a mismatch at `date` (not report-only, and not past an expiry after
    /// which it only validates).
    func isEnforcing(at date: Date) -> Bool {
        guard enforcement == .enforce else { return false }
        if let expires, expires <= date, afterExpiry == .validateOnly { return false }
        return true
    }
}

extension PinningEvaluator {
    /// The verdict for a chain the platform verifier (Security.framework) already evaluated for `hostname`.
    func evaluateSystemValidated(chain: [ChainCertificate], trusted: Bool, failure: String?, hostname: String) -> PinningReport {
        let date = Date()
        let name = HostNames.normalized(hostname)
        guard trusted, !chain.isEmpty else {
            return finish(PinningReport(host: name, servedChain: chain, validatedChain: [], rule: policy.rule(for: name), verdict: .chainNotTrusted(failure ?? "the system did not trust the chain"), date: date))
        }
        return finish(pinReport(host: name, served: chain, validated: chain, at: date))
    }
}

/// swift-certificates' `ServerIdentityPolicy` for a leaf checked on its own (the leaf standing as its
/// own anchor): the leaf's critical extensions were BoringSSL's to judge when it validated the chain,
/// so this policy declares them handled and asks only the identity.
struct LeafIdentityPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier]
    var identity: ServerIdentityPolicy

    init(leaf: Certificate, hostname: String) {
        verifyingCriticalExtensions = leaf.extensions.filter(\.critical).map(\.oid)
        identity = PinningEvaluator.identityPolicy(for: hostname)
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        identity.chainMeetsPolicyRequirements(chain: chain)
    }
}

/// The encodings of the trust anchors that validated paths end in, kept so that each is serialized and
/// parsed once per evaluator rather than once per connection.
final class AnchorEncodings: Sendable {
    private let known = NIOLockedValueBox<[Certificate: ChainCertificate]>([:])
    /// BoringSSL's copies of anchors, for the validated chain handed back to NIOSSL (see NIOSSL+Pinning.swift).
    let boringSSLCopies = NIOLockedValueBox<[[UInt8]: NIOSSLCertificate]>([:])

    /// The validated path's certificates with their exact DER: the served bytes where the server sent
    /// them, the anchor's own encoding otherwise.
    func chainCertificates(for chain: [Certificate], served: [ChainCertificate]) -> [ChainCertificate] {
        chain.compactMap { certificate in
            if let sent = served.first(where: { $0.certificate == certificate }) { return sent }
            return encoding(of: certificate)
        }
    }

    private func encoding(of certificate: Certificate) -> ChainCertificate? {
        if let found = known.withLockedValue({ $0[certificate] }) { return found }
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate)) != nil, let encoded = try? ChainCertificate(der: serializer.serializedBytes) else { return nil }
        known.withLockedValue { known in
            // Anchors are few; a bound keeps a policy over a huge store from growing without limit.
            if known.count >= 1_024 { known.removeAll() }
            known[certificate] = encoded
        }
        return encoded
    }
}
