#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import X509

/// The pins of one host (and optionally its subdomains), and how they are enforced.
///
/// Pinning is always checked **in addition to** chain and hostname validation: a rule can only make a
/// connection fail that would otherwise succeed, never the reverse.
///
/// ```swift
/// let api = try HostPins(
///     host: "api.example.com",
///     pins: [try Pin("current+key+pin…"), try Pin("backup+key+pin…")],   // a backup pin is required
///     expires: Date(timeIntervalSinceNow: 60 * 86_400)
/// )
/// ```
public struct HostPins: Hashable, Sendable {
    /// Whether a mismatch fails the connection.
    public enum Enforcement: String, Hashable, Sendable {
        /// A mismatch fails the handshake (and is reported).
        case enforce
        /// A mismatch is reported and the connection proceeds: for rolling a policy out.
        case reportOnly
    }

    /// What happens once ``expires`` has passed.
    public enum AfterExpiry: String, Hashable, Sendable {
        /// Keep enforcing the pins as if they had not expired.
        case enforce
        /// Fall back to normal chain and hostname validation; the pins are still evaluated and every
        /// connection is reported with verdict ``PinningVerdict/expiredPolicy(matched:)`` (TrustKit's behaviour).
        case validateOnly
    }

    /// Which certificates of the validated chain a pin may match.
    public struct Positions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The server's own certificate.
        public static let leaf = Positions(rawValue: 1)
        /// Certificates between the leaf and the trust anchor.
        public static let intermediates = Positions(rawValue: 2)
        /// The trust anchor the chain validated to.
        public static let root = Positions(rawValue: 4)
        /// Any certificate of the validated chain (the default, as TrustKit does).
        public static let any: Positions = [.leaf, .intermediates, .root]
    }

    /// The host name, lowercased, without a trailing dot; or an IP literal in canonical form
    /// (`127.0.0.1`, `[::1]`), which matches connections to that address and certificates naming it in
    /// an IP subjectAltName.
    public let host: String
    /// Whether the rule also covers every name below ``host`` (`a.host`, `b.a.host`).
    public let includesSubdomains: Bool
    /// The accepted pins; at least two unless the rule was made with `allowingSinglePin`.
    public let pins: [Pin]
    /// When the rule stops being enforced as configured by ``afterExpiry``; `nil` for never.
    public let expires: Date?
    /// What happens after ``expires``.
    public let afterExpiry: AfterExpiry
    /// Whether a mismatch fails the connection or is only reported.
    public let enforcement: Enforcement
    /// Which certificates of the validated chain may match.
    public let positions: Positions

    /// A rule for `host`.
    /// - Parameters:
    ///   - host: the host name (or IP address) the rule is for.
    ///   - includesSubdomains: also apply to every name below `host`.
    ///   - pins: the accepted pins. At least two are required — the current key and a backup kept offline —
    ///     so that replacing a compromised or lost key does not lock every installed client out.
    ///   - allowingSinglePin: accept one pin anyway (a test server, a key you can never lose).
    ///   - expires: when the pins stop being enforced as configured by `afterExpiry`.
    ///   - afterExpiry: what happens after `expires`: normal validation with the pins only reported (the
    ///     default), or the pins still enforced.
    ///   - enforcement: whether a mismatch fails the connection or is only reported.
    ///   - positions: which certificates of the validated chain may match.
    /// - Throws: `PinningError` `.invalidPolicy` for an empty host, no pins, one pin without
    ///   `allowingSinglePin`, or no positions.
    public init(
        host: String,
        includesSubdomains: Bool = false,
        pins: [Pin],
        allowingSinglePin: Bool = false,
        expires: Date? = nil,
        afterExpiry: AfterExpiry = .validateOnly,
        enforcement: Enforcement = .enforce,
        positions: Positions = .any
    ) throws(PinningError) {
        let name = try HostNames.validated(host)
        let unique = pins.reduce(into: [Pin]()) { if !$0.contains($1) { $0.append($1) } }
        guard !unique.isEmpty else { throw PinningError(.invalidPolicy, "the rule for \(name) has no pins") }
        guard unique.count >= 2 || allowingSinglePin else {
            throw PinningError(
                .invalidPolicy,
                "the rule for \(name) has one pin; add a backup pin (the key you will rotate to, kept offline) or pass allowingSinglePin: true"
            )
        }
        guard !positions.isEmpty else { throw PinningError(.invalidPolicy, "the rule for \(name) allows no chain position to match") }
        self.host = name
        self.includesSubdomains = includesSubdomains
        self.pins = unique
        self.expires = expires
        self.afterExpiry = afterExpiry
        self.enforcement = enforcement
        self.positions = positions
    }

    /// Whether ``host`` is an IP address rather than a DNS name.
    var isIPLiteral: Bool { HostNames.canonicalIP(host) != nil }

    /// Whether this rule covers `hostname` (already normalized). An IP literal covers only itself.
    func covers(_ hostname: String) -> Bool {
        hostname == host || (includesSubdomains && !isIPLiteral && hostname.hasSuffix("." + host))
    }
}

/// What a client trusts and which hosts it pins.
///
/// ```swift
/// let policy = try PinningPolicy(hosts: [api])                       // system roots + pins
/// let privateCA = try PinningPolicy(hosts: [api], trust: .only(ca))  // a bundled CA instead
/// ```
public struct PinningPolicy: Sendable {
    /// The trust anchors chains are validated against.
    public enum Trust: Sendable {
        /// The operating system's roots (on Linux, the distribution's CA bundle).
        case system
        /// Only these certificates: a bundled certificate or a private CA, instead of the system roots.
        case only([Certificate])
        /// The system roots and these certificates.
        case systemAnd([Certificate])
    }

    /// The host rules; a host no rule covers gets normal validation only.
    public let hosts: [HostPins]
    /// The trust anchors.
    public let trust: Trust

    /// A policy.
    /// - Throws: `PinningError` `.invalidPolicy` when two rules name the same host.
    public init(hosts: [HostPins], trust: Trust = .system) throws(PinningError) {
        var seen = Set<String>()
        for rule in hosts where !seen.insert(rule.host).inserted {
            throw PinningError(.invalidPolicy, "two rules name \(rule.host); merge their pins into one rule")
        }
        self.hosts = hosts
        self.trust = trust
    }

    /// The rule that applies to `hostname`: an exact rule first, then the closest parent with
    /// `includesSubdomains`.
    public func rule(for hostname: String) -> HostPins? {
        let name = HostNames.normalized(hostname)
        if let exact = hosts.first(where: { $0.host == name }) { return exact }
        return hosts.filter { $0.covers(name) }.max { $0.host.count < $1.host.count }
    }

    /// The trust anchors as a swift-certificates store.
    var rootStore: CertificateStore {
        switch trust {
        case .system: CertificateStore.systemTrustRoots
        case .only(let anchors): CertificateStore(anchors)
        case .systemAnd(let anchors): CertificateStore.systemTrustRoots.appending(contentsOf: anchors)
        }
    }
}
