import Foundation
import Yams

/// docs/openapi.yaml, read for the contract test: which answers it documents, and whether an answer
/// the server gave fits what it documents (status, content type, required headers, body schema).
///
/// The schema check covers the JSON Schema keywords the document uses: `$ref`, `type` (one or a list),
/// `enum`, `const`, `required`, `properties`, `additionalProperties: false`, `maxProperties`, `items`,
/// `maxItems`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern` and `oneOf`. A keyword it does
/// not know is reported, so the document cannot grow past what the test checks.
struct OpenAPIDocument: @unchecked Sendable {  // immutable once read
    let root: [String: Any]

    static let location = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml")

    static let methods = ["get", "put", "post", "delete", "patch", "head", "options"]
    static let knownKeywords: Set<String> = [
        "$ref", "type", "enum", "const", "required", "properties", "additionalProperties", "maxProperties", "items", "maxItems",
        "minimum", "maximum", "minLength", "maxLength", "pattern", "oneOf", "description", "default", "contentEncoding",
    ]

    init() throws {
        let text = try String(contentsOf: Self.location, encoding: .utf8)
        guard let root = Self.plain(try Yams.load(yaml: text)) as? [String: Any] else { throw DocumentError("the document is not a mapping") }
        self.root = root
    }

    struct DocumentError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Yams' values with string keys throughout.
    static func plain(_ value: Any?) -> Any? {
        switch value {
        case let mapping as [AnyHashable: Any]:
            return Dictionary(uniqueKeysWithValues: mapping.map { ("\($0.key.base)", plain($0.value) as Any) })
        case let mapping as [String: Any]:
            return mapping.mapValues { plain($0) as Any }
        case let sequence as [Any]:
            return sequence.map { plain($0) as Any }
        default:
            return value
        }
    }

    var paths: [String: Any] { root["paths"] as? [String: Any] ?? [:] }

    /// Every documented answer as `METHOD /path/{template} status`.
    var documentedAnswers: Set<String> {
        var answers: Set<String> = []
        for (path, item) in paths {
            for (method, operation) in item as? [String: Any] ?? [:] where Self.methods.contains(method) {
                for status in (operation as? [String: Any])?["responses"] as? [String: Any] ?? [:] {
                    answers.insert("\(method.uppercased()) \(path) \(status.key)")
                }
            }
        }
        return answers
    }

    /// The operation at `method path`.
    func operation(_ method: String, _ path: String) -> [String: Any]? {
        (paths[path] as? [String: Any])?[method.lowercased()] as? [String: Any]
    }

    /// The signed operations (`security` names the message signature), as `(METHOD, /path/{template})`.
    var signedOperations: [(method: String, path: String)] {
        paths.flatMap { path, item in
            (item as? [String: Any] ?? [:]).compactMap { method, operation -> (String, String)? in
                guard Self.methods.contains(method), (operation as? [String: Any])?["security"] != nil else { return nil }
                return (method.uppercased(), path)
            }
        }.sorted { ($0.path, $0.method) < ($1.path, $1.method) }
    }

    /// The statuses documented for an operation.
    func statuses(_ method: String, _ path: String) -> Set<Int> {
        Set((operation(method, path)?["responses"] as? [String: Any] ?? [:]).keys.compactMap { Int($0) })
    }

    /// A node with its `$ref` followed (local references only).
    func resolved(_ node: Any?) -> [String: Any]? {
        guard var mapping = node as? [String: Any] else { return nil }
        var hops = 0
        while let reference = mapping["$ref"] as? String, hops < 16 {
            guard reference.hasPrefix("#/") else { return nil }
            var target: Any? = root
            for part in reference.dropFirst(2).split(separator: "/") { target = (target as? [String: Any])?[String(part)] }
            guard let next = target as? [String: Any] else { return nil }
            mapping = next
            hops += 1
        }
        return mapping
    }

    /// What is wrong with an answer, measured against the document; empty when it fits.
    func problems(method: String, path: String, status: Int, contentType: String?, headers: [String: String], body: [UInt8]) -> [String] {
        guard let response = resolved((operation(method, path)?["responses"] as? [String: Any])?[String(status)]) else {
            return ["\(method) \(path) answered \(status), which the document does not list"]
        }
        var problems: [String] = []
        for (name, header) in response["headers"] as? [String: Any] ?? [:] {
            guard let header = resolved(header) else { problems.append("header \(name): unresolvable"); continue }
            let value = headers[name.lowercased()]
            if header["required"] as? Bool == true && value == nil { problems.append("the required header \(name) is missing") }
            if let value, let schema = resolved(header["schema"]) {
                problems += validate(.string(value), schema, at: "header \(name)")
            }
        }
        let content = response["content"] as? [String: Any] ?? [:]
        guard !content.isEmpty else {
            if !body.isEmpty { problems.append("a body where the document has none") }
            return problems
        }
        let type = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let media = content[type] as? [String: Any] else {
            return problems + ["content type '\(type)', the document has \(content.keys.sorted())"]
        }
        guard let schema = resolved(media["schema"]) else { return problems }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(body)) else {
            return problems + ["the body is not JSON: \(String(decoding: body.prefix(200), as: UTF8.self))"]
        }
        return problems + validate(value, schema, at: "body")
    }

    /// The ways `value` breaks `schema`.
    func validate(_ value: JSONValue, _ schema: [String: Any], at pointer: String) -> [String] {
        guard let schema = resolved(schema) else { return ["\(pointer): unresolvable schema"] }
        var problems = Set(schema.keys).subtracting(Self.knownKeywords).sorted().map { "\(pointer): the test does not check the keyword '\($0)'" }
        if let types = schema["type"].map({ ($0 as? [Any])?.compactMap { $0 as? String } ?? [$0 as? String ?? ""] }),
           !types.contains(where: { value.isOfType($0) }) {
            return problems + ["\(pointer): \(value) is not of type \(types)"]
        }
        if let choices = schema["enum"] as? [Any], !choices.contains(where: { value.equals($0) }) {
            problems.append("\(pointer): \(value) is not one of \(choices)")
        }
        if let constant = schema["const"], !value.equals(constant) { problems.append("\(pointer): \(value) is not \(constant)") }
        if let alternatives = schema["oneOf"] as? [Any] {
            let fitting = alternatives.filter { validate(value, resolved($0) ?? [:], at: pointer).isEmpty }.count
            if fitting != 1 { problems.append("\(pointer): \(value) fits \(fitting) of oneOf's \(alternatives.count) schemas, not one") }
        }
        switch value {
        case .object(let object):
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in schema["required"] as? [String] ?? [] where object[name] == nil { problems.append("\(pointer): the required '\(name)' is missing") }
            if schema["additionalProperties"] as? Bool == false {
                for name in object.keys.sorted() where properties[name] == nil { problems.append("\(pointer): '\(name)' is not documented") }
            }
            if let most = schema["maxProperties"] as? Int, object.count > most { problems.append("\(pointer): more than \(most) properties") }
            for (name, property) in object.sorted(by: { $0.key < $1.key }) {
                if let subschema = resolved(properties[name]) { problems += validate(property, subschema, at: "\(pointer).\(name)") }
            }
        case .array(let items):
            if let most = schema["maxItems"] as? Int, items.count > most { problems.append("\(pointer): more than \(most) items") }
            if let itemSchema = resolved(schema["items"]) {
                for (index, item) in items.enumerated() { problems += validate(item, itemSchema, at: "\(pointer)[\(index)]") }
            }
        case .string(let text):
            if let least = schema["minLength"] as? Int, text.count < least { problems.append("\(pointer): shorter than \(least)") }
            if let most = schema["maxLength"] as? Int, text.count > most { problems.append("\(pointer): longer than \(most)") }
            if let pattern = schema["pattern"] as? String {
                let matches = (try? NSRegularExpression(pattern: pattern)).map {
                    $0.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                } ?? false
                if !matches { problems.append("\(pointer): '\(text.prefix(80))' does not match \(pattern)") }
            }
        case .integer(let number):
            if let least = Self.number(schema["minimum"]), Double(number) < least { problems.append("\(pointer): \(number) is below \(least)") }
            if let most = Self.number(schema["maximum"]), Double(number) > most { problems.append("\(pointer): \(number) is above \(most)") }
        case .number(let number):
            if let least = Self.number(schema["minimum"]), number < least { problems.append("\(pointer): \(number) is below \(least)") }
            if let most = Self.number(schema["maximum"]), number > most { problems.append("\(pointer): \(number) is above \(most)") }
        case .null, .bool:
            break
        }
        return problems
    }

    static func number(_ value: Any?) -> Double? {
        switch value {
        case let integer as Int: Double(integer)
        case let double as Double: double
        default: nil
        }
    }
}

/// A JSON value that keeps integers, numbers and booleans apart (JSONDecoder does; JSONSerialization
/// on Linux does not).
enum JSONValue: Decodable, CustomStringConvertible {
    case null, bool(Bool), integer(Int64), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    var string: String? { if case .string(let text) = self { text } else { nil } }

    func isOfType(_ type: String) -> Bool {
        switch (type, self) {
        case ("null", .null), ("boolean", .bool), ("integer", .integer), ("number", .integer), ("number", .number),
             ("string", .string), ("array", .array), ("object", .object): true
        default: false
        }
    }

    /// Equality with a value from the YAML document.
    func equals(_ other: Any) -> Bool {
        switch self {
        case .string(let text): (other as? String) == text
        case .bool(let flag): (other as? Bool) == flag
        case .integer(let number): (other as? Int).map { Int64($0) == number } ?? false
        case .number(let number): OpenAPIDocument.number(other) == number
        case .null: other is NSNull
        case .array, .object: false
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let flag): String(flag)
        case .integer(let number): String(number)
        case .number(let number): String(number)
        case .string(let text): "'\(text.prefix(60))'"
        case .array(let items): "an array of \(items.count)"
        case .object(let object): "an object with \(object.keys.sorted())"
        }
    }
}
