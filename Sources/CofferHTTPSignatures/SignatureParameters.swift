/// The metadata of one signature (RFC 9421 §2.3): when it was made, until when it holds, a nonce, the
/// algorithm, the key and an application tag. Only the parameters set are serialized, in this order:
/// `created`, `expires`, `nonce`, `alg`, `keyid`, `tag` — unless ``order`` says otherwise.
public struct HTTPSignatureParameters: Hashable, Sendable {
    /// `created`: UNIX time in seconds.
    public var created: Int64?
    /// `expires`: UNIX time in seconds.
    public var expires: Int64?
    /// `nonce`: a value used once, for replay protection.
    public var nonce: String?
    /// `alg`: the algorithm name (`ed25519`, `ecdsa-p256-sha256`…).
    public var algorithm: String?
    /// `keyid`: which key made the signature.
    public var keyID: String?
    /// `tag`: the application the signature is meant for.
    public var tag: String?
    /// The order of the parameters as they were received (names), so that a signature base rebuilt
    /// from a `Signature-Input` field matches the signer's byte for byte; nil for the default order.
    public var order: [String]?

    /// Parameters; set the fields you need.
    public init(created: Int64? = nil, expires: Int64? = nil, nonce: String? = nil, algorithm: String? = nil, keyID: String? = nil, tag: String? = nil) {
        self.created = created
        self.expires = expires
        self.nonce = nonce
        self.algorithm = algorithm
        self.keyID = keyID
        self.tag = tag
    }

    /// The parameters that are set, in serialization order.
    var entries: [(String, Value)] {
        var all: [String: Value] = [:]
        if let created { all["created"] = .integer(created) }
        if let expires { all["expires"] = .integer(expires) }
        if let nonce { all["nonce"] = .string(nonce) }
        if let algorithm { all["alg"] = .string(algorithm) }
        if let keyID { all["keyid"] = .string(keyID) }
        if let tag { all["tag"] = .string(tag) }
        let names = (order ?? []) + ["created", "expires", "nonce", "alg", "keyid", "tag"]
        var seen: Set<String> = []
        return names.compactMap { name in
            guard seen.insert(name).inserted, let value = all[name] else { return nil }
            return (name, value)
        }
    }

    enum Value {
        case integer(Int64)
        case string(String)
    }
}
