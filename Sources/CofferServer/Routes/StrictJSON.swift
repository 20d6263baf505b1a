import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// JSON bodies read strictly: `Content-Type: application/json` (`415 unsupported-media-type`
/// otherwise), at most a route's limit (`413 body-too-large`), an object with only the fields a route
/// knows, each of its type (`400 unknown-field`, `400 invalid-request`).
enum StrictJSON {
    enum Body {
        case bytes(Data)
        case problem(ProblemDetails)
    }

    /// The request's body, once its content type and size are known to be acceptable. An empty body is
    /// accepted whatever its content type (routes whose fields are all optional read it as `{}`).
    static func read(_ request: inout Request, limit: Int) async throws -> Body {
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            return .problem(ProblemDetails(status: .contentTooLarge, reason: "body-too-large", detail: "the body is larger than this route's \(limit) bytes"))
        }
        guard buffer.readableBytes > 0 else { return .bytes(Data()) }
        guard let type = request.headers.combinedLines(of: .contentType), isJSON(mediaType: type) else {
            return .problem(ProblemDetails(
                status: .unsupportedMediaType, reason: "unsupported-media-type",
                detail: "send the body as Content-Type: application/json, not \(request.headers[.contentType].map { "'\($0.clipped(toUTF8: 60))'" } ?? "without a content type")"
            ))
        }
        return .bytes(Data(buffer.readableBytesView))
    }

    /// For a route that takes no fields: nil when the body is empty or `{}`, else the problem.
    static func noFields(_ request: inout Request, limit: Int) async throws -> ProblemDetails? {
        struct Nothing: Decodable {}
        switch try await read(&request, limit: limit) {
        case .problem(let problem): return problem
        case .bytes(let data) where data.isEmpty: return nil
        case .bytes(let data):
            if case .problem(let problem) = decode(Nothing.self, from: data, allowed: []) { return problem }
            return nil
        }
    }

    /// Whether a `Content-Type` value names JSON: `application/json` or `application/…+json`, in any
    /// case, with any parameters and surrounding whitespace. Byte by byte: Foundation's trimming and
    /// lowercasing consult Unicode tables, a cost every signed request paid.
    static func isJSON(mediaType field: String) -> Bool {
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        var type = field.utf8.prefix { $0 != UInt8(ascii: ";") }   // a view of the field: nothing copied
        while let first = type.first, isWhitespace(first) { type = type.dropFirst() }
        while let last = type.last, isWhitespace(last) { type = type.dropLast() }
        /// Whether `bytes` spell `lowercase` in any case.
        func spell(_ bytes: Substring.UTF8View, _ lowercase: String) -> Bool {
            bytes.elementsEqual(lowercase.utf8) { ((0x41...0x5A).contains($0) ? $0 | 0x20 : $0) == $1 }
        }
        let application = "application/", json = "+json"
        return spell(type, "application/json")
            || (type.count >= application.utf8.count + json.utf8.count
                && spell(type.prefix(application.utf8.count), application) && spell(type.suffix(json.utf8.count), json))
    }

    enum Decoded<T> {
        case value(T)
        case problem(ProblemDetails)

        /// The value, or the problem thrown (a route's answer: ``ProblemAnswers``).
        func get() throws(ProblemDetails) -> T {
            switch self {
            case .value(let value): return value
            case .problem(let problem): throw problem
            }
        }
    }

    /// The body as `T`, parsed once: the keys are checked against `allowed` from the same parse that
    /// decodes the value (a second parser for the keys cost as much as the rest of a signed request).
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, allowed: Set<String>) -> Decoded<T> {
        if let name = repeatedField(in: data) { return .problem(repeated(name)) }
        let decoder = JSONDecoder()
        if let key = allowedFieldsKey { decoder.userInfo[key] = allowed }
        do {
            return .value(try decoder.decode(Checked<T>.self, from: data).value)
        } catch let unknown as UnknownFields {
            return .problem(unknownFields(unknown.names, allowed: allowed))
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            return .problem(notAnObject)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // Foundation's decoder reports a number that is no integer where one belongs (1.5, 1e400,
            // 2^63) without the field's path: the body is an object all the same.
            return .problem((try? JSONSerialization.jsonObject(with: data)) is [String: Any] ? notAnInteger(allowed: allowed) : notAnObject)
        } catch {
            return .problem(wrongType(allowed: allowed))
        }
    }

    /// A body that is an object of required string fields, exactly `names`: their values in that order.
    /// The same answers as ``decode(_:from:allowed:)`` for such a body, from one `JSONSerialization`
    /// pass (the signed `/register_user` reads its body this way: with the `Codable` path it took
    /// 30–45 µs more server CPU a request under load, docs/PERFORMANCE.md).
    static func strings(_ names: [String], from data: Data) -> Decoded<[String]> {
        let allowed = Set(names)
        if let name = repeatedField(in: data) { return .problem(repeated(name)) }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return .problem(notAnObject) }
        let unknown = object.keys.filter { !allowed.contains($0) }
        guard unknown.isEmpty else { return .problem(unknownFields(unknown, allowed: allowed)) }
        var values: [String] = []
        values.reserveCapacity(names.count)
        for name in names {
            guard let value = object[name] as? String else { return .problem(wrongType(allowed: allowed)) }
            values.append(value)
        }
        return .value(values)
    }

    static func repeated(_ name: String) -> ProblemDetails {
        ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "the field '\(name.clipped(toUTF8: 40))' is given more than once")
    }

    /// The first name an object in `data` gives twice, compared after JSON's escapes (`"em\u0061il"` is
    /// `"email"`), or nil. JSON leaves repeated names to the parser: Foundation's decoder keeps the first
    /// copy and `JSONSerialization` the last, so a body with both could mean one thing here and another
    /// to a proxy or a log; such a body is refused instead. Only names are looked at: text that is not
    /// JSON is left to the parser that follows, which refuses it.
    static func repeatedField(in data: Data) -> String? {
        // Per open container: whether it is an object, the names it gave, and whether a name comes next.
        var open: [(isObject: Bool, names: Set<String>, nameNext: Bool)] = []
        var index = data.startIndex
        while index < data.endIndex {
            let byte = data[index]
            switch byte {
            case UInt8(ascii: "{"): open.append((true, [], true))
            case UInt8(ascii: "["): open.append((false, [], false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !open.isEmpty { open.removeLast() }
            case UInt8(ascii: ","): if let last = open.indices.last, open[last].isObject { open[last].nameNext = true }
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                index += 1
                while index < data.endIndex {
                    let inner = data[index]
                    if inner == UInt8(ascii: "\\") { escaped = true; index += 2; continue }
                    if inner == UInt8(ascii: "\"") { break }
                    index += 1
                }
                guard index < data.endIndex else { return nil }
                if let last = open.indices.last, open[last].isObject, open[last].nameNext {
                    open[last].nameNext = false
                    let token = data[start...index]
                    let name = escaped
                        ? (try? JSONDecoder().decode(String.self, from: Data(token)))
                        : String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
                    guard let name else { return nil }
                    if !open[last].names.insert(name).inserted { return name }
                }
            default: break
            }
            index += 1
        }
        return nil
    }

    static let notAnObject = ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "the body must be a JSON object")

    static func wrongType(allowed: Set<String>) -> ProblemDetails {
        ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "a field has the wrong type; expected \(allowed.sorted().joined(separator: ", "))")
    }

    static func notAnInteger(allowed: Set<String>) -> ProblemDetails {
        ProblemDetails(
            status: .badRequest, reason: "invalid-request",
            detail: "a field has the wrong type: a number that is not an integer (or too large for one) where an integer belongs; expected \(allowed.sorted().joined(separator: ", "))"
        )
    }

    static func unknownFields(_ unknown: [String], allowed: Set<String>) -> ProblemDetails {
        let names = unknown.sorted()
        return ProblemDetails(
            status: .badRequest, reason: "unknown-field",
            detail: "unknown field\(names.count == 1 ? "" : "s") \(names.map { "'\($0.clipped(toUTF8: 40))'" }.joined(separator: ", ")); expected \(allowed.sorted().joined(separator: ", "))"
        )
    }

    /// Where ``decode(_:from:allowed:)`` tells ``Checked`` the allowed fields. (Were it ever nil, no
    /// field would be allowed: a refusal, never a pass.)
    static let allowedFieldsKey = CodingUserInfoKey(rawValue: "coffer.allowed-fields")

    /// Fields a body has that its route does not read.
    struct UnknownFields: Error {
        let names: [String]
    }

    /// `T`, decoded after checking that the object has no key outside the allowed set.
    struct Checked<T: Decodable>: Decodable {
        let value: T

        struct AnyKey: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let allowed = StrictJSON.allowedFieldsKey.flatMap { decoder.userInfo[$0] as? Set<String> } ?? []
            let unknown = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).filter { !allowed.contains($0) }
            if !unknown.isEmpty { throw UnknownFields(names: unknown) }
            value = try T(from: decoder)
        }
    }
}


/// A JSON body a route reads through ``Hummingbird/Request/decodeStrictly(as:limit:)``: the fields it
/// knows (any other is `400 unknown-field`) and what an empty body stands for.
protocol StrictRequestBody: Decodable {
    /// Every field the body may have.
    static var fields: Set<String> { get }
    /// Whether an empty body reads as `{}` (a route whose fields are all optional); otherwise it is
    /// `400 invalid-request`, as any body that is not a JSON object.
    static var emptyBodyIsEmptyObject: Bool { get }
}

extension StrictRequestBody {
    static var emptyBodyIsEmptyObject: Bool { false }

    /// The body `data` as this type, or the problem thrown.
    static func strictlyDecoded(from data: Data) throws(ProblemDetails) -> Self {
        let text = data.isEmpty && emptyBodyIsEmptyObject ? Data("{}".utf8) : data
        return try StrictJSON.decode(Self.self, from: text, allowed: fields).get()
    }
}

/// The body of a route that takes no fields: empty, or `{}`.
struct NoFields: StrictRequestBody {
    static let fields: Set<String> = []
    static let emptyBodyIsEmptyObject = true
}

/// The one way a route reads its body, Hummingbird's `request.decode(as:context:)` made strict: every
/// refusal is a ``ProblemDetails`` thrown, which ``ProblemAnswers`` turns into the route's answer.
extension Request {
    /// The body's bytes, at most `limit` (`413 body-too-large`), sent as JSON (`415
    /// unsupported-media-type`; an empty body is accepted whatever its type).
    func strictJSONBody(limit: Int) async throws -> Data {
        var request = self
        switch try await StrictJSON.read(&request, limit: limit) {
        case .bytes(let data): return data
        case .problem(let problem): throw problem
        }
    }

    /// The body as `Body`, read by ``strictJSONBody(limit:)``, parsed once with its fields checked
    /// (`400 unknown-field`, `400 invalid-request` for a body that is not an object of `Body`'s types).
    func decodeStrictly<Body: StrictRequestBody>(as type: Body.Type, limit: Int) async throws -> Body {
        try Body.strictlyDecoded(from: try await strictJSONBody(limit: limit))
    }
}

/// Answers a ``ProblemDetails`` a route throws with its response, inside every middleware of the route's
/// group: the signature checks, ``AdminOnly`` and the failure limits see the answer as if the route had
/// returned it.
struct ProblemAnswers<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as ProblemDetails {
            return problem.response()
        }
    }
}
