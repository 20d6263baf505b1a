#if canImport(Security)
import Foundation
import Security
#if canImport(LocalAuthentication) && !os(tvOS) && !os(watchOS)
import LocalAuthentication
#endif

/// The Security framework's keychain as a ``KeychainBackend``, on Apple platforms.
///
/// Each operation is one `SecItem…` call on the data-protection keychain (also on macOS). Coffer's
/// classes, attributes, accessibility and changes become `kSec…` dictionaries through
/// `SecItemMapping`, which is plain Swift and tested on every platform; only the calls, the
/// `SecAccessControl` and the `LAContext` are here. The system does the encryption, locking and
/// user-presence prompts, so there is no password, lock, rotation or export: those exist only on
/// ``Keychain``. Batch adds are not atomic here. See docs/KEYCHAIN.md.
///
/// ```swift
/// let keychain = SystemKeychain(accessGroup: "TEAMID.com.example.shared")
/// try keychain.add(.genericPassword(service: "com.example.app", account: "ada"), secret: Array("token".utf8))
/// ```
public struct SystemKeychain: KeychainBackend {
    /// Added to every item and query when set (`kSecAttrAccessGroup`).
    public let accessGroup: String?

    /// The system keychain, optionally limited to one access group.
    public init(accessGroup: String? = nil) {
        self.accessGroup = accessGroup
    }

    /// Apple's external representation, as `SecKeyCreateWithData` reads it.
    public var privateKeyStorageFormat: PrivateKeyStorageFormat { .appleExternal }

    // MARK: Operations

    /// `SecItemAdd`; an access control becomes a `SecAccessControl`, an application password an `LAContext` credential.
    public func add(_ item: KeychainItem, secret: [UInt8], accessControl: AccessControl) throws(KeychainError) {
        try item.validate()
        var attributes = Self.dictionary(try SecItemMapping.attributes(for: item.asQuery, adding: item, accessGroup: accessGroup))
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

    /// `SecItemCopyMatching`; secrets are fetched one item at a time through persistent references.
    public func copyMatching(_ query: KeychainQuery, returningSecrets: Bool) throws(KeychainError) -> [KeychainMatch] {
        var search = Self.dictionary(try SecItemMapping.attributes(for: query, adding: nil, accessGroup: accessGroup))
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
            let item = SecItemMapping.item(query.itemClass, from: Self.values(attributes))
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

    /// `SecItemUpdate`; returns how many items matched.
    public func update(matching query: KeychainQuery, with changes: KeychainChanges) throws(KeychainError) -> Int {
        var all = query
        all.matchLimit = .all
        let count = try copyMatching(all, returningSecrets: false).count
        var search = Self.dictionary(try SecItemMapping.attributes(for: query, adding: nil, accessGroup: accessGroup))
        try Self.authenticate(&search, applicationPassword: query.applicationPassword, prompt: query.operationPrompt)
        let update = Self.dictionary(SecItemMapping.attributes(for: changes))
        guard !update.isEmpty else { return count }
        try Self.check(SecItemUpdate(search as CFDictionary, update as CFDictionary))
        return count
    }

    /// `SecItemDelete`; returns how many items matched.
    public func delete(matching query: KeychainQuery) throws(KeychainError) -> Int {
        var all = query
        all.matchLimit = .all
        let count = try copyMatching(all, returningSecrets: false).count
        let search = Self.dictionary(try SecItemMapping.attributes(for: query, adding: nil, accessGroup: accessGroup))
        try Self.check(SecItemDelete(search as CFDictionary))
        return count
    }

    // MARK: Between SecItemMapping's values and Core Foundation's

    private static func dictionary(_ values: [String: SecItemMapping.Value]) -> [String: Any] {
        values.mapValues { value -> Any in
            switch value {
            case .string(let string): string
            case .data(let bytes): Data(bytes)
            case .integer(let number): NSNumber(value: number)
            case .bool(let flag): flag
            case .date(let date): date
            }
        }
    }

    private static func values(_ attributes: [String: Any]) -> [String: SecItemMapping.Value] {
        var values: [String: SecItemMapping.Value] = [:]
        for (key, value) in attributes {
            switch value {
            case let string as String: values[key] = .string(string)
            case let data as Data: values[key] = .data(Array(data))
            case let date as Date: values[key] = .date(date)
            case let number as NSNumber:
                values[key] = CFGetTypeID(number) == CFBooleanGetTypeID() ? .bool(number.boolValue) : .integer(number.intValue)
            default:
                // kSecAttrAccessControl and references: kept as present, without a value Coffer reads.
                if key == SecItemMapping.Key.accessControl { values[key] = .bool(true) }
            }
        }
        return values
    }

    // MARK: Access control and errors

    private static func accessControl(_ control: AccessControl, accessibility: Accessibility) throws(KeychainError) -> SecAccessControl {
        var flags: SecAccessControlCreateFlags = []
        if control.requiresUserPresence { flags.insert(.userPresence) }
        if control.applicationPassword != nil { flags.insert(.applicationPassword) }
        if control.requiresUserPresence && control.applicationPassword != nil { flags.insert(.and) }
        guard let access = SecAccessControlCreateWithFlags(nil, SecItemMapping.accessibleValue(accessibility) as CFString, flags, nil) else {
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

#endif
