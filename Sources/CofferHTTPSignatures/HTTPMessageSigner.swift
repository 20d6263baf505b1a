import CofferCore
import CofferCrypto
import Foundation
public import HTTPTypes

/// Signs requests (and responses) the way a server's ``HTTPSignaturePolicy`` expects: a fresh
/// `created`, a random `nonce`, the key's `alg` and `keyid`, and a `Content-Digest` of the body that the
/// signature covers.
///
/// ```swift
/// let signer = HTTPMessageSigner(key: try HTTPSigningKey(ed25519Key), keyID: "app-42")
/// var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register_user")
/// try signer.sign(&request, body: body)
/// // request now has Content-Digest, Signature-Input and Signature
/// ```
public struct HTTPMessageSigner: Sendable {
    /// The key and its algorithm.
    public var key: HTTPSigningKey
    /// The `keyid` parameter: how the verifier finds the key.
    public var keyID: String
    /// The label of the signature in `Signature-Input`/`Signature`.
    public var label: String = "sig1"
    /// What the signature covers; nil for the default: `@method`, `@target-uri`, and when there is a body
    /// `content-digest` (and `content-type` when the request has one).
    public var components: [HTTPSignatureComponent]?
    /// The `tag` parameter: which application or protocol the signature is for.
    public var tag: String?
    /// How long the signature stays valid (`expires` = `created` + lifetime), in seconds; nil for none.
    public var lifetime: Int64?
    /// Whether to add a random 128-bit `nonce` (on by default).
    public var includesNonce = true
    /// Whether to add the `alg` parameter (on by default; verifiers bind the algorithm to the key anyway).
    public var includesAlgorithm = true
    /// The digests written into `Content-Digest`.
    public var digestAlgorithms: [ContentDigestAlgorithm] = [.sha256]

    /// A signer with the defaults above.
    public init(key: HTTPSigningKey, keyID: String) {
        self.key = key
        self.keyID = keyID
    }

    /// Signs a request: sets `Content-Digest` when there is a body, then adds this signature to the
    /// request's `Signature-Input` and `Signature` fields (other signatures stay).
    ///
    /// - Parameters:
    ///   - request: the request to sign, changed in place.
    ///   - body: the exact bytes that will be sent, or nil for a request without content.
    ///   - now: the signing time, UNIX seconds (the current time by default).
    /// - Returns: the signature added.
    /// - Throws: ``HTTPSignatureError`` when a covered component is missing, or the label is taken.
    @discardableResult
    public func sign(_ request: inout HTTPRequest, body: [UInt8]? = nil, now: Int64? = nil) throws(HTTPSignatureError) -> HTTPMessageSignature {
        if let body { request.headerFields[.contentDigest] = ContentDigest.fieldValue(for: body, algorithms: digestAlgorithms) }
        return try sign(&request, contentDigest: nil, now: now)
    }

    /// Signs a request whose body was hashed elsewhere (a stream: see ``ContentDigest/Hasher``):
    /// `contentDigest`, when given, becomes the `Content-Digest` field.
    @discardableResult
    public func sign(_ request: inout HTTPRequest, contentDigest: String?, now: Int64? = nil) throws(HTTPSignatureError) -> HTTPMessageSignature {
        if let contentDigest { request.headerFields[.contentDigest] = contentDigest }
        let covered = components ?? defaultComponents(for: request.headerFields)
        let (signature, signatureParams) = try makeSignature(for: .request(request), covering: covered, now: now)
        try attach(signature, signatureParams: signatureParams, to: &request.headerFields)
        return signature
    }

    /// Signs a response; `request` supplies the components marked `req`.
    @discardableResult
    public func sign(_ response: inout HTTPResponse, answering request: HTTPRequest? = nil, body: [UInt8]? = nil, now: Int64? = nil) throws(HTTPSignatureError) -> HTTPMessageSignature {
        if let body { response.headerFields[.contentDigest] = ContentDigest.fieldValue(for: body, algorithms: digestAlgorithms) }
        var covered = components ?? [.status]
        if components == nil && response.headerFields[.contentDigest] != nil { covered.append(.contentDigest) }
        let (signature, signatureParams) = try makeSignature(for: .response(response, request: request), covering: covered, now: now)
        try attach(signature, signatureParams: signatureParams, to: &response.headerFields)
        return signature
    }

    func defaultComponents(for fields: HTTPFields) -> [HTTPSignatureComponent] {
        guard fields[.contentDigest] != nil else { return Self.withoutBody }
        return fields[.contentType] != nil ? Self.withTypedBody : Self.withBody
    }

    static let withoutBody: [HTTPSignatureComponent] = [.method, .targetURI]
    static let withBody = withoutBody + [.contentDigest]
    static let withTypedBody = withBody + [.field("content-type")]

    /// The signature, and its serialized `@signature-params` (the member value of `Signature-Input`).
    func makeSignature(for message: HTTPSignedMessage, covering covered: [HTTPSignatureComponent], now: Int64?) throws(HTTPSignatureError) -> (HTTPMessageSignature, String) {
        let created = now ?? Int64(Date().timeIntervalSince1970)
        var parameters = HTTPSignatureParameters(created: created, keyID: keyID, tag: tag)
        if let lifetime { parameters.expires = created + lifetime }
        if includesNonce {
            var nonce = [UInt8](repeating: 0, count: 16)
            nonce.withUnsafeMutableBytes { SecureRandom.fill($0) }
            parameters.nonce = Base64.encodeURLSafe(nonce)
        }
        if includesAlgorithm { parameters.algorithm = key.algorithm.rawValue }
        let signatureParams = try HTTPSignatureBase.signatureParamsBytes(covered, parameters)
        let base = try HTTPSignatureBase.bytes(for: message, covering: covered, signatureParams: signatureParams)
        let signature = HTTPMessageSignature(label: label, components: covered, parameters: parameters, signature: try key.signature(forBase: base))
        return (signature, String(decoding: signatureParams, as: UTF8.self))
    }

    /// Writes the signature into `Signature-Input` and `Signature`. A message without signatures gets
    /// the two one-member dictionaries directly; one that has some goes through the structured-field
    /// parser and serializer so that the others are kept.
    func attach(_ signature: HTTPMessageSignature, signatureParams: String, to fields: inout HTTPFields) throws(HTTPSignatureError) {
        if fields[.signatureInput] == nil && fields[.signature] == nil && HTTPSignatureFields.isValidLabel(signature.label) {
            fields[.signatureInput] = signature.label + "=" + signatureParams
            fields[.signature] = signature.label + "=:" + Base64.encode(signature.signature) + ":"
            return
        }
        let (input, value) = try HTTPSignatureFields.adding(signature, to: fields)
        fields[.signatureInput] = input
        fields[.signature] = value
    }
}
