package import Foundation

/// Coffer's items, queries and changes as Keychain Services attribute dictionaries, and back: plain
/// Swift over the documented `kSec…` keys and values (their string values in the Security framework,
/// such as `kSecAttrService` = `"svce"`), so that it compiles and is tested on every platform. Only the
/// `SecItem…` calls themselves are Apple-only (`SystemKeychain`).
package enum SecItemMapping {
    /// An attribute value, as Keychain Services holds it (`CFString`, `CFData`, `CFNumber`,
    /// `CFBoolean`, `CFDate`).
    package enum Value: Hashable, Sendable {
        case string(String)
        case data([UInt8])
        case integer(Int)
        case bool(Bool)
        case date(Date)
    }

    /// The `kSec…` keys Coffer uses, by their values.
    package enum Key {
        package static let itemClass = "class"              // kSecClass
        package static let service = "svce"                 // kSecAttrService
        package static let account = "acct"                 // kSecAttrAccount
        package static let server = "srvr"                  // kSecAttrServer
        package static let `protocol` = "ptcl"              // kSecAttrProtocol
        package static let port = "port"                    // kSecAttrPort
        package static let path = "path"                    // kSecAttrPath
        package static let applicationTag = "atag"          // kSecAttrApplicationTag
        package static let applicationLabel = "klbl"        // kSecAttrApplicationLabel
        package static let keyClass = "kcls"                // kSecAttrKeyClass
        package static let keyType = "type"                 // kSecAttrKeyType
        package static let keySizeInBits = "bsiz"           // kSecAttrKeySizeInBits
        package static let issuer = "issr"                  // kSecAttrIssuer
        package static let serialNumber = "slnr"            // kSecAttrSerialNumber
        package static let label = "labl"                   // kSecAttrLabel
        package static let comment = "icmt"                 // kSecAttrComment
        package static let accessGroup = "agrp"             // kSecAttrAccessGroup
        package static let synchronizable = "sync"          // kSecAttrSynchronizable
        package static let accessible = "pdmn"              // kSecAttrAccessible
        package static let accessControl = "accc"           // kSecAttrAccessControl
        package static let creationDate = "cdat"            // kSecAttrCreationDate
        package static let modificationDate = "mdat"        // kSecAttrModificationDate
        package static let useDataProtectionKeychain = "nleg"  // kSecUseDataProtectionKeychain
        package static let valueData = "v_Data"             // kSecValueData
        package static let matchLimit = "m_Limit"           // kSecMatchLimit
        package static let returnAttributes = "r_Attributes"  // kSecReturnAttributes
        package static let returnData = "r_Data"            // kSecReturnData
        package static let returnPersistentReference = "r_PersistentRef"  // kSecReturnPersistentRef
    }

    /// `kSecAttrSynchronizableAny`: a query that matches synchronizable and local items alike.
    package static let synchronizableAny = "syna"
    /// `kSecMatchLimitOne`, `kSecMatchLimitAll`.
    package static let matchLimitOne = "m_LimitOne", matchLimitAll = "m_LimitAll"

    /// `kSecClassGenericPassword`…
    package static func classValue(_ itemClass: ItemClass) -> String {
        switch itemClass {
        case .genericPassword: "genp"
        case .internetPassword: "inet"
        case .key: "keys"
        case .certificate: "cert"
        }
    }

    /// `kSecAttrAccessibleWhenUnlocked`…
    package static func accessibleValue(_ accessibility: Accessibility) -> String {
        switch accessibility {
        case .whenUnlocked: "ak"
        case .afterFirstUnlock: "ck"
        case .whenUnlockedThisDeviceOnly: "aku"
        case .afterFirstUnlockThisDeviceOnly: "cku"
        }
    }

    /// `kSecAttrKeyClassPublic` (`"0"`), `…Private` (`"1"`), `…Symmetric` (`"2"`).
    package static func keyClassValue(_ keyClass: KeyClass) -> String {
        switch keyClass {
        case .publicKey: "0"
        case .privateKey: "1"
        case .symmetric: "2"
        }
    }

    /// Coffer's key types that Keychain Services has a constant for: `kSecAttrKeyTypeRSA` (`"42"`) and
    /// `kSecAttrKeyTypeECSECPrimeRandom` (`"73"`, every curve); nil for the others.
    package static func keyTypeValue(_ keyType: String) -> String? {
        switch keyType {
        case "rsa": "42"
        case "ec-p256", "ec-p384", "ec-p521": "73"
        default: nil
        }
    }

    /// `kSecAttrProtocolHTTPS` (`"htps"`)… by Coffer's lowercase protocol names.
    package static let protocols: [(name: String, value: String)] = [
        ("http", "http"), ("https", "htps"), ("ftp", "ftp "), ("ftps", "ftps"), ("ssh", "ssh "), ("smtp", "smtp"),
        ("imap", "imap"), ("imaps", "imps"), ("pop3", "pop3"), ("pop3s", "pops"), ("ldap", "ldap"), ("ldaps", "ldps"),
        ("telnet", "teln"), ("smb", "smb "), ("afp", "afp "), ("irc", "irc "), ("ircs", "ircs"), ("nntp", "nntp"),
        ("rtsp", "rtsp"), ("socks", "sox "),
    ]

    /// The attributes of a query for `query`, plus, when adding, the descriptive attributes and the
    /// accessibility of `item`. Every dictionary asks for the data-protection keychain.
    /// - Throws: ``KeychainError`` `.badParameter` for a protocol or key type Keychain Services has no
    ///   constant for.
    package static func attributes(for query: KeychainQuery, adding item: KeychainItem?, accessGroup: String?) throws(KeychainError) -> [String: Value] {
        var attributes: [String: Value] = [Key.itemClass: .string(classValue(query.itemClass)), Key.useDataProtectionKeychain: .bool(true)]
        func set(_ key: String, _ value: Value?) {
            if let value { attributes[key] = value }
        }
        set(Key.service, query.service.map(Value.string))
        set(Key.account, query.account.map(Value.string))
        set(Key.server, query.server.map(Value.string))
        if let name = query.protocol {
            guard let value = protocols.first(where: { $0.name == name.lowercased() })?.value else {
                throw KeychainError(.badParameter, "Keychain Services has no protocol named '\(name)'; use http, https, ftp, ssh, smtp, imap, ldap…")
            }
            attributes[Key.protocol] = .string(value)
        }
        set(Key.port, query.port.map(Value.integer))
        set(Key.path, query.path.map(Value.string))
        set(Key.applicationTag, query.applicationTag.map(Value.data))
        set(Key.applicationLabel, query.applicationLabel.map(Value.data))
        set(Key.keyClass, query.keyClass.map { .string(keyClassValue($0)) })
        if let keyType = query.keyType {
            guard let value = keyTypeValue(keyType) else {
                throw KeychainError(.badParameter, "Keychain Services keeps RSA and EC keys as key items, not '\(keyType)'; store this key as a generic password")
            }
            attributes[Key.keyType] = .string(value)
        }
        set(Key.issuer, query.issuer.map(Value.data))
        set(Key.serialNumber, query.serialNumber.map(Value.data))
        set(Key.label, query.label.map(Value.string))
        set(Key.accessGroup, (query.accessGroup ?? accessGroup).map(Value.string))
        if let item {
            set(Key.label, item.label.map(Value.string))
            set(Key.comment, item.comment.map(Value.string))
            set(Key.keySizeInBits, item.keySizeInBits.map(Value.integer))
            attributes[Key.synchronizable] = .bool(item.synchronizable)
            attributes[Key.accessible] = .string(accessibleValue(item.accessibility))
        } else {
            attributes[Key.synchronizable] = query.synchronizable.map(Value.bool) ?? .string(synchronizableAny)
            set(Key.accessible, query.accessibility.map { .string(accessibleValue($0)) })
        }
        return attributes
    }

    /// The attributes to change for `changes` (`SecItemUpdate`'s second dictionary); a removed label or
    /// comment is written empty.
    package static func attributes(for changes: KeychainChanges) -> [String: Value] {
        var update: [String: Value] = [:]
        if let secret = changes.secret { update[Key.valueData] = .data(secret) }
        if let label = changes.label { update[Key.label] = .string(label ?? "") }
        if let comment = changes.comment { update[Key.comment] = .string(comment ?? "") }
        if let account = changes.account { update[Key.account] = .string(account) }
        if let service = changes.service { update[Key.service] = .string(service) }
        if let accessibility = changes.accessibility { update[Key.accessible] = .string(accessibleValue(accessibility)) }
        return update
    }

    /// An item of `itemClass` read back from the attributes `SecItemCopyMatching` returned. Values of an
    /// unexpected type are left out; an unknown accessibility reads as `whenUnlocked`.
    package static func item(_ itemClass: ItemClass, from attributes: [String: Value]) -> KeychainItem {
        func string(_ key: String) -> String? { if case .string(let value)? = attributes[key] { value } else { nil } }
        func data(_ key: String) -> [UInt8]? { if case .data(let value)? = attributes[key] { value } else { nil } }
        func integer(_ key: String) -> Int? {
            switch attributes[key] {
            case .integer(let value)?: value
            case .string(let value)?: Int(value)
            default: nil
            }
        }
        func date(_ key: String) -> Date? { if case .date(let value)? = attributes[key] { value } else { nil } }
        let accessibility = string(Key.accessible).flatMap { value in Accessibility.allCases.first { accessibleValue($0) == value } }
        var item = KeychainItem(itemClass: itemClass, accessibility: accessibility ?? .whenUnlocked)
        item.service = string(Key.service)
        item.account = string(Key.account)
        item.server = string(Key.server)
        item.protocol = string(Key.protocol).map { value in protocols.first { $0.value == value }?.name ?? value }
        item.port = integer(Key.port)
        item.path = string(Key.path)
        item.applicationTag = data(Key.applicationTag)
        item.applicationLabel = data(Key.applicationLabel)
        item.keyClass = integer(Key.keyClass).flatMap { value in KeyClass.allCases.first { keyClassValue($0) == String(value) } }
        item.keyType = string(Key.keyType).map { $0 == "42" ? "rsa" : $0 == "73" ? "ec" : $0 }
        item.keySizeInBits = integer(Key.keySizeInBits)
        item.issuer = data(Key.issuer)
        item.serialNumber = data(Key.serialNumber)
        item.label = string(Key.label)
        item.comment = string(Key.comment)
        item.accessGroup = string(Key.accessGroup)
        switch attributes[Key.synchronizable] {
        case .bool(let value)?: item.synchronizable = value
        case .integer(let value)?: item.synchronizable = value != 0
        default: item.synchronizable = false
        }
        item.creationDate = date(Key.creationDate)
        item.modificationDate = date(Key.modificationDate)
        // Whether an access control asks for an application password or presence is not readable back
        // from the opaque SecAccessControl; an item that has one says so when it is read.
        item.requiresUserPresence = attributes[Key.accessControl] != nil
        return item
    }
}

extension KeychainItem {
    /// The query naming exactly this item's identifying attributes.
    package var asQuery: KeychainQuery {
        var query = KeychainQuery(itemClass: itemClass)
        query.service = service
        query.account = account
        query.server = server
        query.protocol = `protocol`
        query.port = port
        query.path = path
        query.applicationTag = applicationTag
        query.applicationLabel = applicationLabel
        query.keyClass = keyClass
        query.keyType = keyType
        query.issuer = issuer
        query.serialNumber = serialNumber
        query.accessGroup = accessGroup
        return query
    }
}
