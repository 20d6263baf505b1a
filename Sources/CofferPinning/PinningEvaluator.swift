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
    /// the CLI's probe — on a path that already passed chain and hostname validation (leaf first).
    ///
    /// - When the integration knows the host the client asked for (`requestedHost`), that host's rule
    ///   applies, or none (`notPinned`).
    /// - When it cannot know it (AsyncHTTPClient's configuration-wide hook), the certificate is all there
    ///   is: every rule that one of the leaf's DNS names selects applies (wildcards included), and so do
    ///   IP-literal rules naming one of its IP subjectAltNames; all must hold. A leaf with no DNS
    ///   subjectAltName — whose name came from its common name or an IP address, so it could stand for
    ///   any host — is refused by a policy with rules (`unidentifiedLeaf`) unless an IP-literal rule
    ///   selects it and holds. A leaf whose DNS names select no rule stays under normal validation
    ///   (`notPinned`), so unpinned hosts remain reachable.
    func decision(on path: [ChainCertificate], requestedHost: String?, at date: Date) -> (HostPins?, PinningVerdict) {
        if let requestedHost {
            let rule = policy.rule(for: requestedHost)
            return (rule, rule.map { Self.verdict(of: $0, on: path, at: date) } ?? .notPinned)
        }
        guard let leaf = path.first else { return (nil, .chainNotTrusted("the server sent no certificate")) }
        let names = leaf.dnsNames
        let addresses = leaf.ipAddresses
        let rules = policy.hosts.filter { rule in
            rule.isIPLiteral ? addresses.contains(rule.host) : names.contains { rule.applies(toCertificateName: $0) }
        }
        if names.isEmpty && !policy.hosts.isEmpty && !rules.contains(where: \.isIPLiteral) {
            // The client may have asked for any pinned host: refuse, unless no rule would enforce now.
            let enforcing = policy.hosts.first { $0.isEnforcing(at: date) }
            return (enforcing ?? policy.hosts.first, enforcing == nil ? .reportOnlyMismatch : .unidentifiedLeaf)
        }
        let verdicts = rules.map { (rule: $0, verdict: Self.verdict(of: $0, on: path, at: date)) }
        // The first rejecting rule decides; otherwise the first rule's verdict (or notPinned).
        let deciding = verdicts.first { !$0.verdict.isAccepted } ?? verdicts.first
        return (deciding?.rule, deciding?.verdict ?? .notPinned)
    }

    /// Evaluates a leaf whose chain and hostname something else (BoringSSL, for AsyncHTTPClient) already
    /// validated, without knowing which host was asked for: every rule that covers one of the leaf's DNS
    /// names applies, and all of them must hold. The path is rebuilt from `leaf`, `intermediates` and the
    /// policy's anchors; when it cannot be, only the leaf can match.
    func evaluate(validatedLeaf leaf: ChainCertificate, intermediates: [ChainCertificate]) async -> PinningReport {
        let date = Date()
        if let cached = cachedEvaluation(validatedLeaf: leaf.der, intermediates: intermediates, at: date) { return cached }
        var path = [leaf]
        var verifier = Verifier(rootCertificates: policy.rootStore) { RFC5280Policy() }
        if case .validCertificate(let chain) = await verifier.validate(leaf: leaf.certificate, intermediates: CertificateStore(intermediates.map(\.certificate))) {
            path = anchors.chainCertificates(for: Array(chain), served: [leaf] + intermediates)
            cache?.store(.validatedLeaf, served: [leaf] + intermediates, validated: path, hostname: "", at: date)
        }
        return finish(leafReport(leaf, path: path, at: date))
    }

    /// The report for a validated leaf (DER) whose path is cached, without suspending; nil otherwise.
    func cachedEvaluation(validatedLeaf der: [UInt8], intermediates: [ChainCertificate], at date: Date) -> PinningReport? {
        let served = [der] + intermediates.map(\.der)
        guard let entry = cache?.entry(for: .validatedLeaf, served: served, hostname: "", at: date), let leaf = entry.served.first else { return nil }
        return finish(leafReport(leaf, path: entry.validated, at: date))
    }

    private func leafReport(_ leaf: ChainCertificate, path: [ChainCertificate], at date: Date) -> PinningReport {
        let (rule, verdict) = decision(on: path, requestedHost: nil, at: date)
        return PinningReport(
            host: (leaf.dnsNames + leaf.ipAddresses).joined(separator: ","), servedChain: [leaf], validatedChain: path, rule: rule,
            verdict: verdict, date: date
        )
    }

    fileprivate func finish(_ outcome: PinningReport) -> PinningReport {
        report?(outcome)
        return outcome
    }

    /// Chain and hostname validation with swift-certificates.
    private func validate(_ served: [ChainCertificate], hostname: String) async -> Result<[ChainCertificate], ValidationFailure> {
        guard let leaf = served.first else { return .failure(ValidationFailure("the server sent no certificate")) }
        let isIP = Self.isIPAddress(hostname)
        var verifier = Verifier(rootCertificates: policy.rootStore) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isIP ? nil : hostname, serverIP: isIP ? String(hostname.filter { $0 != "[" && $0 != "]" }) : nil)
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

    /// Whether this rule covers a name from a certificate, which may be a wildcard (`*.example.com`
    /// stands for every name one label below `example.com`).
    func applies(toCertificateName name: String) -> Bool {
        guard name.hasPrefix("*.") else { return covers(name) }
        let base = String(name.dropFirst(2))
        if covers(base) && includesSubdomains { return true }
        guard host.hasSuffix("." + base) else { return false }
        return !host.dropLast(base.count + 1).contains(".")
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
