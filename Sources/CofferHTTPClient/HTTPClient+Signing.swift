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
    /// - Parameters:
    ///   - request: method, scheme, authority and path of the request, and any header fields to send.
    ///   - body: the content, or nil for none.
    ///   - signer: the key and the components to sign.
    ///   - timeout: how long the whole exchange may take.
    /// - Throws: `HTTPSignatureError` when the request cannot be signed (a covered component missing);
    ///   AsyncHTTPClient's errors when it cannot be sent.
    public func execute(
        signing request: HTTPRequest, body: [UInt8]? = nil, with signer: HTTPMessageSigner, timeout: TimeAmount = .seconds(30)
    ) async throws -> HTTPClientResponse {
        var request = request
        try signer.sign(&request, body: body)
        return try await execute(Self.clientRequest(request, body: body), timeout: timeout)
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
