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
    /// The client could not say which host it asked for (AsyncHTTPClient) and the certificate names no
    /// DNS host — its name came from its common name or an IP address, so it could stand for any pinned
    /// host — and no IP-literal rule selects it. Rejected by any policy with an enforcing rule.
    case unidentifiedLeaf

    /// Whether the connection may proceed.
    public var isAccepted: Bool {
        switch self {
        case .notPinned, .matched, .reportOnlyMismatch, .expiredPolicy: true
        case .mismatch, .chainNotTrusted, .unidentifiedLeaf: false
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
        case .unidentifiedLeaf: "refused: the certificate names no DNS host (its name comes from its common name or an IP address) and no IP rule selects it, so it could stand for any pinned host"
        }
    }
}

/// What a report callback receives for every evaluation: enough to see why a connection passed or
/// failed, and to collect the pins a server really serves while a policy is rolled out.
public struct PinningReport: Sendable {
    /// The host name the client asked for (for AsyncHTTPClient connections, the names in the validated
    /// certificate, joined by commas, because the client does not say which one it asked for).
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
