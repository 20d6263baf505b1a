import CofferHTTPSignatures
import HTTPTypes
import Testing

@Suite("Raw HTTP/1.1 requests")
struct RawHTTPRequestTests {
    static func parse(_ text: String, limits: RawHTTPRequest.Limits = RawHTTPRequest.Limits()) throws -> (request: HTTPRequest, body: [UInt8]) {
        try RawHTTPRequest.parse(Array(text.utf8), limits: limits)
    }

    @Test func originAndAbsoluteFormWithCRLFOrLF() throws {
        let crlf = try Self.parse("POST /foo?a=1 HTTP/1.1\r\nHost: Example.com\r\nContent-Length: 5\r\nX-A:  one \r\n\r\nhelloTRAILING")
        #expect(crlf.request.method == .post)
        #expect(crlf.request.scheme == "https")
        #expect(crlf.request.authority == "Example.com")
        #expect(crlf.request.path == "/foo?a=1")
        #expect(crlf.request.headerFields[HTTPField.Name("x-a")!] == "one")
        #expect(crlf.body == Array("hello".utf8))

        let absolute = try Self.parse("GET http://api.example:8080/v1 HTTP/1.1\nAccept: */*\n\n")
        #expect(absolute.request.scheme == "http")
        #expect(absolute.request.authority == "api.example:8080")
        #expect(absolute.request.path == "/v1")
        #expect(absolute.body.isEmpty)
    }

    @Test func malformedRequestsAreRefused() throws {
        var small = RawHTTPRequest.Limits()
        small.maximumHeaderBytes = 64
        small.maximumFields = 2
        small.maximumBodyBytes = 4
        let cases: [(String, RawHTTPRequest.Limits)] = [
            ("", RawHTTPRequest.Limits()),
            ("GET / HTTP/1.1\r\nHost: a\r\n", RawHTTPRequest.Limits()),
            ("GET / HTTP/2\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET  / HTTP/1.1\r\n\r\n", RawHTTPRequest.Limits()),
            ("G(T / HTTP/1.1\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET foo HTTP/1.1\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET / HTTP/1.1\r\nBad Name: b\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", RawHTTPRequest.Limits()),
            ("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", RawHTTPRequest.Limits()),
            ("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", RawHTTPRequest.Limits()),
            ("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort", RawHTTPRequest.Limits()),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET / HTTP/1.1\r\nA: \u{0}\r\n\r\n", RawHTTPRequest.Limits()),
            ("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", small),
            ("GET / HTTP/1.1\r\nA: " + String(repeating: "x", count: 80) + "\r\n\r\n", small),
            ("POST / HTTP/1.1\r\n\r\nhello", small),
        ]
        for (text, limits) in cases {
            #expect(throws: HTTPSignatureError.malformedMessage, "\(text.debugDescription)") { try Self.parse(text, limits: limits) }
        }
    }

    /// Every truncation of a signed request either parses (the body is read to the end) or is refused;
    /// none crashes.
    @Test func everyTruncationIsHandled() throws {
        let text = "POST /foo HTTP/1.1\r\nHost: example.com\r\nContent-Length: 18\r\nSignature-Input: sig1=(\"@method\");created=1\r\nSignature: sig1=:AAAA:\r\n\r\n{\"hello\": \"world\"}"
        let bytes = Array(text.utf8)
        for length in 0..<bytes.count {
            #expect(throws: HTTPSignatureError.self) { try RawHTTPRequest.parse(Array(bytes[..<length])) }
        }
        #expect(try RawHTTPRequest.parse(bytes).body.count == 18)
    }
}
