import HTTPTypes
import Testing
@testable import CofferHTTPSignatures

/// The signature base's direct writer (`HTTPSignatureBase.appendPlainLine`) against the general one
/// (`values(of:in:)`): for every component without parameters, on requests whose scheme, authority and
/// fields take each branch, the direct writer writes exactly the general one's line or leaves the base
/// as it was, and it does take the usual components.
@Suite("Signature base lines written directly")
struct PlainLineTests {
    static let names = [
        "@method", "@authority", "@scheme", "@target-uri", "@request-target", "@path", "@query", "@status",
        "@query-param", "@nonsense", "content-type", "x-multi", "x-spaced", "x-empty", "absent", "Content-Type", "bad name", "",
    ]

    static var requests: [HTTPRequest] {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields.append(HTTPField(name: HTTPField.Name("X-Multi")!, value: " a "))
        fields.append(HTTPField(name: HTTPField.Name("x-multi")!, value: "\tb, c"))
        fields.append(HTTPField(name: HTTPField.Name("X-Spaced")!, value: " \t value with spaces \t"))
        fields.append(HTTPField(name: HTTPField.Name("x-empty")!, value: ""))
        // HTTPField(name:value:) trims; a lenient value keeps its surrounding whitespace.
        fields.append(HTTPField(name: HTTPField.Name("x-spaced")!, lenientValue: Array(" \t kept \t".utf8)))
        let shapes: [(String?, String?, String?)] = [
            ("https", "example.com", "/a?b=c"),
            ("https", "example.com:443", "/"),
            ("http", "example.com:80", "/x"),
            ("http", "example.com:443", "/x"),
            ("https", "example.com:80", "/x"),
            ("http", "example.com:8080", "/p?q"),
            ("HTTPS", "Example.COM:443", "/Up?Q=1"),
            ("https", "EXAMPLE.com", "/"),
            ("hTTp", "example.com:80", "/"),
            ("https", "exämple.com", "/ü"),
            ("https", ":443", "/"),
            ("https", "", "/"),
            ("https", nil, "/"),
            (nil, "example.com", "/"),
            (nil, "example.com:443", "*"),
        ]
        return shapes.map { scheme, authority, path in
            var request = HTTPRequest(method: .post, scheme: scheme, authority: authority, path: path)
            request.headerFields = fields
            return request
        } + [HTTPRequest(method: .connect, scheme: nil, authority: "example.com:443", path: nil, headerFields: fields)]
    }

    /// The line the general writer makes for `component`, nil where it refuses.
    static func generalLines(_ component: HTTPSignatureComponent, _ request: HTTPRequest) -> [UInt8]? {
        guard let values = try? HTTPSignatureBase.values(of: component, in: .request(request)) else { return nil }
        var lines: [UInt8] = []
        for value in values {
            component.appendIdentifier(to: &lines)
            lines += Array(": \(value)\n".utf8)
        }
        return lines
    }

    @Test func theDirectWriterWritesTheGeneralLineOrNothing() {
        var taken: Set<String> = []
        for request in Self.requests {
            for name in Self.names {
                let component = HTTPSignatureComponent(name: name)
                let prefix = Array("\"earlier\": line\n".utf8)
                var base = prefix
                if HTTPSignatureBase.appendPlainLine(of: component, in: request, to: &base) {
                    taken.insert(name)
                    let general = Self.generalLines(component, request)
                    #expect(general != nil, "\(name) of \(request): written directly but refused by the general writer")
                    #expect(Array(base.dropFirst(prefix.count)) == general, "\(name) of \(request)")
                } else {
                    #expect(base == prefix, "\(name) of \(request): declined but changed the base")
                }
            }
        }
        // The usual components are the reason the direct writer exists: it must take them.
        for name in ["@method", "@authority", "@scheme", "@target-uri", "@request-target", "content-type", "x-multi", "x-spaced", "x-empty"] {
            #expect(taken.contains(name), "\(name) was never written directly")
        }
        for name in ["@path", "@query", "@status", "@query-param", "@nonsense", "absent", "Content-Type", "bad name", ""] {
            #expect(!taken.contains(name), "\(name) is left to the general writer")
        }
    }

    @Test func aSignedRequestsBaseIsTheSameWhicheverWriterTakesEachLine() throws {
        for request in Self.requests {
            let components = Self.names.map { HTTPSignatureComponent(name: $0) }.filter { Self.generalLines($0, request) != nil }
            let expected = components.reduce(into: [UInt8]()) { $0 += Self.generalLines($1, request) ?? [] }
            let parameters = HTTPSignatureParameters(created: 1_700_000_000, keyID: "k")
            let params = try HTTPSignatureBase.signatureParamsBytes(components, parameters)
            let base = try HTTPSignatureBase.bytes(for: .request(request), covering: components, signatureParams: params)
            #expect(base == expected + Array(#""@signature-params": "#.utf8) + params)
        }
    }
}

/// `HTTPFields.combinedLines(of:)`, which the verifier and the server read fields through, gives what
/// swift-http-types' own subscript gives for every field but `Cookie`: absent, one line, several lines
/// (in any case of name, among other fields), empty lines.
@Suite("Field lines combined")
struct CombinedLinesTests {
    @Test func combinedLinesAreWhatTheSubscriptGives() throws {
        let digest = HTTPField.Name.contentDigest, other = try #require(HTTPField.Name("X-Other"))
        let shapes: [[HTTPField]] = [
            [],
            [HTTPField(name: other, value: "x")],
            [HTTPField(name: digest, value: "sha-256=:AA==:")],
            [HTTPField(name: other, value: "x"), HTTPField(name: digest, value: "sha-256=:AA==:"), HTTPField(name: other, value: "y")],
            [HTTPField(name: digest, value: "a"), HTTPField(name: other, value: "x"), HTTPField(name: try #require(HTTPField.Name("content-DIGEST")), value: "b"),
             HTTPField(name: digest, value: "")],
            [HTTPField(name: digest, value: "")],
        ]
        for shape in shapes {
            let fields = HTTPFields(shape)
            #expect(fields.combinedLines(of: digest) == fields[digest], "\(shape)")
            #expect(fields.combinedLines(of: other) == fields[other], "\(shape)")
        }
    }
}
