/// One covered component of an HTTP message signature (RFC 9421 §2): a derived component such as
/// `@method`, or a header field, with the parameters that change how its value is taken.
///
/// ```swift
/// let covered: [HTTPSignatureComponent] = [.method, .targetURI, .field("content-digest")]
/// ```
public struct HTTPSignatureComponent: Hashable, Sendable, CustomStringConvertible {
    /// The component name: `@method`, `@path`… for derived components, a lowercase field name otherwise.
    public let name: String
    /// `@query-param`'s `name` parameter.
    public let queryParameterName: String?

    /// A header field by name (case-insensitive; kept lowercase as the signature base requires).
    public static func field(_ name: String) -> HTTPSignatureComponent {
        HTTPSignatureComponent(name: name.lowercased(), queryParameterName: nil)
    }

    /// The value of one query parameter (`@query-param;name="…"`), as decoded from the query string.
    public static func queryParameter(_ name: String) -> HTTPSignatureComponent {
        HTTPSignatureComponent(name: "@query-param", queryParameterName: name)
    }

    /// `@method`: the request method.
    public static let method = HTTPSignatureComponent(name: "@method", queryParameterName: nil)
    /// `@target-uri`: the full target URI.
    public static let targetURI = HTTPSignatureComponent(name: "@target-uri", queryParameterName: nil)
    /// `@authority`: host and port, lowercase, without a default port.
    public static let authority = HTTPSignatureComponent(name: "@authority", queryParameterName: nil)
    /// `@scheme`: `http` or `https`.
    public static let scheme = HTTPSignatureComponent(name: "@scheme", queryParameterName: nil)
    /// `@request-target`: the request target as sent (path and query).
    public static let requestTarget = HTTPSignatureComponent(name: "@request-target", queryParameterName: nil)
    /// `@path`: the target's path, `/` when empty.
    public static let path = HTTPSignatureComponent(name: "@path", queryParameterName: nil)
    /// `@query`: the query with its leading `?` (just `?` when there is none).
    public static let query = HTTPSignatureComponent(name: "@query", queryParameterName: nil)

    /// Whether this is a derived component (its name starts with `@`).
    public var isDerived: Bool { name.hasPrefix("@") }

    /// The component identifier as it appears in the signature base, e.g. `"@query-param";name="Pet"`.
    public var description: String {
        var text = "\"\(name)\""
        if let queryParameterName { text += ";name=\"\(queryParameterName)\"" }
        return text
    }
}
