public import CofferCrypto

extension HTTPSigningKey {
    /// `init(_:algorithm:)` with a hardware key given bare, as before a `SigningKey` could hold one.
    /// - Throws: ``HTTPSignatureError`` `.unsupportedAlgorithm` for a key `SigningKey(_:)` refuses.
    @available(*, deprecated, message: "wrap the key: SigningKey(key)")
    public init(_ key: some CustomSigningKey, algorithm: HTTPSignatureAlgorithm? = nil) throws(HTTPSignatureError) {
        let wrapped: SigningKey
        do {
            wrapped = try SigningKey(key)
        } catch {
            throw HTTPSignatureError(.unsupportedAlgorithm, error.reason, underlying: error)
        }
        try self.init(wrapped, algorithm: algorithm)
    }
}
