/// A server named by an absolute `http://` or `https://` URL, or by a bare `HOST[:PORT]`: split once,
/// the way every Coffer client needs it (the host and port to connect to, the authority and path to
/// sign and send).
///
/// User information (`user:password@`) and the fragment are dropped: neither is sent to a server. An
/// IPv6 host is written in brackets (`https://[::1]:8443/`) and ``host`` holds it without them.
///
/// ```swift
/// let url = try ServerURL("https://api.example.com:8443/v1/orders?page=2")
/// url.host                // "api.example.com"
/// url.effectivePort       // 8443
/// url.authority           // "api.example.com:8443"
/// url.pathAndQuery        // "/v1/orders?page=2"
/// ```
public struct ServerURL: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercased.
    public let scheme: String
    /// The host name or IP address, without brackets.
    public let host: String
    /// The port the text named, if any.
    public let port: Int?
    /// The path and query, at least `/`.
    public let pathAndQuery: String

    /// Splits `text`.
    /// - Parameters:
    ///   - text: an `http://` or `https://` URL, or `HOST[:PORT]`.
    ///   - defaultScheme: the scheme of a bare `HOST[:PORT]`; nil to require an absolute URL.
    /// - Throws: ``CofferCoreError`` `.invalidArgument` for a scheme other than http or https, a missing
    ///   scheme when `defaultScheme` is nil, no host, or a port outside 1 to 65535.
    public init(_ text: String, defaultScheme: String? = "https") throws(CofferCoreError) {
        var rest = Substring(text)
        let scheme: String
        if let separator = rest.firstRange(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw CofferCoreError(.invalidArgument, "'\(text)' is not an http or https URL")
            }
            rest = rest[separator.upperBound...]
        } else if let defaultScheme {
            scheme = defaultScheme
        } else {
            throw CofferCoreError(.invalidArgument, "'\(text)' is not an absolute http:// or https:// URL")
        }
        var tail = ""
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            tail = String(rest[end...].prefix { $0 != "#" })
            rest = rest[..<end]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        var host = rest
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw CofferCoreError(.invalidArgument, "'\(text)' has an unclosed '[' in its host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw CofferCoreError(.invalidArgument, "'\(text)' has text after its IPv6 address")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        var port: Int?
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw CofferCoreError(.invalidArgument, "'\(text)' has an invalid port: write HOST:PORT with a port from 1 to 65535")
            }
            port = value
        }
        guard !host.isEmpty else { throw CofferCoreError(.invalidArgument, "'\(text)' names no host") }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
        self.pathAndQuery = tail.isEmpty || tail.hasPrefix("?") ? "/" + tail : tail
    }

    /// The port to connect to: the one named, else 443 for https and 80 for http.
    public var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// The authority a request carries (`Host`, `@authority`): the host, in brackets when it is an IPv6
    /// address, and the port when one was named.
    public var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(name):\($0)" } ?? name
    }

    /// The URL, rebuilt: `scheme://authority/path?query`.
    public var description: String { "\(scheme)://\(authority)\(pathAndQuery)" }
}
