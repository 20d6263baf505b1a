public import AsyncHTTPClient
public import CofferCrypto
public import CofferHTTPSignatures
public import NIOCore

extension DeviceClient {
    /// `init(server:key:algorithm:client:timeout:)` with a hardware key given bare, as before a
    /// `SigningKey` could hold one.
    @available(*, deprecated, message: "wrap the key: SigningKey(key)")
    public init(
        server: String, key: some CustomSigningKey, algorithm: HTTPSignatureAlgorithm? = nil, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30)
    ) throws {
        try self.init(server: server, key: SigningKey(key), algorithm: algorithm, client: client, timeout: timeout)
    }
}

extension AdminClient {
    /// `init(server:key:client:timeout:)` with a hardware key given bare, as before a `SigningKey`
    /// could hold one.
    @available(*, deprecated, message: "wrap the key: SigningKey(key)")
    public init(server: String, key: some CustomSigningKey, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30)) throws {
        try self.init(server: server, key: SigningKey(key), client: client, timeout: timeout)
    }
}
