public import CofferCrypto
public import CofferHTTPSignatures
public import HTTPTypes

/// A client key and the server-side view of it, for testing a server that verifies RFC 9421 signed
/// requests: sign requests with ``signed(_:body:)`` and give the server ``keys``.
///
/// ```swift
/// let client = try TestRequestSigner()
/// let verifier = HTTPMessageVerifier(keys: client.keys)          // the server under test
/// let request = try client.signed(HTTPRequest(method: .post, scheme: "https", authority: "api.test", path: "/orders"),
///                                 body: Array(#"{"item": 1}"#.utf8))
/// ```
public struct TestRequestSigner: Sendable {
    /// The key id requests are signed under.
    public let keyID: String
    /// The signer (its components, lifetime and label may be changed).
    public var signer: HTTPMessageSigner
    /// What the server looks the key id up to.
    public let verificationKey: HTTPVerificationKey

    /// A fresh asymmetric key of `type` (Ed25519 by default; RSA keys sign with `rsa-pss-sha512`).
    public init(keyType: KeyAlgorithm = .ed25519, keyID: String = "test-key") throws {
        let key = try SigningKey.generate(keyType)
        let algorithm: HTTPSignatureAlgorithm? = if case .rsa = key.algorithm { .rsaPSSSHA512 } else { nil }
        let signingKey = try HTTPSigningKey(key, algorithm: algorithm)
        self.keyID = keyID
        signer = HTTPMessageSigner(key: signingKey, keyID: keyID)
        verificationKey = signingKey.verificationKey
    }

    /// A fresh HMAC-SHA256 shared secret (`hmac-sha256`).
    public static func sharedSecret(keyID: String = "test-secret") throws -> TestRequestSigner {
        try TestRequestSigner(secret: MACKey.generate(byteCount: 32), keyID: keyID)
    }

    private init(secret: MACKey, keyID: String) {
        let signingKey = HTTPSigningKey.hmacSHA256(secret: secret)
        self.keyID = keyID
        signer = HTTPMessageSigner(key: signingKey, keyID: keyID)
        verificationKey = signingKey.verificationKey
    }

    /// The key store a server under test verifies with: this one key under ``keyID``.
    public var keys: HTTPStaticKeys { HTTPStaticKeys([keyID: verificationKey]) }

    /// `request` signed (with a `Content-Digest` of `body` when there is one), ready to send.
    /// - Throws: `HTTPSignatureError` when a covered component is missing from the request.
    public func signed(_ request: HTTPRequest, body: [UInt8]? = nil) throws(HTTPSignatureError) -> HTTPRequest {
        var request = request
        _ = try signer.sign(&request, body: body)
        return request
    }
}
