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

    /// Calls `body` with each parameter that is set, in serialization order: the names of ``order``
    /// first (each once), then the rest in the default order. Nothing is allocated: the signature base
    /// of every request verified is written through it.
    func forEachEntry<E: Error>(_ body: (String, Value) throws(E) -> Void) throws(E) {
        guard let order, !order.isEmpty else {
            if let created { try body("created", .integer(created)) }
            if let expires { try body("expires", .integer(expires)) }
            if let nonce { try body("nonce", .string(nonce)) }
            if let algorithm { try body("alg", .string(algorithm)) }
            if let keyID { try body("keyid", .string(keyID)) }
            if let tag { try body("tag", .string(tag)) }
            return
        }
        var seen: UInt8 = 0   // bit i: defaultOrder[i] came in `order` (linear in its length, however long)
        for name in order {
            guard let bit = Self.defaultOrder.firstIndex(of: name), seen & (1 << bit) == 0 else { continue }
            seen |= 1 << bit
            if let value = value(named: name) { try body(name, value) }
        }
        for (bit, name) in Self.defaultOrder.enumerated() where seen & (1 << bit) == 0 {
            if let value = value(named: name) { try body(name, value) }
        }
    }

    static let defaultOrder = ["created", "expires", "nonce", "alg", "keyid", "tag"]

    func value(named name: String) -> Value? {
        switch name {
        case "created": created.map { .integer($0) }
        case "expires": expires.map { .integer($0) }
        case "nonce": nonce.map { .string($0) }
        case "alg": algorithm.map { .string($0) }
        case "keyid": keyID.map { .string($0) }
        case "tag": tag.map { .string($0) }
        default: nil
        }
    }

    enum Value {
        case integer(Int64)
        case string(String)
    }
}
