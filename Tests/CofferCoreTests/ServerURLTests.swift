import CofferCore
import Testing

/// One splitter for the URLs and `HOST[:PORT]` names the clients are given.
@Suite("Server URLs")
struct ServerURLTests {
    @Test(arguments: [
        ("https://api.example.com:8443/v1/orders?page=2#top", "https", "api.example.com", 8443, "api.example.com:8443", "/v1/orders?page=2"),
        ("http://127.0.0.1", "http", "127.0.0.1", 80, "127.0.0.1", "/"),
        ("HTTPS://user:secret@Example.com?q=1", "https", "Example.com", 443, "Example.com", "/?q=1"),
        ("https://[::1]:9443/x", "https", "::1", 9443, "[::1]:9443", "/x"),
        ("example.com", "https", "example.com", 443, "example.com", "/"),
        ("10.0.0.1:8443", "https", "10.0.0.1", 8443, "10.0.0.1:8443", "/"),
        ("[2001:db8::1]", "https", "2001:db8::1", 443, "[2001:db8::1]", "/"),
    ])
    func splits(text: String, scheme: String, host: String, port: Int, authority: String, path: String) throws {
        let url = try ServerURL(text)
        #expect(url.scheme == scheme && url.host == host && url.effectivePort == port)
        #expect(url.authority == authority && url.pathAndQuery == path)
    }

    @Test(arguments: [
        "ftp://example.com", "https://", "https://:443", "example.com:0", "example.com:65536", "example.com:https",
        "https://[::1", "https://[::1]x", "https://user@/path",
    ])
    func refuses(text: String) {
        #expect(throws: CofferCoreError.invalidArgument) { _ = try ServerURL(text) }
    }

    @Test func absoluteURLsCanBeRequired() throws {
        #expect(throws: CofferCoreError.invalidArgument) { _ = try ServerURL("example.com/x", defaultScheme: nil) }
        #expect(try ServerURL("http://example.com/x", defaultScheme: nil).description == "http://example.com/x")
    }
}
