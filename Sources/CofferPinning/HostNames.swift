#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Host names as rules, requests and certificates spell them, made comparable: DNS names lowercased
/// without a trailing dot; IP literals in one canonical text (`127.0.0.1`, `[::1]`), whether they came
/// as `[::1]`, `0:0::1` or the 16 bytes of a certificate's IP subjectAltName.
enum HostNames {
    /// The canonical form of a host name or IP literal.
    static func normalized(_ host: String) -> String {
        if let ip = canonicalIP(host) { return ip }
        var name = host.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// `host` normalized, or a `PinningError` `.invalidPolicy` when it is not a host name or IP literal
    /// alone (empty, or with a scheme, port or path).
    static func validated(_ host: String) throws(PinningError) -> String {
        let name = normalized(host)
        guard !name.isEmpty, !name.contains("/"), !name.contains(":") || name.hasPrefix("[") else {
            throw PinningError(.invalidPolicy, "'\(host)' is not a host name (give the name alone, without scheme, port or path)")
        }
        return name
    }

    /// `host` as a canonical IP literal (IPv6 in brackets), or nil when it is not an IP address.
    static func canonicalIP(_ host: String) -> String? {
        var literal = host
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        if literal.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
            return withUnsafeBytes(of: &v4) { Self.text(of: Array($0)) }
        }
        var v6 = in6_addr()
        if literal.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 {
            return withUnsafeBytes(of: &v6) { Self.text(of: Array($0)) }
        }
        return nil
    }

    /// The canonical text of 4 or 16 address bytes, or nil for another length.
    static func text(of bytes: [UInt8]) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var buffer = [CChar](repeating: 0, count: 64)
        let written = bytes.withUnsafeBytes { address in
            buffer.withUnsafeMutableBufferPointer { inet_ntop(family, address.baseAddress, $0.baseAddress, socklen_t($0.count)) }
        }
        guard written != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(text)]" : text
    }
}
