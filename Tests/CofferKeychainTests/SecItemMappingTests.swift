import CofferKeychain
import Foundation
import Testing

/// The system keychain's translation of Coffer's items and queries into Keychain Services attribute
/// dictionaries, checked on every platform against the documented `kSec…` values (Security framework:
/// `kSecClass` = "class", `kSecClassGenericPassword` = "genp", `kSecAttrService` = "svce", …).
@Suite("SecItem mapping")
struct SecItemMappingTests {
    typealias Value = SecItemMapping.Value

    @Test func aGenericPasswordQuery() throws {
        let attributes = try SecItemMapping.attributes(for: .genericPassword(service: "com.example", account: "ada"), adding: nil, accessGroup: nil)
        #expect(attributes == [
            "class": .string("genp"), "nleg": .bool(true), "svce": .string("com.example"), "acct": .string("ada"),
            "sync": .string("syna"),   // a query matches synchronizable and local items alike
        ])
    }

    @Test func anInternetPasswordBeingAdded() throws {
        var item = KeychainItem.internetPassword(server: "example.com", account: "ada", protocol: "https", port: 8443, path: "/login", accessibility: .afterFirstUnlockThisDeviceOnly)
        item.label = "Example"
        let attributes = try SecItemMapping.attributes(for: item.asQuery, adding: item, accessGroup: "TEAM.group")
        #expect(attributes["class"] == .string("inet"))
        #expect(attributes["srvr"] == .string("example.com") && attributes["ptcl"] == .string("htps"))
        #expect(attributes["port"] == .integer(8443) && attributes["path"] == .string("/login"))
        #expect(attributes["pdmn"] == .string("cku") && attributes["labl"] == .string("Example"))
        #expect(attributes["agrp"] == .string("TEAM.group") && attributes["sync"] == .bool(false))
    }

    @Test func accessibilityAndKeyValues() throws {
        #expect(Accessibility.allCases.map(SecItemMapping.accessibleValue) == ["ak", "ck", "aku", "cku"])
        #expect(KeyClass.allCases.map(SecItemMapping.keyClassValue) == ["0", "1", "2"])
        let key = KeychainItem.key(applicationTag: [1, 2], keyClass: .privateKey, keyType: "ec-p256", keySizeInBits: 256)
        let attributes = try SecItemMapping.attributes(for: key.asQuery, adding: key, accessGroup: nil)
        #expect(attributes["class"] == .string("keys") && attributes["atag"] == .data([1, 2]))
        #expect(attributes["kcls"] == .string("1") && attributes["type"] == .string("73") && attributes["bsiz"] == .integer(256))
    }

    /// What Keychain Services cannot hold is refused before any call, with the reason.
    @Test func unmappableAttributesAreRefused() {
        var query = KeychainQuery.genericPassword()
        query.itemClass = .internetPassword
        query.protocol = "gopher"
        #expect(throws: KeychainError.badParameter) { _ = try SecItemMapping.attributes(for: query, adding: nil, accessGroup: nil) }
        let ed25519 = KeychainItem.key(applicationTag: [1], keyClass: .privateKey, keyType: "ed25519")
        #expect(throws: KeychainError.badParameter) { _ = try SecItemMapping.attributes(for: ed25519.asQuery, adding: ed25519, accessGroup: nil) }
    }

    @Test func changesBecomeAnUpdateDictionary() {
        var changes = KeychainChanges()
        changes.secret = [9]
        changes.label = .some(nil)
        changes.accessibility = .afterFirstUnlock
        #expect(SecItemMapping.attributes(for: changes) == ["v_Data": .data([9]), "labl": .string(""), "pdmn": .string("ck")])
    }

    /// What SecItemCopyMatching returns reads back as the item that was added.
    @Test func attributesReadBackAsTheItem() throws {
        var item = KeychainItem.internetPassword(server: "example.com", account: "ada", protocol: "ssh", port: 22, accessibility: .afterFirstUnlock)
        item.comment = "note"
        var returned = try SecItemMapping.attributes(for: item.asQuery, adding: item, accessGroup: nil)
        let created = Date(timeIntervalSince1970: 1_795_453_797)
        returned["cdat"] = .date(created)
        let read = SecItemMapping.item(.internetPassword, from: returned)
        #expect(read.server == "example.com" && read.account == "ada" && read.protocol == "ssh" && read.port == 22)
        #expect(read.accessibility == .afterFirstUnlock && read.comment == "note" && read.creationDate == created)
        #expect(!read.requiresUserPresence)
        let key = SecItemMapping.item(.key, from: ["kcls": .integer(1), "type": .string("42"), "atag": .data([7])])
        #expect(key.keyClass == .privateKey && key.keyType == "rsa" && key.applicationTag == [7])
    }
}

#if canImport(Security)
import Security

/// On Apple platforms, the mapping's string values are the Security framework's own constants.
@Suite("SecItem mapping against Security")
struct SecItemMappingConstantTests {
    @Test func keysAndValuesAreTheFrameworks() {
        typealias Key = SecItemMapping.Key
        let pairs: [(String, CFString)] = [
            (Key.itemClass, kSecClass), (Key.service, kSecAttrService), (Key.account, kSecAttrAccount), (Key.server, kSecAttrServer),
            (Key.protocol, kSecAttrProtocol), (Key.port, kSecAttrPort), (Key.path, kSecAttrPath), (Key.applicationTag, kSecAttrApplicationTag),
            (Key.applicationLabel, kSecAttrApplicationLabel), (Key.keyClass, kSecAttrKeyClass), (Key.keyType, kSecAttrKeyType),
            (Key.keySizeInBits, kSecAttrKeySizeInBits), (Key.issuer, kSecAttrIssuer), (Key.serialNumber, kSecAttrSerialNumber),
            (Key.label, kSecAttrLabel), (Key.comment, kSecAttrComment), (Key.accessGroup, kSecAttrAccessGroup),
            (Key.synchronizable, kSecAttrSynchronizable), (Key.accessible, kSecAttrAccessible), (Key.accessControl, kSecAttrAccessControl),
            (Key.creationDate, kSecAttrCreationDate), (Key.modificationDate, kSecAttrModificationDate),
            (Key.useDataProtectionKeychain, kSecUseDataProtectionKeychain), (Key.valueData, kSecValueData),
            (Key.matchLimit, kSecMatchLimit), (SecItemMapping.matchLimitOne, kSecMatchLimitOne), (SecItemMapping.matchLimitAll, kSecMatchLimitAll),
            (SecItemMapping.synchronizableAny, kSecAttrSynchronizableAny as! CFString),
            (SecItemMapping.classValue(.genericPassword), kSecClassGenericPassword), (SecItemMapping.classValue(.internetPassword), kSecClassInternetPassword),
            (SecItemMapping.classValue(.key), kSecClassKey), (SecItemMapping.classValue(.certificate), kSecClassCertificate),
            (SecItemMapping.accessibleValue(.whenUnlocked), kSecAttrAccessibleWhenUnlocked),
            (SecItemMapping.accessibleValue(.afterFirstUnlock), kSecAttrAccessibleAfterFirstUnlock),
            (SecItemMapping.accessibleValue(.whenUnlockedThisDeviceOnly), kSecAttrAccessibleWhenUnlockedThisDeviceOnly),
            (SecItemMapping.accessibleValue(.afterFirstUnlockThisDeviceOnly), kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly),
            (SecItemMapping.keyClassValue(.publicKey), kSecAttrKeyClassPublic), (SecItemMapping.keyClassValue(.privateKey), kSecAttrKeyClassPrivate),
            (SecItemMapping.keyClassValue(.symmetric), kSecAttrKeyClassSymmetric),
            (SecItemMapping.keyTypeValue("rsa") ?? "", kSecAttrKeyTypeRSA), (SecItemMapping.keyTypeValue("ec-p256") ?? "", kSecAttrKeyTypeECSECPrimeRandom),
            (SecItemMapping.protocols.first { $0.name == "https" }?.value ?? "", kSecAttrProtocolHTTPS),
            (SecItemMapping.protocols.first { $0.name == "ssh" }?.value ?? "", kSecAttrProtocolSSH),
        ]
        for (ours, theirs) in pairs { #expect(ours == theirs as String) }
    }
}
#endif
