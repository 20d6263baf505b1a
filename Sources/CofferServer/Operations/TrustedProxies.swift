import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The proxies whose `X-Forwarded-For`, `X-Forwarded-Proto` and `X-Forwarded-Host` a server believes
/// (docs/SERVER.md, "Behind a proxy"): addresses and CIDR ranges, IPv4 or IPv6. From a peer outside
/// them those headers are ignored, so a client cannot choose the address its limits are counted by or
/// the target its signature is checked against.
public struct TrustedProxies: Sendable, Hashable {
    /// One address range: the first ``prefixLength`` bits of ``address``.
    struct Range: Sendable, Hashable {
        let address: [UInt8]
        let prefixLength: Int

        func contains(_ other: [UInt8]) -> Bool {
            guard other.count == address.count else { return false }
            var bits = prefixLength
            for (mine, theirs) in zip(address, other) where bits > 0 {
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if mine & mask != theirs & mask { return false }
                bits -= 8
            }
            return true
        }
    }

    let ranges: [Range]

    /// No proxy is trusted.
    public init() { ranges = [] }

    /// Reads `10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`.
    /// - Throws: ``ServerConfigurationError`` `.invalidProxyAddress` naming the entry that is not an IP
    ///   address or a CIDR range.
    public init(_ entries: [String]) throws(ServerConfigurationError) {
        var ranges: [Range] = []
        for entry in entries {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let address = Self.addressBytes(parts[0]) else {
                throw ServerConfigurationError(.invalidProxyAddress, "the trusted proxy '\(entry.clipped(toUTF8: 64))' is not an IP address or a CIDR range (10.0.0.0/8, fd00::/8)")
            }
            var prefix = address.count * 8
            if parts.count == 2 {
                guard parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let length = Int(parts[1]), (0...address.count * 8).contains(length) else {
                    throw ServerConfigurationError(.invalidProxyAddress, "the trusted proxy '\(entry.clipped(toUTF8: 64))' has a prefix length outside 0–\(address.count * 8)")
                }
                prefix = length
            }
            ranges.append(Range(address: address, prefixLength: prefix))
        }
        self.ranges = ranges
    }

    /// Whether a range is `/0`: every IPv4 or every IPv6 peer is trusted.
    public var trustsEveryAddress: Bool { ranges.contains { $0.prefixLength == 0 } }

    /// Whether no proxy is trusted.
    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` (an IP address's text) is one of the trusted proxies.
    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.addressBytes(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// What the trusted proxy that sent `fields` reported; nil when `peer` is not a trusted proxy.
    ///
    /// The client is found from the right of `X-Forwarded-For` (each proxy appends the address it
    /// received from): the first address that is not a trusted proxy. Entries to its left were written
    /// by the client and are never read. When the rightmost entry is not an address, the peer itself
    /// is the client. `X-Forwarded-Proto` is taken when it is `http` or `https`, `X-Forwarded-Host`
    /// when it is a plain `host[:port]`; otherwise each is ignored.
    func forwarded(by peer: String, fields: HTTPFields) -> ForwardedRequest? {
        guard contains(peer) else { return nil }
        var client = Self.canonical(peer)
        let hops = fields[values: .xForwardedFor].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            let address = hop.hasPrefix("[") && hop.hasSuffix("]") ? String(hop.dropFirst().dropLast()) : hop
            guard Self.addressBytes(address) != nil else { break }
            client = Self.canonical(address)
            if !contains(address) { break }
        }
        let proto = fields[.xForwardedProto]?.trimmingCharacters(in: .whitespaces).lowercased()
        let host = fields[.xForwardedHost]?.trimmingCharacters(in: .whitespaces)
        return ForwardedRequest(
            clientAddress: client,
            scheme: proto == "http" || proto == "https" ? proto : nil,
            authority: host.flatMap { Self.isAuthority($0) ? $0 : nil }
        )
    }

    /// Whether `text` is a host name, IPv4 address or bracketed IPv6 address, with an optional port:
    /// nothing a URL would read as a path, user or query, and no space or control byte.
    public static func isAuthority(_ text: String) -> Bool {
        guard (1...255).contains(text.utf8.count) else { return false }
        return text.utf8.allSatisfy { byte in
            (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte) || [0x2D, 0x2E, 0x3A, 0x5B, 0x5D].contains(byte)
        }
    }

    /// An IPv4 (4 bytes) or IPv6 (16 bytes) address's bytes; nil for anything else. An IPv4-mapped
    /// IPv6 address (`::ffff:10.0.0.1`, how a dual-stack listener sees an IPv4 peer) is its IPv4 address.
    static func addressBytes(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes.suffix(4)) }
        return bytes
    }

    /// An address in one spelling: IPv4 dotted, IPv6 as `inet_ntop` writes it (lower case, `::`), an
    /// IPv4-mapped address as its IPv4 address; text that is not an address as it is.
    public static func canonical(_ address: String) -> String {
        guard let bytes = addressBytes(address) else { return address }
        return text(of: bytes)
    }

    /// What the per-address limits count by: an IPv4 address, or an IPv6 address's /64 (a host is
    /// given a whole /64, so counting per /128 would give it 2^64 allowances).
    public static func limitKey(_ address: String) -> String {
        guard let bytes = addressBytes(address) else { return address }
        guard bytes.count == 16 else { return text(of: bytes) }
        return text(of: Array(bytes.prefix(8)) + [UInt8](repeating: 0, count: 8)) + "/64"
    }

    private static func text(of bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return bytes.map { String($0, radix: 16) }.joined(separator: ":") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!
    static let xRequestID = HTTPField.Name("X-Request-ID")!
}
