import CofferCore

/// A `pkcs11:` URI (RFC 7512) naming a token, or a key on a token:
/// `pkcs11:token=release;serial=d9d99d8799fe0a55;object=signing-2026;type=private`.
///
/// Every attribute RFC 7512 defines is read, and every one that is present narrows the match
/// (``PKCS11Module/slot(matching:)``): the token's `token` (label), `manufacturer`, `model` and
/// `serial`; the slot's `slot-id`, `slot-description` and `slot-manufacturer`; the module's
/// `library-manufacturer`, `library-description` and `library-version`; the key's `object` (label),
/// `id` and `type`; and the query attributes `module-path`, `module-name` and `pin-source`. A URI
/// with an attribute Coffer does not know, an attribute given twice, or a value longer than the
/// PKCS #11 field it names is refused rather than read in part; so is `pin-value` (a PIN is never put
/// on a command line or in a file name).
public struct PKCS11URI: Sendable, Hashable, CustomStringConvertible {
    /// The token's label (`token=`, `CK_TOKEN_INFO.label`).
    public var token: String?
    /// The token's manufacturer (`manufacturer=`).
    public var manufacturer: String?
    /// The token's model (`model=`).
    public var model: String?
    /// The token's serial number (`serial=`).
    public var serial: String?
    /// The slot's id (`slot-id=`, a decimal `CK_SLOT_ID`): valid only while the module stays loaded.
    public var slotID: UInt?
    /// The slot's description (`slot-description=`).
    public var slotDescription: String?
    /// The slot's manufacturer (`slot-manufacturer=`).
    public var slotManufacturer: String?
    /// The module's manufacturer (`library-manufacturer=`).
    public var libraryManufacturer: String?
    /// The module's description (`library-description=`).
    public var libraryDescription: String?
    /// The module's version (`library-version=2` or `=2.6`; a missing minor version is 0).
    public var libraryVersion: PKCS11Version?
    /// The key's label (`object=`).
    public var object: String?
    /// The key's id (`id=`, percent-encoded bytes).
    public var id: [UInt8]?
    /// `private`, `public`, `cert`, `secret-key` or `data` (`type=`).
    public var type: String?
    /// The module to load (`?module-path=`).
    public var modulePath: String?
    /// The module's name without folder, `lib` prefix or suffix (`?module-name=softhsm2`): the module
    /// loaded for the URI must have that name.
    public var moduleName: String?
    /// Where the PIN comes from (`?pin-source=file:…`; see ``pinFile()``).
    public var pinSource: String?

    /// A URI from its parts.
    public init(
        token: String? = nil, manufacturer: String? = nil, model: String? = nil, serial: String? = nil,
        object: String? = nil, id: [UInt8]? = nil, type: String? = nil, modulePath: String? = nil
    ) {
        self.token = token
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.object = object
        self.id = id
        self.type = type
        self.modulePath = modulePath
    }

    /// The URI that names `token` by everything it says of itself that tells tokens apart: its label,
    /// manufacturer, model and serial number.
    public init(identifying token: PKCS11Token) {
        self.init(token: token.label, manufacturer: token.manufacturer, model: token.model, serial: token.serialNumber)
    }

    /// Whether the URI names a key or other object (`object`, `id` or `type`), not only a token.
    public var namesObject: Bool { object != nil || id != nil || type != nil }

    /// The URI without its object and query attributes: what it says of the token, slot and module.
    public var tokenPart: PKCS11URI {
        var part = self
        (part.object, part.id, part.type, part.modulePath, part.moduleName, part.pinSource) = (nil, nil, nil, nil, nil, nil)
        return part
    }

    /// Parses a URI.
    /// - Throws: ``PKCS11Error`` `.malformedURI` naming the attribute at fault: an unknown or repeated
    ///   attribute, a malformed percent-encoding, a value that is not UTF-8 text or is longer than its
    ///   PKCS #11 field, a `slot-id` or `library-version` that is not a number, and `pin-value`.
    public init(_ text: String) throws(PKCS11Error) {
        guard text.lowercased().hasPrefix("pkcs11:") else { throw PKCS11Error(.malformedURI, "a PKCS #11 URI starts with 'pkcs11:'") }
        let body = text.dropFirst("pkcs11:".count)
        let parts = body.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var seen: Set<String> = []
        for attribute in parts[0].split(separator: ";") {
            let (name, value) = try Self.split(attribute, seen: &seen)
            try readPathAttribute(name, value)
        }
        if parts.count > 1 {
            for attribute in parts[1].split(separator: "&") {
                let (name, value) = try Self.split(attribute, seen: &seen)
                try readQueryAttribute(name, value)
            }
        }
    }

    private mutating func readPathAttribute(_ name: String, _ value: Substring) throws(PKCS11Error) {
        switch name {
        case "token": token = try Self.field(value, name, width: 32)
        case "manufacturer": manufacturer = try Self.field(value, name, width: 32)
        case "model": model = try Self.field(value, name, width: 16)
        case "serial": serial = try Self.field(value, name, width: 16)
        case "slot-description": slotDescription = try Self.field(value, name, width: 64)
        case "slot-manufacturer": slotManufacturer = try Self.field(value, name, width: 32)
        case "library-manufacturer": libraryManufacturer = try Self.field(value, name, width: 32)
        case "library-description": libraryDescription = try Self.field(value, name, width: 32)
        case "slot-id":
            let digits = try Self.decodeText(value, name)
            guard let number = Self.decimal(digits) else {
                throw PKCS11Error(.malformedURI, "slot-id= is a slot's number in decimal digits; found '\(digits)'")
            }
            slotID = number
        case "library-version":
            let text = try Self.decodeText(value, name)
            guard let version = Self.version(text) else {
                throw PKCS11Error(.malformedURI, "library-version= is MAJOR or MAJOR.MINOR, each 0 to 255; found '\(text)'")
            }
            libraryVersion = version
        case "object": object = try Self.decodeText(value, name)
        case "id": id = try Self.decode(value, name)
        case "type":
            let kind = try Self.decodeText(value, name)
            guard ["private", "public", "cert", "secret-key", "data"].contains(kind) else {
                throw PKCS11Error(.malformedURI, "type=\(kind) is not a PKCS #11 object type (private, public, cert, secret-key, data)")
            }
            type = kind
        default:
            throw PKCS11Error(.malformedURI, "the URI attribute '\(name)' is not one Coffer knows; it would be ignored, so the URI is refused")
        }
    }

    private mutating func readQueryAttribute(_ name: String, _ value: Substring) throws(PKCS11Error) {
        switch name {
        case "module-path": modulePath = try Self.decodeText(value, name)
        case "module-name": moduleName = try Self.decodeText(value, name)
        case "pin-source": pinSource = try Self.decodeText(value, name)
        case "pin-value":
            throw PKCS11Error(.malformedURI, "pin-value puts the PIN in the URI, where command lines and logs show it; use pin-source=file:… or a prompt")
        default:
            throw PKCS11Error(.malformedURI, "the URI query attribute '\(name)' is not one Coffer knows; it would be ignored, so the URI is refused")
        }
    }

    /// The URI in its canonical text form (RFC 7512 §2.3), attributes in a fixed order.
    public var description: String {
        let path: [(String, [UInt8]?)] = [
            ("token", token.map { Array($0.utf8) }), ("manufacturer", manufacturer.map { Array($0.utf8) }),
            ("model", model.map { Array($0.utf8) }), ("serial", serial.map { Array($0.utf8) }),
            ("slot-description", slotDescription.map { Array($0.utf8) }), ("slot-manufacturer", slotManufacturer.map { Array($0.utf8) }),
            ("slot-id", slotID.map { Array(String($0).utf8) }),
            ("library-manufacturer", libraryManufacturer.map { Array($0.utf8) }), ("library-description", libraryDescription.map { Array($0.utf8) }),
            ("library-version", libraryVersion.map { Array($0.description.utf8) }),
            ("object", object.map { Array($0.utf8) }),
        ]
        var written = path.compactMap { name, value in value.map { name + "=" + Self.encode($0, keeping: []) } }
        if let id { written.append("id=" + id.map { "%" + Hex.encode([$0]).uppercased() }.joined()) }
        if let type { written.append("type=" + type) }
        let query: [(String, String?)] = [("module-name", moduleName), ("module-path", modulePath), ("pin-source", pinSource)]
        let asked = query.compactMap { name, value in value.map { name + "=" + Self.encode(Array($0.utf8), keeping: Self.queryCharacters) } }
        return "pkcs11:" + written.joined(separator: ";") + (asked.isEmpty ? "" : "?" + asked.joined(separator: "&"))
    }

    /// Characters a query value keeps as they are besides the unreserved ones (RFC 7512's
    /// `pk11-query-res-avail`, less `?` and `|`): paths and `file:` URIs stay readable.
    private static let queryCharacters: Set<UInt8> = [UInt8(ascii: "/"), UInt8(ascii: ":")]

    /// An attribute's name (lowercased) and raw value, refusing an attribute given twice.
    private static func split(_ attribute: Substring, seen: inout Set<String>) throws(PKCS11Error) -> (String, Substring) {
        guard let equals = attribute.firstIndex(of: "=") else { throw PKCS11Error(.malformedURI, "'\(attribute)' has no '='") }
        let name = String(attribute[..<equals]).lowercased()
        guard seen.insert(name).inserted else {
            throw PKCS11Error(.malformedURI, "the URI gives '\(name)' twice; RFC 7512 allows each attribute once")
        }
        return (name, attribute[attribute.index(after: equals)...])
    }

    /// A token, slot or module text field's value: it is compared with a blank-padded field of
    /// `width` bytes, so a longer value could never match.
    private static func field(_ value: Substring, _ name: String, width: Int) throws(PKCS11Error) -> String {
        let text = try decodeText(value, name)
        guard text.utf8.count <= width else {
            throw PKCS11Error(.malformedURI, "\(name)= is at most \(width) bytes (the PKCS #11 field's width); found \(text.utf8.count)")
        }
        return text
    }

    /// `MAJOR` or `MAJOR.MINOR` (RFC 7512's `library-version`; a missing minor version is 0).
    private static func version(_ text: String) -> PKCS11Version? {
        let numbers = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map { decimal(String($0)) }
        guard let major = numbers[0], major <= 255 else { return nil }
        guard numbers.count == 2 else { return PKCS11Version(major: UInt8(major), minor: 0) }
        guard let minor = numbers[1], minor <= 255 else { return nil }
        return PKCS11Version(major: UInt8(major), minor: UInt8(minor))
    }

    private static func decimal(_ digits: String) -> UInt? {
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt(digits)
    }

    private static func decodeText(_ value: Substring, _ name: String) throws(PKCS11Error) -> String {
        let bytes = try decode(value, name)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw PKCS11Error(.malformedURI, "\(name)= is not UTF-8 text") }
        // A NUL ends the C string a module path or label becomes: what follows it would be ignored.
        guard !bytes.contains(0) else { throw PKCS11Error(.malformedURI, "\(name)= holds a NUL byte (%00)") }
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

    /// Percent-encodes all but RFC 3986's unreserved characters and `keeping`.
    private static func encode(_ bytes: [UInt8], keeping: Set<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where keeping.contains(byte):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + Hex.encode([byte]).uppercased()
            }
        }
        return text
    }
}
