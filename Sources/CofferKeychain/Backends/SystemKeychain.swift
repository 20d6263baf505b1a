#if canImport(Security)
import Foundation
import Security
#if canImport(LocalAuthentication) && !os(tvOS) && !os(watchOS)
import LocalAuthentication
#endif

/// The Security framework's keychain behind Coffer's API, on Apple platforms (``Keychain/system(accessGroup:)``).
///
/// Each operation is one `SecItem…` call on the data-protection keychain (also on macOS), with Coffer's
/// classes, attributes, accessibility and access control mapped to their `kSec…` names. The system does
/// the encryption, locking and user-presence prompts; Coffer's password, lock, rotation and export calls
/// do not apply and say so. Not tested on this project's machines (Linux only): see docs/KEYCHAIN.md.
struct SystemKeychain: Sendable {
    /// Added to every item and query when set (`kSecAttrAccessGroup`).
    let accessGroup: String?

    // MARK: Operations

    func add(_ item: KeychainItem, secret: [UInt8], accessControl: AccessControl) throws(KeychainError) {
        try item.validate()
        var attributes = try dictionary(for: item.asQuery, descriptive: item)
        if item.itemClass == .certificate {
            guard let certificate = SecCertificateCreateWithData(nil, Data(secret) as CFData) else {
                throw KeychainError(.badParameter, "a certificate item's secret must be the certificate's DER")
            }
            // The system reads issuer and serial number from the certificate itself.
            attributes.removeValue(forKey: kSecAttrIssuer as String)
            attributes.removeValue(forKey: kSecAttrSerialNumber as String)
            attributes[kSecValueRef as String] = certificate
        } else {
            attributes[kSecValueData as String] = Data(secret)
        }
        if accessControl.applicationPassword != nil || accessControl.requiresUserPresence {
            attributes.removeValue(forKey: kSecAttrAccessible as String)
            attributes[kSecAttrAccessControl as String] = try Self.accessControl(accessControl, accessibility: item.accessibility)
            try Self.authenticate(&attributes, applicationPassword: accessControl.applicationPassword, prompt: nil)
        }
        try Self.check(SecItemAdd(attributes as CFDictionary, nil))
    }

    func copyMatching(_ query: KeychainQuery, returningSecrets: Bool) throws(KeychainError) -> [KeychainMatch] {
        var search = try dictionary(for: query, descriptive: nil)
        search[kSecMatchLimit as String] = query.matchLimit == .one ? kSecMatchLimitOne : kSecMatchLimitAll
        search[kSecReturnAttributes as String] = true
        search[kSecReturnPersistentRef as String] = true
        var result: CFTypeRef?
        try Self.check(SecItemCopyMatching(search as CFDictionary, &result))
        let found: [[String: Any]]
        if let many = result as? [[String: Any]] {
            found = many
        } else if let one = result as? [String: Any] {
            found = [one]
        } else {
            found = []
        }
        guard !found.isEmpty else { throw KeychainError(.itemNotFound, "no \(query.itemClass.description) item matches") }
        var matches: [KeychainMatch] = []
        for attributes in found {
            let item = try Self.item(query.itemClass, from: attributes)
            var secret: [UInt8]?
            if returningSecrets {
                // Data is fetched item by item through its persistent reference: asking for data with
                // kSecMatchLimitAll is refused for some classes.
                secret = try self.secret(persistentReference: attributes[kSecValuePersistentRef as String], query: query)
            }
            matches.append(KeychainMatch(item: item, secret: secret))
        }
        return matches
    }

    private func secret(persistentReference: Any?, query: KeychainQuery) throws(KeychainError) -> [UInt8] {
        guard let reference = persistentReference as? Data else {
            throw KeychainError(.dataCorrupted, "the system keychain returned an item without a reference")
        }
        var search: [String: Any] = [
            kSecValuePersistentRef as String: reference,
            kSecReturnData as String: true,
            kSecUseDataProtectionKeychain as String: true,
        ]
        try Self.authenticate(&search, applicationPassword: query.applicationPassword, prompt: query.operationPrompt)
        var result: CFTypeRef?
        try Self.check(SecItemCopyMatching(search as CFDictionary, &result))
        guard let data = result as? Data else { throw KeychainError(.dataCorrupted, "the system keychain returned no data for an item") }
        return Array(data)
    }

    func update(_ query: KeychainQuery, with changes: KeychainChanges) throws(KeychainError) -> Int {
        var all = query
        all.matchLimit = .all
        let count = try copyMatching(all, returningSecrets: false).count
        var search = try dictionary(for: query, descriptive: nil)
        try Self.authenticate(&search, applicationPassword: query.applicationPassword, prompt: query.operationPrompt)
        var update: [String: Any] = [:]
        if let secret = changes.secret { update[kSecValueData as String] = Data(secret) }
        if let label = changes.label { update[kSecAttrLabel as String] = label ?? "" }
        if let comment = changes.comment { update[kSecAttrComment as String] = comment ?? "" }
        if let account = changes.account { update[kSecAttrAccount as String] = account }
        if let service = changes.service { update[kSecAttrService as String] = service }
        if let accessibility = changes.accessibility { update[kSecAttrAccessible as String] = Self.accessible(accessibility) }
        guard !update.isEmpty else { return count }
        try Self.check(SecItemUpdate(search as CFDictionary, update as CFDictionary))
        return count
    }

    func delete(_ query: KeychainQuery) throws(KeychainError) -> Int {
        var all = query
        all.matchLimit = .all
        let count = try copyMatching(all, returningSecrets: false).count
        try Self.check(SecItemDelete(try dictionary(for: query, descriptive: nil) as CFDictionary))
        return count
    }

    // MARK: Mapping Coffer's attributes to kSec… names

    /// The query dictionary for `query`, plus the descriptive attributes and accessibility of `item` when adding.
    private func dictionary(for query: KeychainQuery, descriptive item: KeychainItem?) throws(KeychainError) -> [String: Any] {
        var attributes: [String: Any] = [
            kSecClass as String: Self.classValue(query.itemClass),
            kSecUseDataProtectionKeychain as String: true,
        ]
        func set(_ key: CFString, _ value: Any?) {
            if let value { attributes[key as String] = value }
        }
        set(kSecAttrService, query.service)
        set(kSecAttrAccount, query.account)
        set(kSecAttrServer, query.server)
        if let name = query.protocol {
            guard let value = Self.protocolValue(name) else {
                throw KeychainError(.badParameter, "Keychain Services has no protocol named '\(name)'; use http, https, ftp, ssh, smtp, imap, ldap...")
            }
            attributes[kSecAttrProtocol as String] = value
        }
        set(kSecAttrPort, query.port)
        set(kSecAttrPath, query.path)
        set(kSecAttrApplicationTag, query.applicationTag.map { Data($0) })
        set(kSecAttrApplicationLabel, query.applicationLabel.map { Data($0) })
        set(kSecAttrKeyClass, query.keyClass.map(Self.keyClassValue))
        if let keyType = query.keyType {
            guard let value = Self.keyTypeValue(keyType) else {
                throw KeychainError(
                    .badParameter,
                    "Keychain Services keeps RSA and EC keys as key items, not '\(keyType)'; store this key as a generic password"
                )
            }
            attributes[kSecAttrKeyType as String] = value
        }
        set(kSecAttrIssuer, query.issuer.map { Data($0) })
        set(kSecAttrSerialNumber, query.serialNumber.map { Data($0) })
        set(kSecAttrLabel, query.label)
        set(kSecAttrAccessGroup, query.accessGroup ?? accessGroup)
        if let item {
            set(kSecAttrLabel, item.label)
            set(kSecAttrComment, item.comment)
            set(kSecAttrKeySizeInBits, item.keySizeInBits)
            attributes[kSecAttrSynchronizable as String] = item.synchronizable
            attributes[kSecAttrAccessible as String] = Self.accessible(item.accessibility)
        } else {
            attributes[kSecAttrSynchronizable as String] = query.synchronizable.map { $0 as Any } ?? kSecAttrSynchronizableAny
            if let accessibility = query.accessibility { attributes[kSecAttrAccessible as String] = Self.accessible(accessibility) }
        }
        return attributes
    }

    /// Reads an item's attributes back from what `SecItemCopyMatching` returned.
    private static func item(_ itemClass: ItemClass, from attributes: [String: Any]) throws(KeychainError) -> KeychainItem {
        func value<T>(_ key: CFString, as type: T.Type) -> T? { attributes[key as String] as? T }
        let accessibility = value(kSecAttrAccessible, as: String.self).flatMap(Self.accessibility(named:)) ?? .whenUnlocked
        var item = KeychainItem(itemClass: itemClass, accessibility: accessibility)
        item.service = value(kSecAttrService, as: String.self)
        item.account = value(kSecAttrAccount, as: String.self)
        item.server = value(kSecAttrServer, as: String.self)
        item.protocol = value(kSecAttrProtocol, as: String.self).flatMap(Self.protocolName)
        item.port = value(kSecAttrPort, as: NSNumber.self)?.intValue
        item.path = value(kSecAttrPath, as: String.self)
        item.applicationTag = value(kSecAttrApplicationTag, as: Data.self).map { Array($0) }
        item.applicationLabel = value(kSecAttrApplicationLabel, as: Data.self).map { Array($0) }
        item.keyClass = value(kSecAttrKeyClass, as: String.self).flatMap(Self.keyClass(named:))
        item.keyType = value(kSecAttrKeyType, as: String.self).flatMap(Self.keyTypeName)
        item.keySizeInBits = value(kSecAttrKeySizeInBits, as: NSNumber.self)?.intValue
        item.issuer = value(kSecAttrIssuer, as: Data.self).map { Array($0) }
        item.serialNumber = value(kSecAttrSerialNumber, as: Data.self).map { Array($0) }
        item.label = value(kSecAttrLabel, as: String.self)
        item.comment = value(kSecAttrComment, as: String.self)
        item.accessGroup = value(kSecAttrAccessGroup, as: String.self)
        item.synchronizable = value(kSecAttrSynchronizable, as: NSNumber.self)?.boolValue ?? false
        item.creationDate = value(kSecAttrCreationDate, as: Date.self)
        item.modificationDate = value(kSecAttrModificationDate, as: Date.self)
        // Whether an access control asks for an application password or presence is not readable back
        // from the opaque SecAccessControl; an item that has one says so when it is read.
        item.hasApplicationPassword = false
        item.requiresUserPresence = attributes[kSecAttrAccessControl as String] != nil
        return item
    }

    private static func classValue(_ itemClass: ItemClass) -> CFString {
        switch itemClass {
        case .genericPassword: kSecClassGenericPassword
        case .internetPassword: kSecClassInternetPassword
        case .key: kSecClassKey
        case .certificate: kSecClassCertificate
        }
    }

    private static func accessible(_ accessibility: Accessibility) -> CFString {
        switch accessibility {
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        }
    }

    private static func accessibility(named name: String) -> Accessibility? {
        Accessibility.allCases.first { (accessible($0) as String) == name }
    }

    private static func keyClassValue(_ keyClass: KeyClass) -> CFString {
        switch keyClass {
        case .publicKey: kSecAttrKeyClassPublic
        case .privateKey: kSecAttrKeyClassPrivate
        case .symmetric: kSecAttrKeyClassSymmetric
        }
    }

    private static func keyClass(named name: String) -> KeyClass? {
        KeyClass.allCases.first { (keyClassValue($0) as String) == name }
    }

    /// Coffer's key types that Keychain Services has a constant for; every EC curve is one type there.
    private static func keyTypeValue(_ keyType: String) -> CFString? {
        switch keyType {
        case "rsa": kSecAttrKeyTypeRSA
        case "ec-p256", "ec-p384", "ec-p521": kSecAttrKeyTypeECSECPrimeRandom
        default: nil
        }
    }

    private static func keyTypeName(_ value: String) -> String? {
        if value == (kSecAttrKeyTypeRSA as String) { return "rsa" }
        if value == (kSecAttrKeyTypeECSECPrimeRandom as String) { return "ec" }
        return value
    }

    private static func protocols() -> [(String, CFString)] {
        [
            ("http", kSecAttrProtocolHTTP), ("https", kSecAttrProtocolHTTPS), ("ftp", kSecAttrProtocolFTP),
            ("ftps", kSecAttrProtocolFTPS), ("ssh", kSecAttrProtocolSSH), ("smtp", kSecAttrProtocolSMTP),
            ("imap", kSecAttrProtocolIMAP), ("imaps", kSecAttrProtocolIMAPS), ("pop3", kSecAttrProtocolPOP3),
            ("pop3s", kSecAttrProtocolPOP3S), ("ldap", kSecAttrProtocolLDAP), ("ldaps", kSecAttrProtocolLDAPS),
            ("telnet", kSecAttrProtocolTelnet), ("smb", kSecAttrProtocolSMB), ("afp", kSecAttrProtocolAFP),
            ("irc", kSecAttrProtocolIRC), ("ircs", kSecAttrProtocolIRCS), ("nntp", kSecAttrProtocolNNTP),
            ("rtsp", kSecAttrProtocolRTSP), ("socks", kSecAttrProtocolSOCKS),
        ]
    }

    private static func protocolValue(_ name: String) -> CFString? {
        protocols().first { $0.0 == name.lowercased() }?.1
    }

    private static func protocolName(_ value: String) -> String? {
        protocols().first { ($0.1 as String) == value }?.0 ?? value
    }

    // MARK: Access control and errors

    private static func accessControl(_ control: AccessControl, accessibility: Accessibility) throws(KeychainError) -> SecAccessControl {
        var flags: SecAccessControlCreateFlags = []
        if control.requiresUserPresence { flags.insert(.userPresence) }
        if control.applicationPassword != nil { flags.insert(.applicationPassword) }
        if control.requiresUserPresence && control.applicationPassword != nil { flags.insert(.and) }
        guard let access = SecAccessControlCreateWithFlags(nil, accessible(accessibility), flags, nil) else {
            throw KeychainError(.badParameter, "the system refused this access control")
        }
        return access
    }

    /// Supplies an application password (and the operation prompt) through a LocalAuthentication context.
    private static func authenticate(_ attributes: inout [String: Any], applicationPassword: String?, prompt: String?) throws(KeychainError) {
        guard applicationPassword != nil || prompt != nil else { return }
        #if canImport(LocalAuthentication) && !os(tvOS) && !os(watchOS)
        let context = LAContext()
        if let prompt { context.localizedReason = prompt }
        if let applicationPassword {
            guard context.setCredential(Data(applicationPassword.utf8), type: .applicationPassword) else {
                throw KeychainError(.badParameter, "the system refused the application password")
            }
        }
        attributes[kSecUseAuthenticationContext as String] = context
        #else
        _ = attributes
        if applicationPassword != nil {
            throw KeychainError(.badParameter, "application passwords need LocalAuthentication, which this platform lacks")
        }
        #endif
    }

    /// Maps an `OSStatus` to the ``KeychainError`` with the same meaning.
    private static func check(_ status: OSStatus) throws(KeychainError) {
        switch status {
        case errSecSuccess: return
        case errSecDuplicateItem: throw KeychainError(.duplicateItem, "an item with the same identifying attributes already exists; update it instead")
        case errSecItemNotFound: throw KeychainError(.itemNotFound, "no item matches")
        case errSecInteractionNotAllowed: throw KeychainError(.interactionNotAllowed, "the device is locked; the item is not readable now")
        case errSecAuthFailed, errSecUserCanceled: throw KeychainError(.authenticationFailed, "authentication failed or was cancelled")
        case errSecParam: throw KeychainError(.badParameter, "Keychain Services refused the query's parameters")
        case errSecDecode: throw KeychainError(.dataCorrupted, "Keychain Services could not decode the item")
        default:
            let message = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "status \(status)"
            throw KeychainError(.ioFailure, "Keychain Services: \(message)")
        }
    }
}

extension KeychainItem {
    /// The query naming exactly this item's identifying attributes.
    var asQuery: KeychainQuery {
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
#endif
