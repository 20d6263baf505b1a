public import AsyncHTTPClient
public import CofferHTTPSignatures
public import HTTPTypes
public import NIOCore
import NIOHTTP1

extension HTTPClient {
    /// Signs a request (RFC 9421, with a `Content-Digest` of `body`) and sends it.
    ///
    /// ```swift
    /// let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: keyID)
    /// let request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register_user")
    /// let response = try await HTTPClient.shared.execute(signing: request, body: json, with: signer, timeout: .seconds(30))
    /// ```
    ///
    /// A signed request stays where it was sent: **no redirect is followed**, to another origin or the
    /// same one; a 3xx response is returned as it came, its `Location` for the caller to judge (a
    /// request to it is signed afresh, for its own target). A client that follows redirects —
    /// `HTTPClient.shared`, or any made with AsyncHTTPClient's default configuration — would carry the
    /// `Signature`, `Signature-Input` and `Content-Digest` fields (with a nonce the real server has not
    /// seen yet) and the body to whatever origin the server names, which could replay them to the real
    /// server within the signature's window. So such a client sends signed requests through a twin of
    /// its configuration (the same TLS, proxy, connection hooks such as pinning, and timeouts) with
    /// redirects turned off, kept while the client lives; a client that does not follow redirects (a
    /// pinned one from CofferPinning) sends them itself.
    ///
    /// - Parameters:
    ///   - request: method, scheme, authority and path of the request, and any header fields to send.
    ///   - body: the content, or nil for none.
    ///   - signer: the key and the components to sign.
    ///   - timeout: how long the whole exchange may take.
    /// - Returns: the response, a 3xx one included.
    /// - Throws: `HTTPSignatureError` when the request cannot be signed (a covered component missing);
    ///   ``ServerClientError`` `.unsupportedClient` when this AsyncHTTPClient's configuration cannot be
    ///   read (nothing is sent); AsyncHTTPClient's errors when it cannot be sent.
    public func execute(
        signing request: HTTPRequest, body: [UInt8]? = nil, with signer: HTTPMessageSigner, timeout: TimeAmount = .seconds(30)
    ) async throws -> HTTPClientResponse {
        var request = request
        try signer.sign(&request, body: body)
        let client = try SignedRequestClients.shared.client(sending: self)
        return try await client.execute(Self.clientRequest(request, body: body), timeout: timeout)
    }

    /// The AsyncHTTPClient form of a request: URL from scheme, authority and path; fields as they are
    /// (but `Host`, which the client writes from the URL).
    /// - Throws: `HTTPSignatureError` `.missingComponent` without a scheme or authority.
    public static func clientRequest(_ request: HTTPRequest, body: [UInt8]?) throws -> HTTPClientRequest {
        guard let scheme = request.scheme, let authority = request.authority else {
            throw HTTPSignatureError(.missingComponent, "a request to send needs a scheme and an authority")
        }
        var clientRequest = HTTPClientRequest(url: "\(scheme)://\(authority)\(request.path ?? "/")")
        clientRequest.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields where field.name.canonicalName != "host" {
            clientRequest.headers.add(name: field.name.rawName, value: field.value)
        }
        if let body { clientRequest.body = .bytes(ByteBuffer(bytes: body)) }
        return clientRequest
    }
}
