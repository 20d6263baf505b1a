package import HTTPTypes

/// What a trusted proxy in front reported of a request it forwarded: the client's address
/// (`X-Forwarded-For`) and the scheme and authority the client reached (`X-Forwarded-Proto`,
/// `X-Forwarded-Host`). Set only for a request whose connection came from a proxy the server was
/// told to trust; from anyone else those headers are ignored.
public struct ForwardedRequest: Sendable, Hashable {
    /// The client's IP address, as the proxy saw it.
    public var clientAddress: String
    /// The scheme the client reached (`http` or `https`); nil when the proxy did not say.
    public var scheme: String?
    /// The authority (`host[:port]`) the client reached; nil when the proxy did not say.
    public var authority: String?

    /// A forwarded request's details.
    public init(clientAddress: String, scheme: String? = nil, authority: String? = nil) {
        self.clientAddress = clientAddress
        self.scheme = scheme
        self.authority = authority
    }
}

extension HTTPSignatureRequestContext {
    /// No trusted proxy: a context type without the property reports none.
    public var forwarded: ForwardedRequest? { nil }

    /// `head` as the client signed it: the scheme and authority a trusted proxy reported
    /// (``forwarded``), else `scheme` and, when given, `authority`.
    package func signedTarget(of head: HTTPRequest, scheme: String, authority: String?) -> HTTPRequest {
        var head = head
        let scheme = forwarded?.scheme ?? scheme
        // Assigned only when different: a request head's pseudo-header fields are copied on each write.
        if head.scheme != scheme { head.scheme = scheme }
        if let authority = forwarded?.authority ?? authority, head.authority != authority { head.authority = authority }
        return head
    }
}

extension HTTPRequest {
    /// `@target-uri` as the server rebuilt it (scheme, authority, path and query), for a log line:
    /// every byte outside visible ASCII, and the space, quote and backslash, as `%XX`, so that a
    /// client-chosen `Host` cannot add fields to a text log line. At most 512 bytes.
    package var rebuiltTargetURI: String {
        let raw = "\(scheme ?? "")://\(authority ?? "")\(path ?? "")"
        var text = ""
        for byte in raw.utf8.prefix(512) {
            if (0x21...0x7E).contains(byte) && byte != 0x22 && byte != 0x5C && byte != 0x25 {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "%" + String(byte, radix: 16, uppercase: true).leftPadded
            }
        }
        return text
    }
}

extension String {
    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}
