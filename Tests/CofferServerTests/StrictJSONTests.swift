@testable import CofferServer
import CofferHummingbird
import Foundation
import Testing

/// The strict body reader's two fast paths (issue 22's performance work) against what they replaced.
@Suite("Strict JSON bodies")
struct StrictJSONTests {
    @Test(arguments: [
        ("application/json", true), ("Application/JSON", true), ("application/json; charset=utf-8", true), ("  application/json\t;x=1", true),
        ("application/problem+json", true), ("application/vnd.api+JSON", true), ("application/+json", true),
        ("text/json", false), ("application/jsonx", false), ("application/json+xml", false), ("application", false), ("", false),
        (";application/json", false), ("text/plain; application/json", false), ("application /json", false),
    ])
    func mediaTypes(field: String, isJSON: Bool) {
        #expect(StrictJSON.isJSON(mediaType: field) == isJSON)
    }

    struct Body: Decodable {
        let email: String
        let count: Int?
    }

    static func outcome(_ text: String) -> String {
        switch StrictJSON.decode(Body.self, from: Data(text.utf8), allowed: ["email", "count"]) {
        case .value(let body): "value \(body.email) \(body.count.map(String.init) ?? "-")"
        case .problem(let problem): "\(problem.reason): \(problem.detail)"
        }
    }

    @Test func oneParseChecksTheKeysAndTheTypes() {
        #expect(Self.outcome(#"{"email": "a@b", "count": 2}"#) == "value a@b 2")
        #expect(Self.outcome(#"{"email": "a@b"}"#) == "value a@b -")
        #expect(Self.outcome(#"{"email": "a@b", "extra": 1, "more": null}"#).hasPrefix("unknown-field: unknown fields 'extra', 'more'"))
        #expect(Self.outcome(#"{"email": 3}"#).hasPrefix("invalid-request: a field has the wrong type"))
        #expect(Self.outcome(#"{"count": 3}"#).hasPrefix("invalid-request"), "a required field is missing")
        #expect(Self.outcome("[1, 2]") == "invalid-request: the body must be a JSON object")
        #expect(Self.outcome("{nope") == "invalid-request: the body must be a JSON object")
        #expect(Self.outcome("null").hasPrefix("invalid-request"))
    }

    /// A number that is no integer where an integer belongs is a field of the wrong type (it was
    /// refused as "the body must be a JSON object", which it is).
    @Test(arguments: [#"{"version": 1.5}"#, #"{"version": 9223372036854775808}"#, #"{"version": -0.5}"#])
    func aNumberThatIsNoIntegerIsAFieldOfTheWrongType(body: String) {
        // `POST /data-keys`' body, whose one field is an optional Int64.
        #expect(throws: ProblemDetails.self) { try DataKeyRoutes.FetchBody.strictlyDecoded(from: Data(body.utf8)) }
        do {
            _ = try DataKeyRoutes.FetchBody.strictlyDecoded(from: Data(body.utf8))
        } catch {
            #expect(error.reason == "invalid-request" && error.detail.hasPrefix("a field has the wrong type"), "\(error.detail)")
        }
    }

    struct Strings: Decodable {
        let email: String
        let name: String
    }

    /// The one-pass reader `/register_user` uses gives the answers of the `Codable` reader it replaced
    /// there, for good bodies and for every kind of bad one.
    @Test(arguments: [
        #"{"email": "a@b", "name": "Ada"}"#, #"{"name": "Ada", "email": "a@b"}"#, #"{"email": "é@ü", "name": "\u00e9\ud83d\ude00"}"#,
        #"{"email": "a@b"}"#, #"{"email": "a@b", "name": null}"#, #"{"email": "a@b", "name": 7}"#, #"{"email": ["a@b"], "name": "Ada"}"#,
        #"{"email": "a@b", "name": "Ada", "admin": true}"#, #"{"email": "a@b", "name": "Ada", "b": 1, "a": 2}"#,
        "[1, 2]", "{nope", "null", "\"text\"", "", "{}", #"{"email": "a@b", "name": "Ada"} x"#,
    ])
    func theStringFieldReaderAnswersAsTheCodableOne(text: String) {
        let data = Data(text.utf8)
        let codable: String = switch StrictJSON.decode(Strings.self, from: data, allowed: ["email", "name"]) {
        case .value(let body): "value \(body.email) \(body.name)"
        case .problem(let problem): "\(problem.reason): \(problem.detail)"
        }
        let fast: String = switch StrictJSON.strings(["email", "name"], from: data) {
        case .value(let fields): "value \(fields[0]) \(fields[1])"
        case .problem(let problem): "\(problem.reason): \(problem.detail)"
        }
        if text == "null" {
            // The one difference, and the one-pass reader's answer is the truer: the same reason, and
            // "not an object" where JSONDecoder saw a missing field.
            #expect(codable.hasPrefix("invalid-request") && fast == "invalid-request: the body must be a JSON object")
        } else {
            #expect(fast == codable, "\(text)")
        }
    }

    /// Deep nesting within the 64 KiB a body may have is refused, not a crash (both readers limit depth).
    @Test func deepNestingIsRefused() {
        for opening in ["[", "{\"a\":"] {
            let text = String(repeating: opening, count: 60_000 / opening.utf8.count)
            guard case .problem(let problem) = StrictJSON.strings(["email", "name"], from: Data(text.utf8)) else {
                Issue.record("nesting \(opening) was accepted")
                continue
            }
            #expect(problem.reason == "invalid-request")
        }
    }
}
