import CofferHTTPSignatures
import HTTPTypes
import Testing

/// Component values (RFC 9421 §2.1–2.4), with the RFC's own examples of each parameter.
@Suite("Covered components")
struct ComponentTests {
    static func value(_ component: HTTPSignatureComponent, in message: HTTPSignedMessage) throws -> String {
        let base = try HTTPSignatureBase.make(for: message, covering: [component], parameters: HTTPSignatureParameters())
        let line = try #require(base.split(separator: "\n", omittingEmptySubsequences: false).first)
        #expect(line.hasPrefix(component.description + ": "))
        return String(line.dropFirst(component.description.count + 2))
    }

    static let request: HTTPRequest = {
        var fields = HTTPFields()
        fields.append(HTTPField(name: HTTPField.Name("Example-Dict")!, value: " a=1,    b=2;x=1;y=2,   c=(a   b   c)"))
        fields.append(HTTPField(name: HTTPField.Name("Example-Header")!, value: "value, with, lots"))
        fields.append(HTTPField(name: HTTPField.Name("Example-Header")!, value: "of, commas"))
        fields.append(HTTPField(name: HTTPField.Name("X-Empty-Header")!, value: ""))
        fields.append(HTTPField(name: HTTPField.Name("X-OWS-Header")!, value: "   Leading and trailing whitespace.   "))
        return HTTPRequest(method: .post, scheme: "HTTPS", authority: "WWW.Example.com:443", path: "/path?param=value&foo=bar&baz=bat%2Dman&q=a+b", headerFields: fields)
    }()

    @Test func derivedComponentsOfARequest() throws {
        func value(_ component: HTTPSignatureComponent) throws -> String { try Self.value(component, in: .request(Self.request)) }
        #expect(try value(.method) == "POST")
        #expect(try value(.authority) == "www.example.com")
        #expect(try value(.scheme) == "https")
        #expect(try value(.targetURI) == "https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman&q=a+b")
        #expect(try value(.requestTarget) == "/path?param=value&foo=bar&baz=bat%2Dman&q=a+b")
        #expect(try value(.path) == "/path")
        #expect(try value(.query) == "?param=value&foo=bar&baz=bat%2Dman&q=a+b")
        #expect(try value(.queryParameter("baz")) == "bat-man")
        #expect(try value(.queryParameter("q")) == "a%20b")
    }

    /// RFC 9421 §2.1 and §2.1.1–2.1.3.
    @Test func fieldsAndTheirParameters() throws {
        func value(_ component: HTTPSignatureComponent) throws -> String { try Self.value(component, in: .request(Self.request)) }
        #expect(try value(.field("X-OWS-Header")) == "Leading and trailing whitespace.")
        #expect(try value(.field("x-empty-header")) == "")
        #expect(try value(.field("example-header")) == "value, with, lots, of, commas")
        #expect(try value(.field("example-dict")) == "a=1,    b=2;x=1;y=2,   c=(a   b   c)")
        #expect(try value(.field("example-dict", structured: true)) == "a=1, b=2;x=1;y=2, c=(a b c)")
        #expect(try value(.field("example-dict", key: "a")) == "1")
        #expect(try value(.field("example-dict", key: "b")) == "2;x=1;y=2")
        #expect(try value(.field("example-dict", key: "c")) == "(a b c)")
        #expect(try value(.field("example-header", byteSequence: true)) == ":dmFsdWUsIHdpdGgsIGxvdHM=:, :b2YsIGNvbW1hcw==:")
        #expect(HTTPSignatureComponent.field("example-dict", key: "a").description == "\"example-dict\";key=\"a\"")
    }

    @Test func responsesAndTheirRequests() throws {
        var response = HTTPResponse(status: .init(code: 503))
        response.headerFields[.contentType] = "application/json"
        let message = HTTPSignedMessage.response(response, request: Self.request)
        #expect(try Self.value(.status, in: message) == "503")
        #expect(try Self.value(HTTPSignatureComponent.method.fromRequest, in: message) == "POST")
        #expect(try Self.value(HTTPSignatureComponent.field("example-dict", key: "a").fromRequest, in: message) == "1")
        #expect(HTTPSignatureComponent.method.fromRequest.description == "\"@method\";req")

        #expect(throws: HTTPSignatureError.missingComponent) {
            try Self.value(HTTPSignatureComponent.method.fromRequest, in: .response(response, request: nil))
        }
        #expect(throws: HTTPSignatureError.invalidComponent) { try Self.value(.method, in: message) }
        #expect(throws: HTTPSignatureError.invalidComponent) { try Self.value(.status, in: .request(Self.request)) }
        #expect(throws: HTTPSignatureError.invalidComponent) { try Self.value(HTTPSignatureComponent.method.fromRequest, in: .request(Self.request)) }
    }

    @Test func missingDuplicateAndIllFormedComponentsAreTypedErrors() throws {
        let request = Self.request
        let parameters = HTTPSignatureParameters(created: 1)
        let cases: [([HTTPSignatureComponent], HTTPSignatureError.Code)] = [
            ([.field("content-digest")], .missingComponent),
            ([.queryParameter("x")], .missingComponent),
            ([.field("example-dict", key: "zz")], .missingComponent),
            ([.method, .method], .duplicateComponent),
            ([.field("example-header", structured: true, byteSequence: true)], .invalidComponent),
            ([.field("x-ows-header", key: "a")], .invalidComponent),
            ([HTTPSignatureComponent(name: "@method", parameters: [.structured])], .invalidComponent),
            ([HTTPSignatureComponent(name: "@unknown")], .invalidComponent),
            ([HTTPSignatureComponent(name: "Example-Header")], .invalidComponent),
            ([HTTPSignatureComponent(name: "example-header", parameters: [.name("x")])], .invalidComponent),
        ]
        for (components, code) in cases {
            #expect(throws: HTTPSignatureError.matching(code), "\(components)") {
                try HTTPSignatureBase.make(for: request, covering: components, parameters: parameters)
            }
        }
    }
}
