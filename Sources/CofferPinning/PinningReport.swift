#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The outcome of evaluating one server's chain against a ``PinningPolicy``.
public enum PinningVerdict: Hashable, Sendable, CustomStringConvertible {
    /// No rule covers the host; the chain and hostname validated. Accepted.
    case notPinned
    /// The chain validated and a certificate in an allowed position matched this pin. Accepted.
    case matched(Pin)
    /// The chain validated but no pin matched and the rule is enforced. Rejected.
    case mismatch
    /// No pin matched, but the rule is report-only. Accepted (and reported).
    case reportOnlyMismatch
    /// The rule has expired and falls back to validation only; `matched` says whether the pins still held.
    /// Accepted (and reported).
    case expiredPolicy(matched: Bool)
    /// The chain or hostname did not validate; pins were not consulted. Rejected, whatever the rule says.
    case chainNotTrusted(String)
    /// The integration could not say which host the client asked for (the deprecated host-less
    /// AsyncHTTPClient configuration, `HTTPClient.Configuration.pinned(by:knownIntermediates:)`), so no
    /// rule could be chosen, and the policy has a rule that enforces now. Rejected: a certificate's own
    /// names never choose the rule (a certificate for another name that carries the connected IP address
    /// would otherwise pass as unpinned).
    case requestedHostUnknown

    /// Whether the connection may proceed.
    public var isAccepted: Bool {
        switch self {
        case .notPinned, .matched, .reportOnlyMismatch, .expiredPolicy: true
        case .mismatch, .chainNotTrusted, .requestedHostUnknown: false
        }
    }

    public var description: String {
        switch self {
        case .notPinned: "not pinned (chain and hostname valid)"
        case .matched(let pin): "pin matched (\(pin))"
        case .mismatch: "no pin matched: rejected"
        case .reportOnlyMismatch: "no pin matched: reported only, connection allowed"
        case .expiredPolicy(let matched): "the pin rule has expired: validated only (pins \(matched ? "still match" : "no longer match"))"
        case .chainNotTrusted(let reason): "chain not trusted: \(reason)"
        case .requestedHostUnknown: "refused: the host asked for is unknown here, so no pin rule can be chosen, and the policy enforces pins"
        }
    }
}

/// What a report callback receives for every evaluation: enough to see why a connection passed or
/// failed, and to collect the pins a server really serves while a policy is rolled out.
public struct PinningReport: Sendable {
    /// The host the client asked for (lowercased, IP literals in canonical form): for AsyncHTTPClient, the
    /// host the configuration is bound to; empty when the integration cannot know it
    /// (``PinningVerdict/requestedHostUnknown``).
    public let host: String
    /// The certificates the server presented, in its order (leaf first), with their pins.
    public let servedChain: [ChainCertificate]
    /// The chain that validated, leaf to trust anchor; empty when none did.
    public let validatedChain: [ChainCertificate]
    /// The rule that applied, if any.
    public let rule: HostPins?
    /// The outcome.
    public let verdict: PinningVerdict
    /// When the evaluation ran.
    public let date: Date

    /// Whether the connection was allowed to proceed.
    public var isAccepted: Bool { verdict.isAccepted }
}
