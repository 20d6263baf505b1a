import CofferCore

/// A `pkcs11:` URI (RFC 7512) naming a key on a token: `pkcs11:token=release;object=signing-2026;type=private`.
///
/// Coffer reads the attributes that find a key (`token`, `serial`, `manufacturer`, `model`, `object`,
/// `id`, `type`) and the query attributes `module-path` and `pin-source`; it refuses `pin-value`
/// (a PIN is never put on a command line or in a file name) and any attribute it does not know, rather
/// than ignore what would narrow the match.
public struct PKCS11URI: Sendable, Hashable, CustomStringConvertible {
    /// The token's label (`token=`).
    public var token: String?
    /// The token's serial number (`serial=`).
    public var serial: String?
    /// The token's manufacturer (`manufacturer=`).
    public var manufacturer: String?
    /// The token's model (`model=`).
    public var model: String?
    /// The key's label (`object=`).
    public var object: String?
    /// The key's id (`id=`, percent-encoded bytes).
    public var id: [UInt8]?
    /// `private`, `public`, `cert`, `secret-key` or `data` (`type=`).
    public var type: String?
    /// The module to load (`?module-path=`).
    public var modulePath: String?
    /// Where the PIN comes from (`?pin-source=file:…`).
    public var pinSource: String?

    /// A URI from its parts.
    public init(token: String? = nil, object: String? = nil, id: [UInt8]? = nil, type: String? = nil, modulePath: String? = nil) {
        self.token = token
        self.object = object
        self.id = id
        self.type = type
        self.modulePath = modulePath
    }

    /// Parses a URI.
    /// - Throws: ``PKCS11Error`` `.malformedURI` naming the attribute at fault.
    public init(_ text: String) throws(PKCS11Error) {
        guard text.lowercased().hasPrefix("pkcs11:") else { throw PKCS11Error(.malformedURI, "a PKCS #11 URI starts with 'pkcs11:'") }
        let body = text.dropFirst("pkcs11:".count)
        let parts = body.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        for attribute in parts[0].split(separator: ";") {
            let (name, value) = try Self.split(attribute)
            switch name {
            case "token": token = try Self.decodeText(value, name)
            case "serial": serial = try Self.decodeText(value, name)
            case "manufacturer": manufacturer = try Self.decodeText(value, name)
            case "model": model = try Self.decodeText(value, name)
            case "object": object = try Self.decodeText(value, name)
            case "id": id = try Self.decode(value, name)
            case "type":
                let kind = try Self.decodeText(value, name)
                guard ["private", "public", "cert", "secret-key", "data"].contains(kind) else {
                    throw PKCS11Error(.malformedURI, "type=\(kind) is not a PKCS #11 object type (private, public, cert, secret-key, data)")
                }
                type = kind
            case "library-manufacturer", "library-description", "library-version", "slot-description", "slot-manufacturer", "slot-id":
                continue
            default:
                throw PKCS11Error(.malformedURI, "the URI attribute '\(name)' is not one Coffer knows; it would be ignored, so the URI is refused")
            }
        }
        if parts.count > 1 {
            for attribute in parts[1].split(separator: "&") {
                let (name, value) = try Self.split(attribute)
                switch name {
                case "module-path": modulePath = try Self.decodeText(value, name)
                case "pin-source": pinSource = try Self.decodeText(value, name)
                case "module-name": continue
                case "pin-value":
                    throw PKCS11Error(.malformedURI, "pin-value puts the PIN in the URI, where command lines and logs show it; use pin-source=file:… or a prompt")
                default:
                    throw PKCS11Error(.malformedURI, "the URI query attribute '\(name)' is not one Coffer knows")
                }
            }
        }
    }

    /// The URI in its canonical text form (RFC 7512 §2.3), attributes in a fixed order.
    public var description: String {
        var path: [String] = []
        if let token { path.append("token=" + Self.encode(Array(token.utf8))) }
        if let manufacturer { path.append("manufacturer=" + Self.encode(Array(manufacturer.utf8))) }
        if let model { path.append("model=" + Self.encode(Array(model.utf8))) }
        if let serial { path.append("serial=" + Self.encode(Array(serial.utf8))) }
        if let object { path.append("object=" + Self.encode(Array(object.utf8))) }
        if let id { path.append("id=" + id.map { "%" + Hex.encode([$0]).uppercased() }.joined()) }
        if let type { path.append("type=" + type) }
        var query: [String] = []
        if let modulePath { query.append("module-path=" + Self.encode(Array(modulePath.utf8))) }
        if let pinSource { query.append("pin-source=" + Self.encode(Array(pinSource.utf8))) }
        return "pkcs11:" + path.joined(separator: ";") + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    private static func split(_ attribute: Substring) throws(PKCS11Error) -> (String, Substring) {
        guard let equals = attribute.firstIndex(of: "=") else { throw PKCS11Error(.malformedURI, "'\(attribute)' has no '='") }
        return (String(attribute[..<equals]).lowercased(), attribute[attribute.index(after: equals)...])
    }

    private static func decodeText(_ value: Substring, _ name: String) throws(PKCS11Error) -> String {
        let bytes = try decode(value, name)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw PKCS11Error(.malformedURI, "\(name)= is not UTF-8 text") }
        return text
    }

    /// Percent-decodes a value (RFC 3986), refusing a stray or truncated `%`.
    private static func decode(_ value: Substring, _ name: String) throws(PKCS11Error) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = value.utf8.startIndex
        let utf8 = value.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                // Two hex digits, read by the one hex decoder Coffer has (either case).
                guard utf8.distance(from: first, to: utf8.endIndex) >= 2,
                    let decoded = try? Hex.decode(String(decoding: utf8[first..<utf8.index(first, offsetBy: 2)], as: UTF8.self))
                else { throw PKCS11Error(.malformedURI, "\(name)= has a '%' that is not followed by two hex digits") }
                bytes += decoded
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return bytes
    }

    /// Percent-encodes all but RFC 7512's unreserved characters and `:`/`@`-free path characters.
    private static func encode(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + Hex.encode([byte]).uppercased()
            }
        }
        return text
    }
}
