public import Foundation

/// The kind of an item (`kSecClass`), which decides the attributes that identify it.
public enum ItemClass: String, Sendable, Hashable, CaseIterable, Codable, LosslessStringConvertible {
    /// A password for a service and account (`kSecClassGenericPassword`); identified by service and
    /// account (and access group).
    case genericPassword
    /// A password for a server (`kSecClassInternetPassword`); identified by server, protocol, port,
    /// path and account (and access group).
    case internetPassword
    /// A cryptographic key (`kSecClassKey`); identified by application tag, key class, key type and
    /// application label (and access group).
    case key
    /// A certificate (`kSecClassCertificate`); identified by issuer and serial number (and access group).
    case certificate

    /// The name in kebab case, as messages and ``KeychainItem``'s JSON write it: `generic-password`,
    /// `internet-password`, `key`, `certificate`.
    public var description: String {
        switch self {
        case .genericPassword: "generic-password"
        case .internetPassword: "internet-password"
        case .key: "key"
        case .certificate: "certificate"
        }
    }

    /// Reads a ``description`` (or the case name).
    public init?(_ description: String) {
        guard let match = Self.allCases.first(where: { $0.description == description || $0.rawValue == description }) else { return nil }
        self = match
    }
}

/// Which part of a key pair, or a symmetric key (`kSecAttrKeyClass`).
public enum KeyClass: String, Sendable, Hashable, CaseIterable, Codable {
    /// The public half of a key pair.
    case publicKey = "public"
    /// The private half of a key pair.
    case privateKey = "private"
    /// A symmetric key.
    case symmetric
}

/// The attributes of one item, as stored and as returned by ``Keychain/copyMatching(_:returningSecrets:)``.
///
/// Which fields identify an item depends on ``itemClass`` (see ``ItemClass``); two items of a class may
/// not share their identifying fields (``KeychainError/Code/duplicateItem``). Identifying fields and
/// the accessibility are authenticated with the secret; ``label``, ``comment`` and the dates are
/// descriptive and are not (docs/KEYCHAIN.md).
public struct KeychainItem: Sendable, Hashable {
    /// The item's class.
    public var itemClass: ItemClass
    /// Generic password: the service, usually the app's reverse-DNS name (`kSecAttrService`).
    public var service: String?
    /// Generic and internet password: the account, such as the user's email (`kSecAttrAccount`).
    public var account: String?
    /// Internet password: the host (`kSecAttrServer`).
    public var server: String?
    /// Internet password: the protocol, such as `https` (`kSecAttrProtocol`).
    public var `protocol`: String?
    /// Internet password: the port (`kSecAttrPort`).
    public var port: Int?
    /// Internet password: the path (`kSecAttrPath`).
    public var path: String?
    /// Key: the application tag the app finds its key by (`kSecAttrApplicationTag`).
    public var applicationTag: [UInt8]?
    /// Key: the application label, often a hash of the public key (`kSecAttrApplicationLabel`).
    public var applicationLabel: [UInt8]?
    /// Key: public, private or symmetric (`kSecAttrKeyClass`).
    public var keyClass: KeyClass?
    /// Key: the algorithm, such as `ec-p256`, `ed25519`, `rsa`, `aes` (`kSecAttrKeyType`).
    public var keyType: String?
    /// Key: its size in bits (`kSecAttrKeySizeInBits`).
    public var keySizeInBits: Int?
    /// Certificate: the DER issuer name (`kSecAttrIssuer`).
    public var issuer: [UInt8]?
    /// Certificate: the DER serial number (`kSecAttrSerialNumber`).
    public var serialNumber: [UInt8]?
    /// A name for people (`kSecAttrLabel`).
    public var label: String?
    /// A note for people (`kSecAttrComment`).
    public var comment: String?
    /// The group of apps sharing the item (`kSecAttrAccessGroup`); part of every class's identity.
    public var accessGroup: String?
    /// Kept as given (`kSecAttrSynchronizable`); Coffer's own store never syncs anything.
    public var synchronizable: Bool
    /// When the secret is readable.
    public var accessibility: Accessibility
    /// Set by the store: when the item was added.
    public internal(set) var creationDate: Date?
    /// Set by the store: when the item last changed.
    public internal(set) var modificationDate: Date?
    /// Set by the store: whether reading needs an application password.
    public internal(set) var hasApplicationPassword: Bool = false
    /// Set by the store: whether reading asks for the user's presence.
    public internal(set) var requiresUserPresence: Bool = false

    /// An item of a class with no attributes set yet; prefer the class constructors below.
    public init(itemClass: ItemClass, accessibility: Accessibility = .whenUnlocked) {
        self.itemClass = itemClass
        self.synchronizable = false
        self.accessibility = accessibility
    }

    /// A generic password for `service` and `account`.
    public static func genericPassword(service: String, account: String, accessibility: Accessibility = .whenUnlocked) -> KeychainItem {
        var item = KeychainItem(itemClass: .genericPassword, accessibility: accessibility)
        item.service = service
        item.account = account
        return item
    }

    /// An internet password for an account on a server.
    public static func internetPassword(
        server: String, account: String, protocol: String? = "https", port: Int? = nil, path: String? = nil,
        accessibility: Accessibility = .whenUnlocked
    ) -> KeychainItem {
        var item = KeychainItem(itemClass: .internetPassword, accessibility: accessibility)
        item.server = server
        item.account = account
        item.protocol = `protocol`
        item.port = port
        item.path = path
        return item
    }

    /// A key found by its application tag.
    public static func key(
        applicationTag: [UInt8], keyClass: KeyClass, keyType: String, keySizeInBits: Int? = nil,
        accessibility: Accessibility = .whenUnlocked
    ) -> KeychainItem {
        var item = KeychainItem(itemClass: .key, accessibility: accessibility)
        item.applicationTag = applicationTag
        item.keyClass = keyClass
        item.keyType = keyType
        item.keySizeInBits = keySizeInBits
        return item
    }

    /// A certificate identified by its DER issuer and serial number.
    public static func certificate(issuer: [UInt8], serialNumber: [UInt8], accessibility: Accessibility = .whenUnlocked) -> KeychainItem {
        var item = KeychainItem(itemClass: .certificate, accessibility: accessibility)
        item.issuer = issuer
        item.serialNumber = serialNumber
        return item
    }

    /// Checks that the identifying attributes of the class are present and sane.
    func validate() throws(KeychainError) {
        func require(_ condition: Bool, _ what: String) throws(KeychainError) {
            if !condition { throw KeychainError(.badParameter, "a \(itemClass.description) item needs \(what)") }
        }
        switch itemClass {
        case .genericPassword:
            try require(service.map { !$0.isEmpty } ?? false, "a service")
            try require(account != nil, "an account")
        case .internetPassword:
            try require(server.map { !$0.isEmpty } ?? false, "a server")
            try require(account != nil, "an account")
            if let port { try require((0...65535).contains(port), "a port from 0 to 65535") }
        case .key:
            try require(applicationTag.map { !$0.isEmpty } ?? false, "an application tag")
            try require(keyClass != nil, "a key class")
            try require(keyType.map { !$0.isEmpty } ?? false, "a key type")
        case .certificate:
            try require(issuer.map { !$0.isEmpty } ?? false, "an issuer")
            try require(serialNumber.map { !$0.isEmpty } ?? false, "a serial number")
        }
        for text in [service, account, server, `protocol`, path, keyType, label, comment, accessGroup].compactMap({ $0 }) {
            try require(text.utf8.count <= 4096, "attributes of at most 4096 bytes")
        }
        for bytes in [applicationTag, applicationLabel, issuer, serialNumber].compactMap({ $0 }) {
            try require(bytes.count <= 4096, "binary attributes of at most 4096 bytes")
        }
    }

    /// The canonical encoding of the identifying attributes: unique per item in a keychain, and part of
    /// the associated data its secret is sealed with, so a secret moved to another row does not open.
    var identity: [UInt8] {
        var out: [UInt8] = []
        func field(_ bytes: [UInt8]?) {
            guard let bytes else {
                out.append(0)
                return
            }
            out.append(1)
            var length = UInt32(bytes.count).bigEndian
            withUnsafeBytes(of: &length) { out.append(contentsOf: $0) }
            out.append(contentsOf: bytes)
        }
        func text(_ string: String?) { field(string.map { Array($0.utf8) }) }
        text(itemClass.rawValue)
        text(accessGroup)
        switch itemClass {
        case .genericPassword:
            text(service)
            text(account)
        case .internetPassword:
            text(server)
            text(`protocol`)
            text(port.map(String.init))
            text(path)
            text(account)
        case .key:
            field(applicationTag)
            text(keyClass?.rawValue)
            text(keyType)
            field(applicationLabel)
        case .certificate:
            field(issuer)
            field(serialNumber)
        }
        return out
    }
}
