@testable import CofferServer
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
}
