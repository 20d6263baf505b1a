public import HTTPTypes
import CofferCore
import RawStructuredFieldValues

/// The message a signature covers: a request, or a response with (optionally) the request it answers,
/// for components marked `req`.
public enum HTTPSignedMessage: Sendable {
    /// A request.
    case request(HTTPRequest)
    /// A response, and the request it answers when the signature covers `req` components.
    case response(HTTPResponse, request: HTTPRequest?)

    var headerFields: HTTPFields {
        switch self {
        case .request(let request): request.headerFields
        case .response(let response, _): response.headerFields
        }
    }
}

/// The signature base (RFC 9421 §2.5): the exact bytes an HTTP message signature signs, one line per
/// covered component and a last `@signature-params` line.
public enum HTTPSignatureBase {
    /// The signature base of a request.
    ///
    /// - Throws: ``HTTPSignatureError`` `.missingComponent` when the request lacks a covered component,
    ///   `.duplicateComponent` when one is listed twice, `.invalidComponent` for an unknown derived
    ///   component, parameters that do not fit it, or text a structured field cannot carry.
    public static func make(
        for request: HTTPRequest, covering components: [HTTPSignatureComponent], parameters: HTTPSignatureParameters
    ) throws(HTTPSignatureError) -> String {
        try make(for: .request(request), covering: components, parameters: parameters)
    }

    /// The signature base of a response; `request` supplies the components marked `req` (RFC 9421 §2.4).
    public static func make(
        for response: HTTPResponse, answering request: HTTPRequest? = nil,
        covering components: [HTTPSignatureComponent], parameters: HTTPSignatureParameters
    ) throws(HTTPSignatureError) -> String {
        try make(for: .response(response, request: request), covering: components, parameters: parameters)
    }

    /// The signature base of either kind of message.
    public static func make(
        for message: HTTPSignedMessage, covering components: [HTTPSignatureComponent], parameters: HTTPSignatureParameters
    ) throws(HTTPSignatureError) -> String {
        let bytes = try bytes(for: message, covering: components, signatureParams: signatureParamsBytes(components, parameters))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The signature base as the bytes that are signed; its last line carries `signatureParams`, the
    /// serialized `@signature-params` value (callers that also write `Signature-Input` reuse it).
    static func bytes(
        for message: HTTPSignedMessage, covering components: [HTTPSignatureComponent], signatureParams: [UInt8]
    ) throws(HTTPSignatureError) -> [UInt8] {
        var base: [UInt8] = []
        base.reserveCapacity(256 + signatureParams.count)
        for (index, component) in components.enumerated() {
            // Linear: a signature covers a handful of components (at most 64 are read).
            guard !components[..<index].contains(component) else {
                throw HTTPSignatureError(.duplicateComponent, "\(component) is covered twice")
            }
            if case .request(let request) = message, component.parameters.isEmpty, appendPlainLine(of: component, in: request, to: &base) {
                continue
            }
            for value in try values(of: component, in: message) {
                component.appendIdentifier(to: &base)
                base.append(UInt8(ascii: ":"))
                base.append(UInt8(ascii: " "))
                base.append(contentsOf: value.utf8)
                base.append(UInt8(ascii: "\n"))
            }
        }
        base.append(contentsOf: #""@signature-params": "#.utf8)
        base.append(contentsOf: signatureParams)
        return base
    }

    /// Appends the line of a component without parameters straight from the request, without making
    /// a list of its values: `@method`, `@authority`, `@scheme`, `@target-uri`, `@request-target` and
    /// header fields. False, with `base` as it was, for anything else: ``values(of:in:)`` then takes
    /// the value or says why not. (The same bytes either way; `PlainLineTests` hold the two equal.)
    static func appendPlainLine(of component: HTTPSignatureComponent, in request: HTTPRequest, to base: inout [UInt8]) -> Bool {
        let start = base.count
        component.appendIdentifier(to: &base)
        base.append(UInt8(ascii: ":"))
        base.append(UInt8(ascii: " "))
        let written = component.isDerived
            ? appendPlainDerivedValue(component.name, of: request, to: &base)
            : appendPlainFieldValue(component.name, of: request.headerFields, to: &base)
        guard written else {
            base.removeSubrange(start...)
            return false
        }
        base.append(UInt8(ascii: "\n"))
        return true
    }

    private static func appendPlainDerivedValue(_ name: String, of request: HTTPRequest, to base: inout [UInt8]) -> Bool {
        switch name {
        case "@method":
            base.append(contentsOf: request.method.rawValue.utf8)
        case "@authority":
            guard let authority = normalizedAuthority(request) else { return false }
            base.append(contentsOf: authority.utf8)
        case "@scheme":
            guard let scheme = request.scheme else { return false }
            base.append(contentsOf: scheme.lowercasedQuickly().utf8)
        case "@target-uri":
            guard let scheme = request.scheme, let authority = normalizedAuthority(request) else { return false }
            base.append(contentsOf: scheme.lowercasedQuickly().utf8)
            base.append(contentsOf: "://".utf8)
            base.append(contentsOf: authority.utf8)
            base.append(contentsOf: (request.path ?? "").utf8)
        case "@request-target":
            guard let path = request.path else { return false }
            base.append(contentsOf: path.utf8)
        default:
            return false
        }
        return true
    }

    /// A field's lines, each without surrounding whitespace, joined by `, ` (``fieldValue(of:in:)`` for
    /// a component without parameters); false when the name is not a lowercase field name or the
    /// message has no such field.
    private static func appendPlainFieldValue(_ name: String, of fields: HTTPFields, to base: inout [UInt8]) -> Bool {
        guard let fieldName = HTTPField.Name(name), fieldName.canonicalName == name else { return false }
        var found = false
        // By position, names compared in place (see `HTTPFields.combinedLines(of:)`).
        for index in fields.indices where fields[index].name.canonicalName == fieldName.canonicalName {
            if found {
                base.append(UInt8(ascii: ","))
                base.append(UInt8(ascii: " "))
            }
            base.append(contentsOf: fields[index].value.trimmingWhitespace().utf8)
            found = true
        }
        return found
    }

    /// The `@signature-params` value, which is also the member value of the `Signature-Input` field:
    /// the covered components as an inner list of strings, with the signature parameters — the
    /// structured-field serialization of the inner list (RFC 9651 §4.1.1.1), written directly.
    ///
    /// - Throws: ``HTTPSignatureError`` `.invalidComponent` when a component name or a string parameter
    ///   is not printable ASCII, or an integer is beyond a structured field's 15 digits.
    public static func signatureParams(
        _ components: [HTTPSignatureComponent], _ parameters: HTTPSignatureParameters
    ) throws(HTTPSignatureError) -> String {
        String(decoding: try signatureParamsBytes(components, parameters), as: UTF8.self)
    }

    /// ``signatureParams(_:_:)`` as bytes.
    static func signatureParamsBytes(
        _ components: [HTTPSignatureComponent], _ parameters: HTTPSignatureParameters
    ) throws(HTTPSignatureError) -> [UInt8] {
        func unprintable() -> HTTPSignatureError {
            HTTPSignatureError(.invalidComponent, "a component name or parameter is not printable ASCII, which a signature cannot carry")
        }
        var out: [UInt8] = []
        out.reserveCapacity(96 + 24 * components.count)
        out.append(UInt8(ascii: "("))
        for (index, component) in components.enumerated() {
            guard component.isSerializable else { throw unprintable() }
            if index > 0 { out.append(UInt8(ascii: " ")) }
            component.appendIdentifier(to: &out)
        }
        out.append(UInt8(ascii: ")"))
        try parameters.forEachEntry { (name, value) throws(HTTPSignatureError) in
            out.append(UInt8(ascii: ";"))
            out.append(contentsOf: name.utf8)
            out.append(UInt8(ascii: "="))
            switch value {
            case .integer(let number):
                guard (-999_999_999_999_999...999_999_999_999_999).contains(number) else {
                    throw HTTPSignatureError(.invalidComponent, "the \(name) parameter \(number) has more than the 15 digits a structured-field integer allows")
                }
                out.append(contentsOf: String(number).utf8)
            case .string(let text):
                guard isStructuredFieldString(text) else { throw unprintable() }
                appendQuoted(text, to: &out)
            }
        }
        return out
    }

    /// The structured-field form of a signature's components and parameters.
    static func innerList(_ components: [HTTPSignatureComponent], _ parameters: HTTPSignatureParameters) -> InnerList {
        var list = BareInnerList()
        for component in components {
            var componentParameters = OrderedMap<String, RFC9651BareItem>()
            for parameter in component.parameters {
                switch parameter {
                case .name(let value): componentParameters["name"] = .string(value)
                case .key(let value): componentParameters["key"] = .string(value)
                case .structured: componentParameters["sf"] = .bool(true)
                case .byteSequence: componentParameters["bs"] = .bool(true)
                case .request: componentParameters["req"] = .bool(true)
                }
            }
            list.append(Item(bareItem: RFC9651BareItem.string(component.name), parameters: componentParameters))
        }
        var signatureParameters = OrderedMap<String, RFC9651BareItem>()
        parameters.forEachEntry { name, value in
            switch value {
            case .integer(let number): signatureParameters[name] = .integer(number)
            case .string(let text): signatureParameters[name] = .string(text)
            }
        }
        return InnerList(bareInnerList: list, parameters: signatureParameters)
    }

    // MARK: - Component values

    /// The value (or, for a repeated query parameter, values) of one component.
    static func values(of component: HTTPSignatureComponent, in message: HTTPSignedMessage) throws(HTTPSignatureError) -> [String] {
        if component.isFromRequest {
            guard case .response(_, let request) = message else {
                throw HTTPSignatureError(.invalidComponent, "\(component): req applies only to responses")
            }
            guard let request else {
                throw HTTPSignatureError(.missingComponent, "\(component) is covered but the request this response answers was not given")
            }
            let own = HTTPSignatureComponent(name: component.name, parameters: component.parameters.filter { $0 != .request })
            return try values(of: own, in: .request(request))
        }
        guard component.isDerived else { return [try fieldValue(of: component, in: message.headerFields)] }
        let allowed = component.name == "@query-param" ? 1 : 0
        guard component.parameters.count == allowed else {
            throw HTTPSignatureError(.invalidComponent, "\(component) has parameters a derived component does not take")
        }
        switch message {
        case .request(let request):
            return try derivedValues(of: component, in: request)
        case .response(let response, _):
            guard component.name == "@status" else {
                throw HTTPSignatureError(.invalidComponent, "\(component) belongs to requests; mark it ;req to take it from the request")
            }
            return [String(response.status.code)]
        }
    }

    static func derivedValues(of component: HTTPSignatureComponent, in request: HTTPRequest) throws(HTTPSignatureError) -> [String] {
        func missing(_ what: String) -> HTTPSignatureError {
            HTTPSignatureError(.missingComponent, "\(component) is covered but the request has no \(what)")
        }
        let target = request.path ?? ""
        switch component.name {
        case "@method":
            return [request.method.rawValue]
        case "@authority":
            guard let authority = normalizedAuthority(request) else { throw missing("authority") }
            return [authority]
        case "@scheme":
            guard let scheme = request.scheme else { throw missing("scheme") }
            return [scheme.lowercasedQuickly()]
        case "@target-uri":
            guard let scheme = request.scheme, let authority = normalizedAuthority(request) else { throw missing("scheme and authority") }
            return [scheme.lowercasedQuickly() + "://" + authority + target]
        case "@request-target":
            guard request.path != nil else { throw missing("target") }
            return [target]
        case "@path":
            let path = splitTarget(target).path
            return [path.isEmpty ? "/" : path]
        case "@query":
            return ["?" + (splitTarget(target).query ?? "")]
        case "@query-param":
            guard let wanted = component.queryParameterName else {
                throw HTTPSignatureError(.invalidComponent, "@query-param needs its name parameter")
            }
            let found = FormEncoding.pairs(in: splitTarget(target).query ?? "").filter { $0.name == wanted }.map { FormEncoding.encode($0.value) }
            guard !found.isEmpty else { throw missing("query parameter '\(wanted)'") }
            return found
        case "@status":
            throw HTTPSignatureError(.invalidComponent, "@status belongs to responses, not requests")
        default:
            throw HTTPSignatureError(.invalidComponent, "\(component) is not a derived component RFC 9421 defines")
        }
    }

    /// A header field's value under its parameters (RFC 9421 §2.1).
    static func fieldValue(of component: HTTPSignatureComponent, in fields: HTTPFields) throws(HTTPSignatureError) -> String {
        for parameter in component.parameters {
            if case .name = parameter {
                throw HTTPSignatureError(.invalidComponent, "\(component): name applies only to @query-param")
            }
        }
        if component.isByteSequence && (component.isStructured || component.dictionaryKey != nil) {
            throw HTTPSignatureError(.invalidComponent, "\(component): bs cannot be combined with sf or key")
        }
        guard let name = HTTPField.Name(component.name), component.name == name.canonicalName else {
            throw HTTPSignatureError(.invalidComponent, "\(component) is not a valid lowercase field name")
        }
        let lines = fields[values: name]
        guard !lines.isEmpty else {
            throw HTTPSignatureError(.missingComponent, "\(component) is covered but the message has no \(component.name) field")
        }
        if component.isByteSequence {
            return lines.map { ":" + Base64.encode(Array($0.trimmingWhitespace().utf8)) + ":" }.joined(separator: ", ")
        }
        let combined = lines.count == 1 ? lines[0].trimmingWhitespace() : lines.map { $0.trimmingWhitespace() }.joined(separator: ", ")
        if let key = component.dictionaryKey {
            return try StructuredField.member(key, ofDictionary: combined, component: component)
        }
        if component.isStructured {
            return try StructuredField.reserialized(combined, component: component)
        }
        return combined
    }

    /// The path and, when there is a `?`, the query of a request target.
    static func splitTarget(_ target: String) -> (path: String, query: String?) {
        guard let mark = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    /// The authority in lowercase, without the scheme's default port.
    static func normalizedAuthority(_ request: HTTPRequest) -> String? {
        guard var authority = request.authority?.lowercasedQuickly(), !authority.isEmpty else { return nil }
        let scheme = request.scheme?.lowercasedQuickly()
        if scheme == "https" && authority.hasSuffix(":443") { authority.removeLast(4) }
        if scheme == "http" && authority.hasSuffix(":80") { authority.removeLast(3) }
        return authority
    }
}

extension String {
    /// `lowercased()`, without its Unicode tables for the usual case: text of ASCII letters, digits and
    /// punctuation with no capital comes back as it is.
    func lowercasedQuickly() -> String {
        for byte in utf8 where byte >= 0x80 || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
            return lowercased()
        }
        return self
    }

    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingWhitespace() -> String {
        let bytes = utf8
        let isWhitespace: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let first = bytes.first, let last = bytes.last else { return self }
        if !isWhitespace(first) && !isWhitespace(last) { return self }
        guard let start = bytes.firstIndex(where: { !isWhitespace($0) }), let end = bytes.lastIndex(where: { !isWhitespace($0) }) else { return "" }
        return String(self[start...end])
    }
}
