import CofferCore
import Foundation

/// An item's attributes as JSON (never its secret), the schema `coffer keychain list --json` prints:
///
/// - `class` and `accessibility` by their kebab-case names (``ItemClass/description``,
///   ``Accessibility/description``);
/// - text attributes under their property names (`service`, `account`, `server`, `protocol`, `path`,
///   `keyClass`, `keyType`, `label`, `comment`, `accessGroup`), numbers as numbers (`port`,
///   `keySizeInBits`), binary attributes in base64 (`applicationTag`, `applicationLabel`, `issuer`,
///   `serialNumber`); absent attributes are left out; an application tag that is text
///   (``KeychainItem/applicationTagText``) is also given as that text, under `applicationTagText`, which
///   decoding ignores (the base64 form is the one it reads);
/// - the store's dates as ISO 8601 UTC strings to the second (`created`, `modified`), and its flags
///   `applicationPassword` and `userPresence` always; `synchronizable` only when true.
///
/// Decoding reads the same schema, so what one program lists another can query. It does not validate
/// the attributes as an add does; the keychain does that when the item is used.
extension KeychainItem: Codable {
    enum CodingKeys: String, CodingKey {
        case itemClass = "class", accessibility, service, account, server, `protocol`, port, path
        case applicationTag, applicationTagText, applicationLabel, keyClass, keyType, keySizeInBits, issuer, serialNumber
        case label, comment, accessGroup, synchronizable
        case creationDate = "created", modificationDate = "modified"
        case hasApplicationPassword = "applicationPassword", requiresUserPresence = "userPresence"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(itemClass.description, forKey: .itemClass)
        try container.encode(accessibility.description, forKey: .accessibility)
        try container.encodeIfPresent(service, forKey: .service)
        try container.encodeIfPresent(account, forKey: .account)
        try container.encodeIfPresent(server, forKey: .server)
        try container.encodeIfPresent(`protocol`, forKey: .protocol)
        try container.encodeIfPresent(port, forKey: .port)
        try container.encodeIfPresent(path, forKey: .path)
        try container.encodeIfPresent(applicationTag.map { Base64.encode($0) }, forKey: .applicationTag)
        try container.encodeIfPresent(applicationTagText, forKey: .applicationTagText)
        try container.encodeIfPresent(applicationLabel.map { Base64.encode($0) }, forKey: .applicationLabel)
        try container.encodeIfPresent(keyClass?.rawValue, forKey: .keyClass)
        try container.encodeIfPresent(keyType, forKey: .keyType)
        try container.encodeIfPresent(keySizeInBits, forKey: .keySizeInBits)
        try container.encodeIfPresent(issuer.map { Base64.encode($0) }, forKey: .issuer)
        try container.encodeIfPresent(serialNumber.map { Base64.encode($0) }, forKey: .serialNumber)
        try container.encodeIfPresent(label, forKey: .label)
        try container.encodeIfPresent(comment, forKey: .comment)
        try container.encodeIfPresent(accessGroup, forKey: .accessGroup)
        if synchronizable { try container.encode(true, forKey: .synchronizable) }
        try container.encodeIfPresent(creationDate.map(Self.timestamp), forKey: .creationDate)
        try container.encodeIfPresent(modificationDate.map(Self.timestamp), forKey: .modificationDate)
        try container.encode(hasApplicationPassword, forKey: .hasApplicationPassword)
        try container.encode(requiresUserPresence, forKey: .requiresUserPresence)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func named<Value: LosslessStringConvertible>(_ key: CodingKeys, as type: Value.Type) throws -> Value {
            let text = try container.decode(String.self, forKey: key)
            guard let value = Value(text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "'\(text)' is not a known \(key.stringValue)")
            }
            return value
        }
        func bytes(_ key: CodingKeys) throws -> [UInt8]? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            do { return try Base64.decode(text) } catch {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "expected base64")
            }
        }
        func date(_ key: CodingKeys) throws -> Date? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "expected an ISO 8601 date such as 2026-01-31T12:00:00Z")
            }
            return date
        }
        self.init(itemClass: try named(.itemClass, as: ItemClass.self), accessibility: try named(.accessibility, as: Accessibility.self))
        service = try container.decodeIfPresent(String.self, forKey: .service)
        account = try container.decodeIfPresent(String.self, forKey: .account)
        server = try container.decodeIfPresent(String.self, forKey: .server)
        `protocol` = try container.decodeIfPresent(String.self, forKey: .protocol)
        port = try container.decodeIfPresent(Int.self, forKey: .port)
        path = try container.decodeIfPresent(String.self, forKey: .path)
        applicationTag = try bytes(.applicationTag)
        applicationLabel = try bytes(.applicationLabel)
        if let text = try container.decodeIfPresent(String.self, forKey: .keyClass) {
            guard let value = KeyClass(rawValue: text) else {
                throw DecodingError.dataCorruptedError(forKey: .keyClass, in: container, debugDescription: "'\(text)' is not public, private or symmetric")
            }
            keyClass = value
        }
        keyType = try container.decodeIfPresent(String.self, forKey: .keyType)
        keySizeInBits = try container.decodeIfPresent(Int.self, forKey: .keySizeInBits)
        issuer = try bytes(.issuer)
        serialNumber = try bytes(.serialNumber)
        label = try container.decodeIfPresent(String.self, forKey: .label)
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
        accessGroup = try container.decodeIfPresent(String.self, forKey: .accessGroup)
        synchronizable = try container.decodeIfPresent(Bool.self, forKey: .synchronizable) ?? false
        creationDate = try date(.creationDate)
        modificationDate = try date(.modificationDate)
        hasApplicationPassword = try container.decodeIfPresent(Bool.self, forKey: .hasApplicationPassword) ?? false
        requiresUserPresence = try container.decodeIfPresent(Bool.self, forKey: .requiresUserPresence) ?? false
    }

    /// `2026-11-23T17:09:55Z`: ISO 8601 in UTC, to the second.
    static func timestamp(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }
}

extension KeychainItem {
    /// The application tag as text, when its bytes are UTF-8 that prints as it reads: no control,
    /// format, private-use or unassigned characters and no space at either end (a reverse-DNS name such
    /// as `com.example.release`, as apps usually choose). Nil when there is no tag or it is binary; the
    /// bytes themselves are always ``applicationTag``.
    public var applicationTagText: String? {
        guard let tag = applicationTag, !tag.isEmpty, let text = String(bytes: tag, encoding: .utf8) else { return nil }
        let printable = text.unicodeScalars.allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .privateUse, .surrogate, .unassigned, .lineSeparator, .paragraphSeparator: false
            default: true
            }
        }
        guard printable, text.trimmingCharacters(in: .whitespaces) == text else { return nil }
        return text
    }
}
