import HTTPTypes

/// One covered component of an HTTP message signature (RFC 9421 §2): a derived component such as
/// `@method`, or a header field, with the parameters that change how its value is taken.
///
/// ```swift
/// let covered: [HTTPSignatureComponent] = [.method, .targetURI, .field("content-digest")]
/// let fromTheRequest = HTTPSignatureComponent.field("content-digest").fromRequest   // "content-digest";req
/// ```
public struct HTTPSignatureComponent: Hashable, Sendable, CustomStringConvertible {
    /// The component name: `@method`, `@path`… for derived components, a lowercase field name otherwise.
    public let name: String
    /// The component's parameters, in the order they are serialized.
    public private(set) var parameters: [Parameter]

    /// A parameter of a component identifier (RFC 9421 §2.1, §2.2.8, §2.4).
    public enum Parameter: Hashable, Sendable {
        /// `name="…"`: which query parameter `@query-param` takes.
        case name(String)
        /// `key="…"`: one member of a dictionary structured field.
        case key(String)
        /// `sf`: the field re-serialized as a structured field.
        case structured
        /// `bs`: each field line wrapped as a byte sequence.
        case byteSequence
        /// `req`: taken from the request a response answers.
        case request
    }

    /// Creates a component from its name and parameters exactly as given; ``HTTPSignatureBase`` checks
    /// that they make sense together when it builds a base.
    public init(name: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
    }

    /// A header field by name (case-insensitive; kept lowercase as the signature base requires).
    ///
    /// - Parameters:
    ///   - name: the field's name.
    ///   - key: take only this member of a dictionary field (`key="…"`).
    ///   - structured: re-serialize the field as a structured field (`sf`).
    ///   - byteSequence: wrap each field line as a byte sequence (`bs`), for fields whose lines cannot be
    ///     combined safely.
    public static func field(_ name: String, key: String? = nil, structured: Bool = false, byteSequence: Bool = false) -> HTTPSignatureComponent {
        var parameters: [Parameter] = []
        if structured { parameters.append(.structured) }
        if let key { parameters.append(.key(key)) }
        if byteSequence { parameters.append(.byteSequence) }
        return HTTPSignatureComponent(name: name.lowercased(), parameters: parameters)
    }

    /// The value of one query parameter (`@query-param;name="…"`), as decoded from the query string.
    public static func queryParameter(_ name: String) -> HTTPSignatureComponent {
        HTTPSignatureComponent(name: "@query-param", parameters: [.name(name)])
    }

    /// `@method`: the request method.
    public static let method = HTTPSignatureComponent(name: "@method")
    /// `@target-uri`: the full target URI.
    public static let targetURI = HTTPSignatureComponent(name: "@target-uri")
    /// `@authority`: host and port, lowercase, without a default port.
    public static let authority = HTTPSignatureComponent(name: "@authority")
    /// `@scheme`: `http` or `https`.
    public static let scheme = HTTPSignatureComponent(name: "@scheme")
    /// `@request-target`: the request target as sent (path and query).
    public static let requestTarget = HTTPSignatureComponent(name: "@request-target")
    /// `@path`: the target's path, `/` when empty.
    public static let path = HTTPSignatureComponent(name: "@path")
    /// `@query`: the query with its leading `?` (just `?` when there is none).
    public static let query = HTTPSignatureComponent(name: "@query")
    /// `@status`: a response's three-digit status code (responses only).
    public static let status = HTTPSignatureComponent(name: "@status")

    /// The same component taken from the request that a signed response answers (`;req`).
    public var fromRequest: HTTPSignatureComponent {
        guard !isFromRequest else { return self }
        var copy = self
        copy.parameters.append(.request)
        return copy
    }

    /// Whether this is a derived component (its name starts with `@`).
    public var isDerived: Bool { name.utf8.first == UInt8(ascii: "@") }

    /// `content-digest`, which a signature covers to protect the body.
    static let contentDigest = HTTPSignatureComponent.field("content-digest")

    /// Whether the name and the parameters' values can be written as structured-field strings.
    var isSerializable: Bool {
        guard isStructuredFieldString(name) else { return false }
        for parameter in parameters {
            switch parameter {
            case .name(let value), .key(let value): if !isStructuredFieldString(value) { return false }
            case .structured, .byteSequence, .request: continue
            }
        }
        return true
    }

    /// Whether the component is taken from the related request (`req`).
    public var isFromRequest: Bool { parameters.contains(.request) }

    /// `@query-param`'s `name` parameter.
    public var queryParameterName: String? {
        for case .name(let value) in parameters { return value }
        return nil
    }

    /// The dictionary member a field component selects (`key`).
    public var dictionaryKey: String? {
        for case .key(let value) in parameters { return value }
        return nil
    }

    /// Whether the field is re-serialized as a structured field (`sf`).
    public var isStructured: Bool { parameters.contains(.structured) }

    /// Whether each field line is wrapped as a byte sequence (`bs`).
    public var isByteSequence: Bool { parameters.contains(.byteSequence) }

    /// The component identifier as it appears in the signature base, e.g. `"@query-param";name="Pet"`.
    public var description: String {
        var bytes: [UInt8] = []
        appendIdentifier(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``description`` to `bytes` (the signature base is built in one buffer).
    func appendIdentifier(to bytes: inout [UInt8]) {
        appendQuoted(name, to: &bytes)
        for parameter in parameters {
            switch parameter {
            case .name(let value):
                bytes.append(contentsOf: ";name=".utf8)
                appendQuoted(value, to: &bytes)
            case .key(let value):
                bytes.append(contentsOf: ";key=".utf8)
                appendQuoted(value, to: &bytes)
            case .structured: bytes.append(contentsOf: ";sf".utf8)
            case .byteSequence: bytes.append(contentsOf: ";bs".utf8)
            case .request: bytes.append(contentsOf: ";req".utf8)
            }
        }
    }
}

/// `text` as a structured-field string: in double quotes, with `"` and `\` escaped. (Whether `text` is
/// printable ASCII, which a structured-field string must be, is checked by ``isStructuredFieldString(_:)``.)
func quoted(_ text: String) -> String {
    var out: [UInt8] = []
    appendQuoted(text, to: &out)
    return String(decoding: out, as: UTF8.self)
}

/// Appends ``quoted(_:)`` of `text` to `out`.
func appendQuoted(_ text: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
        out.append(byte)
    }
    out.append(UInt8(ascii: "\""))
}

/// Whether `text` can be a structured-field string (RFC 9651 §3.3.3): printable ASCII only.
func isStructuredFieldString(_ text: String) -> Bool {
    text.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
}

extension HTTPSignatureComponent {
    /// Reads a component identifier as it is written in `Signature-Input` or on a command line:
    /// `@method`, `content-digest`, `"@query-param";name="Pet"`, `example-dict;key="a"`, `x;sf`, `@path;req`.
    /// - Throws: ``HTTPSignatureError`` `.invalidComponent` when it cannot be read.
    public init(parsing text: String) throws(HTTPSignatureError) {
        var identifier = text
        if !identifier.hasPrefix("\"") {
            let name = identifier.prefix { $0 != ";" }
            identifier = "\"" + name + "\"" + identifier.dropFirst(name.count)
        }
        var fields = HTTPFields()
        fields[.signatureInput] = "c=(\(identifier))"
        fields[.signature] = "c=:AA==:"
        do {
            guard let parsed = try HTTPSignatureFields.signatures(in: fields).first, parsed.components.count == 1 else {
                throw HTTPSignatureError(.invalidComponent, "'\(text)' is not one component identifier")
            }
            self = parsed.components[0]
        } catch {
            throw HTTPSignatureError(.invalidComponent, "'\(text)' is not a component identifier such as @method, content-digest or @query-param;name=\"id\"")
        }
    }
}
