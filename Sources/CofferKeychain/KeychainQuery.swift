/// Which items an operation applies to: a class and any attributes that must match exactly
/// (`SecItemCopyMatching`'s query dictionary). Unset attributes match anything.
///
/// ```swift
/// let query = KeychainQuery.genericPassword(service: "com.example.app", account: "ada@example.com")
/// let secret = try keychain.secret(matching: query)
/// ```
public struct KeychainQuery: Sendable, Hashable {
    /// How many matches to return (`kSecMatchLimit`).
    public enum MatchLimit: Sendable, Hashable {
        /// The first match; ``KeychainError/Code/itemNotFound`` when there is none.
        case one
        /// Every match; ``KeychainError/Code/itemNotFound`` when there is none, as Keychain Services does.
        case all
    }

    /// The class to search.
    public var itemClass: ItemClass
    /// Generic passwords of this service (`kSecAttrService`).
    public var service: String?
    /// Items of this account (`kSecAttrAccount`).
    public var account: String?
    /// Internet passwords for this server (`kSecAttrServer`).
    public var server: String?
    /// Internet passwords for this protocol (`kSecAttrProtocol`).
    public var `protocol`: String?
    /// Internet passwords for this port (`kSecAttrPort`).
    public var port: Int?
    /// Internet passwords for this path (`kSecAttrPath`).
    public var path: String?
    /// Keys with this application tag (`kSecAttrApplicationTag`).
    public var applicationTag: [UInt8]?
    /// Keys with this application label (`kSecAttrApplicationLabel`).
    public var applicationLabel: [UInt8]?
    /// Keys of this class (`kSecAttrKeyClass`).
    public var keyClass: KeyClass?
    /// Keys of this type, such as `ec-p256` (`kSecAttrKeyType`).
    public var keyType: String?
    /// Certificates by this DER issuer name (`kSecAttrIssuer`).
    public var issuer: [UInt8]?
    /// Certificates with this DER serial number (`kSecAttrSerialNumber`).
    public var serialNumber: [UInt8]?
    /// Items with this label (`kSecAttrLabel`).
    public var label: String?
    /// Items of this access group (`kSecAttrAccessGroup`).
    public var accessGroup: String?
    /// Items whose synchronizable flag is this (`kSecAttrSynchronizable`); nil for either.
    public var synchronizable: Bool?
    /// Items with this accessibility (`kSecAttrAccessible`).
    public var accessibility: Accessibility?
    /// One or all; ``MatchLimit/one`` unless set.
    public var matchLimit: MatchLimit = .one
    /// The application password of items that have one (`kSecUseCredential`-like); never stored.
    public var applicationPassword: String?
    /// Shown by the presence prompt for items that require user presence (`kSecUseOperationPrompt`).
    public var operationPrompt: String?

    /// A query for a class; narrow it by setting attributes.
    public init(itemClass: ItemClass) {
        self.itemClass = itemClass
    }

    /// Generic passwords, optionally of one service and one account.
    public static func genericPassword(service: String? = nil, account: String? = nil) -> KeychainQuery {
        var query = KeychainQuery(itemClass: .genericPassword)
        query.service = service
        query.account = account
        return query
    }

    /// Internet passwords, optionally of one server and account.
    public static func internetPassword(server: String? = nil, account: String? = nil) -> KeychainQuery {
        var query = KeychainQuery(itemClass: .internetPassword)
        query.server = server
        query.account = account
        return query
    }

    /// Keys, optionally of one application tag and key class.
    public static func key(applicationTag: [UInt8]? = nil, keyClass: KeyClass? = nil) -> KeychainQuery {
        var query = KeychainQuery(itemClass: .key)
        query.applicationTag = applicationTag
        query.keyClass = keyClass
        return query
    }

    /// Certificates, optionally one by issuer and serial number.
    public static func certificate(issuer: [UInt8]? = nil, serialNumber: [UInt8]? = nil) -> KeychainQuery {
        var query = KeychainQuery(itemClass: .certificate)
        query.issuer = issuer
        query.serialNumber = serialNumber
        return query
    }

    /// This query with every match returned.
    public func all() -> KeychainQuery {
        var copy = self
        copy.matchLimit = .all
        return copy
    }

    /// Whether an item's attributes satisfy the query (the in-memory store's filter; the SQLite store
    /// expresses the same conditions in SQL).
    func matches(_ item: KeychainItem) -> Bool {
        func same<T: Equatable>(_ wanted: T?, _ actual: T?) -> Bool { wanted == nil || wanted == actual }
        return item.itemClass == itemClass
            && same(service, item.service) && same(account, item.account) && same(server, item.server)
            && same(`protocol`, item.protocol) && same(port, item.port) && same(path, item.path)
            && same(applicationTag, item.applicationTag) && same(applicationLabel, item.applicationLabel)
            && same(keyClass, item.keyClass) && same(keyType, item.keyType) && same(issuer, item.issuer)
            && same(serialNumber, item.serialNumber) && same(label, item.label) && same(accessGroup, item.accessGroup)
            && same(synchronizable, item.synchronizable) && same(accessibility, item.accessibility)
    }
}

/// What an update changes (`SecItemUpdate`'s attributes to update). Unset fields stay as they are.
public struct KeychainChanges: Sendable, Hashable {
    /// A new secret.
    public var secret: [UInt8]?
    /// A new label; `.some(nil)` removes it.
    public var label: String??
    /// A new comment; `.some(nil)` removes it.
    public var comment: String??
    /// Renames a generic password's account (or an internet password's).
    public var account: String?
    /// Moves a generic password to another service.
    public var service: String?
    /// A new accessibility; the secret is sealed again under its class key.
    public var accessibility: Accessibility?

    /// No change yet; set the fields to change.
    public init(secret: [UInt8]? = nil) {
        self.secret = secret
    }
}

/// One item found by ``Keychain/copyMatching(_:returningSecrets:)``.
public struct KeychainMatch: Sendable {
    /// The item's attributes, always returned.
    public let item: KeychainItem
    /// The secret, when asked for (`kSecReturnData`).
    public let secret: [UInt8]?
}
