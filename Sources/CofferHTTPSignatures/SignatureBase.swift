public import HTTPTypes
import RawStructuredFieldValues

/// The signature base (RFC 9421 §2.5): the exact bytes an HTTP message signature signs, one line per
/// covered component and a last `@signature-params` line.
public enum HTTPSignatureBase {
    /// The signature base of a request.
    ///
    /// - Throws: ``HTTPSignatureError`` `.missingComponent` when the request lacks a covered component,
    ///   `.duplicateComponent` when one is listed twice, `.invalidComponent` for an unknown derived
    ///   component or text a structured field cannot carry.
    public static func make(
        for request: HTTPRequest, covering components: [HTTPSignatureComponent], parameters: HTTPSignatureParameters
    ) throws(HTTPSignatureError) -> String {
        var seen: Set<HTTPSignatureComponent> = []
        var lines: [String] = []
        for component in components {
            guard seen.insert(component).inserted else {
                throw HTTPSignatureError(.duplicateComponent, "\(component) is covered twice")
            }
            for value in try values(of: component, in: request) {
                lines.append("\(component): \(value)")
            }
        }
        lines.append("\"@signature-params\": " + (try signatureParams(components, parameters)))
        return lines.joined(separator: "\n")
    }

    /// The `@signature-params` value, which is also the member value of the `Signature-Input` field:
    /// the covered components as an inner list of strings, with the signature parameters.
    public static func signatureParams(
        _ components: [HTTPSignatureComponent], _ parameters: HTTPSignatureParameters
    ) throws(HTTPSignatureError) -> String {
        var list = BareInnerList()
        for component in components {
            var componentParameters = OrderedMap<String, RFC9651BareItem>()
            if let name = component.queryParameterName { componentParameters["name"] = .string(name) }
            list.append(Item(bareItem: RFC9651BareItem.string(component.name), parameters: componentParameters))
        }
        var signatureParameters = OrderedMap<String, RFC9651BareItem>()
        for (name, value) in parameters.entries {
            switch value {
            case .integer(let number): signatureParameters[name] = .integer(number)
            case .string(let text): signatureParameters[name] = .string(text)
            }
        }
        var serializer = StructuredFieldValueSerializer()
        do {
            let bytes = try serializer.writeListFieldValue([.innerList(InnerList(bareInnerList: list, parameters: signatureParameters))])
            return String(decoding: bytes, as: UTF8.self)
        } catch {
            throw HTTPSignatureError(.invalidComponent, "a component name or parameter is not printable ASCII, which a signature cannot carry")
        }
    }

    /// The value (or, for a repeated query parameter, values) of one component.
    static func values(of component: HTTPSignatureComponent, in request: HTTPRequest) throws(HTTPSignatureError) -> [String] {
        func missing(_ what: String) -> HTTPSignatureError {
            HTTPSignatureError(.missingComponent, "\(component) is covered but the request has no \(what)")
        }
        guard component.isDerived else {
            guard let name = HTTPField.Name(component.name) else {
                throw HTTPSignatureError(.invalidComponent, "\(component) is not a valid field name")
            }
            let values = request.headerFields[values: name]
            guard !values.isEmpty else { throw missing("\(component.name) field") }
            return [values.map { $0.trimmingWhitespace() }.joined(separator: ", ")]
        }
        let target = request.path ?? ""
        let (path, query) = splitTarget(target)
        switch component.name {
        case "@method":
            return [request.method.rawValue]
        case "@authority":
            guard let authority = normalizedAuthority(request) else { throw missing("authority") }
            return [authority]
        case "@scheme":
            guard let scheme = request.scheme else { throw missing("scheme") }
            return [scheme.lowercased()]
        case "@target-uri":
            guard let scheme = request.scheme, let authority = normalizedAuthority(request) else { throw missing("scheme and authority") }
            return ["\(scheme.lowercased())://\(authority)\(target)"]
        case "@request-target":
            guard request.path != nil else { throw missing("target") }
            return [target]
        case "@path":
            return [path.isEmpty ? "/" : path]
        case "@query":
            return ["?" + (query ?? "")]
        case "@query-param":
            guard let wanted = component.queryParameterName else {
                throw HTTPSignatureError(.invalidComponent, "@query-param needs its name parameter")
            }
            let found = FormEncoding.pairs(in: query ?? "").filter { $0.name == wanted }.map { FormEncoding.encode($0.value) }
            guard !found.isEmpty else { throw missing("query parameter '\(wanted)'") }
            return found
        case "@status":
            throw HTTPSignatureError(.invalidComponent, "@status belongs to responses, not requests")
        default:
            throw HTTPSignatureError(.invalidComponent, "\(component) is not a derived component RFC 9421 defines")
        }
    }

    /// The path and, when there is a `?`, the query of a request target.
    static func splitTarget(_ target: String) -> (path: String, query: String?) {
        guard let mark = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    /// The authority in lowercase, without the scheme's default port.
    static func normalizedAuthority(_ request: HTTPRequest) -> String? {
        guard var authority = request.authority?.lowercased(), !authority.isEmpty else { return nil }
        let scheme = request.scheme?.lowercased()
        if scheme == "https" && authority.hasSuffix(":443") { authority.removeLast(4) }
        if scheme == "http" && authority.hasSuffix(":80") { authority.removeLast(3) }
        return authority
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingWhitespace() -> String {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed())
    }
}
