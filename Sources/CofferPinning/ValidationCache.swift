import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOConcurrencyHelpers

/// Chains an evaluator has already validated, so that the next connection to the same server skips
/// path building and the signature checks (the costly part: two or three ECDSA or RSA verifications
/// in Swift) and only the pins are checked again. Chromium's `CachingCertVerifier` does the same.
///
/// An entry is found only for the very same served bytes (every certificate, in order) and the very
/// same host name, validated against this evaluator's trust anchors, so the cached answer is the
/// answer validation would give again — until time changes it: an entry lives for the cache's
/// lifetime and never past the earliest `notValidAfter` of its validated chain. Failures are never
/// cached. Neither validation nor the cache checks revocation.
final class ValidationCache: Sendable {
    /// What a lookup finds: the served certificates (parsed) and the validated path.
    struct Entry: Sendable {
        let served: [ChainCertificate]
        let validated: [ChainCertificate]
        let expires: Date
    }

    /// Kinds of validation, each its own key space.
    enum Purpose: UInt8 {
        /// Chain and hostname validation of a served chain.
        case serverChain = 1
        /// Path building for a leaf that BoringSSL already validated (AsyncHTTPClient).
        case validatedLeaf = 2
    }

    /// The most entries kept; beyond it, expired entries go first, then the oldest.
    static let capacity = 256

    private let lifetime: TimeInterval
    private let entries = NIOLockedValueBox<[SHA256Digest: Entry]>([:])

    /// A cache whose entries live at most `lifetime` (positive).
    init(lifetime: Duration) {
        let parts = lifetime.components
        self.lifetime = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// The entry for `served` (leaf first, DER) and `hostname`, if one is still valid at `date`.
    func entry(for purpose: Purpose, served: [[UInt8]], hostname: String, at date: Date) -> Entry? {
        let key = Self.key(purpose, served: served, hostname: hostname)
        return entries.withLockedValue { entries in
            guard let entry = entries[key] else { return nil }
            guard date < entry.expires else {
                entries[key] = nil
                return nil
            }
            return entry
        }
    }

    /// Records that `served` validated for `hostname` at `date` as `validated`.
    func store(_ purpose: Purpose, served: [ChainCertificate], validated: [ChainCertificate], hostname: String, at date: Date) {
        let expiries = validated.map(\.notValidAfter) + [date + lifetime]
        guard let expires = expiries.min(), date < expires else { return }
        let key = Self.key(purpose, served: served.map(\.der), hostname: hostname)
        let entry = Entry(served: served, validated: validated, expires: expires)
        entries.withLockedValue { entries in
            if entries.count >= Self.capacity && entries[key] == nil {
                entries = entries.filter { date < $0.value.expires }
                if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.expires < $1.value.expires }) {
                    entries[oldest.key] = nil
                }
            }
            entries[key] = entry
        }
    }

    /// SHA-256 over the purpose, the host name and every certificate, each length-prefixed, so that no
    /// two different inputs share an encoding.
    private static func key(_ purpose: Purpose, served: [[UInt8]], hostname: String) -> SHA256Digest {
        var hasher = SHA256()
        hasher.update(data: [purpose.rawValue])
        let name = Array(hostname.utf8)
        hasher.update(data: lengthPrefix(name.count))
        hasher.update(data: name)
        hasher.update(data: lengthPrefix(served.count))
        for certificate in served {
            hasher.update(data: lengthPrefix(certificate.count))
            hasher.update(data: certificate)
        }
        return hasher.finalize()
    }

    private static func lengthPrefix(_ count: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt64(count).bigEndian) { Array($0) }
    }
}
