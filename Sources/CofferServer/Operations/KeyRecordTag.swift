import CofferCore
import CofferCrypto
import Foundation

/// A key record's authentication tag (docs/SERVER.md, "Authenticated key records"):
/// `tag-v1:<master key id>:<base64 of HMAC-SHA256>`, made under a key derived from a master key, over
/// every field a decision reads. The database stores it and cannot make it: a row whose public key,
/// encryption key, owner, state or secret was changed outside Coffer no longer matches its tag.
enum KeyRecordTag {
    static let prefix = "tag-v1:"
    /// What the authenticated bytes start with, so that they mean a key record and nothing else.
    static let label = "coffer-key-record v1"

    /// The bytes a tag authenticates: the label, a zero byte, then each field in order (key id,
    /// algorithm, public key, secret, encryption key, user id, state, creation time), 0x00 when absent,
    /// else 0x01, its UTF-8 length as 4 bytes big-endian and its UTF-8 (numbers in decimal); then, for
    /// a link that names the user's record, that record's binding as a ninth field.
    static func message(of record: RegisteredKey) -> [UInt8] {
        message(label, [
            record.keyID, record.algorithm.rawValue, record.publicKey, record.secret, record.encryptionKey,
            record.userID.map(String.init), record.state.rawValue, String(record.createdAt),
        ] + (record.userBinding.map { [$0] } ?? []))
    }

    /// Which record of a user a device is linked to and a per-user data key was made for: the
    /// SHA-256, hex, of the bytes the user record's tag authenticates (its number, address, name,
    /// creator and creation time). A user number given again (users deleted and the sequence wound
    /// back outside Coffer) makes another record, and another binding.
    static func binding(of user: RegisteredUser) -> String {
        Hex.encode(DigestAlgorithm.sha256.hash(message(of: user)).bytes)
    }

    /// What a user record's tag covers first.
    static let userLabel = "coffer-user-record v1"

    /// The bytes a user record's tag authenticates: ``userLabel``, a zero byte, then its number, address,
    /// name, creator key id and creation time, encoded as a key record's fields.
    static func message(of user: RegisteredUser) -> [UInt8] {
        message(userLabel, [String(user.id), user.email, user.name, user.keyID, String(user.createdAt)])
    }

    private static func message(_ label: String, _ fields: [String?]) -> [UInt8] {
        var bytes = Array(label.utf8) + [0]
        for field in fields {
            guard let field else {
                bytes.append(0)
                continue
            }
            let utf8 = Array(field.utf8)
            bytes.append(1)
            bytes += BigEndian.bytes(UInt32(truncatingIfNeeded: utf8.count))
            bytes += utf8
        }
        return bytes
    }

    /// `record`'s tag under `key`.
    static func make(_ record: RegisteredKey, under key: ServerMasterKey) -> String {
        make(message(of: record), under: key)
    }

    /// `user`'s tag under `key`.
    static func make(_ user: RegisteredUser, under key: ServerMasterKey) -> String {
        make(message(of: user), under: key)
    }

    private static func make(_ message: [UInt8], under key: ServerMasterKey) -> String {
        prefix + key.keyID + ":" + Base64.encode(key.recordTag(message))
    }

    /// What every tag made under `masterKeyID` starts with.
    static func marker(_ masterKeyID: String) -> String { prefix + masterKeyID + ":" }

    /// The master key id a stored tag names.
    /// - Throws: ``ServerConfigurationError`` `.unauthenticRecord` for a value that is not a tag.
    static func parts(of tag: String, keyID: String) throws(ServerConfigurationError) -> (masterKeyID: String, mac: [UInt8]) {
        try parts(of: tag, name: "key '\(keyID.clipped(toUTF8: 80))'")
    }

    static func parts(of tag: String, name: String) throws(ServerConfigurationError) -> (masterKeyID: String, mac: [UInt8]) {
        let rest = tag.hasPrefix(prefix) ? tag.dropFirst(prefix.count) : ""
        let id = rest.prefix(WrappedSecret.masterKeyIDLength)
        guard id.count == WrappedSecret.masterKeyIDLength, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              rest.dropFirst(id.count).first == ":",
              let mac = try? Base64.decode(String(rest.dropFirst(id.count + 1))), mac.count == 32 else {
            throw ServerConfigurationError(.unauthenticRecord, "the record of \(name) carries a tag that does not parse: it was written outside Coffer")
        }
        return (String(id), mac)
    }

    /// Checks `record` against its tag under `keyring` (an instance with master keys): the tag must be
    /// present, made under a key the keyring holds, and match every field; a secret must be wrapped.
    /// - Throws: ``ServerConfigurationError`` `.unauthenticRecord` for a record without a tag, with a
    ///   tag that does not match, or with a secret in clear; `.masterKeyUnavailable` for a tag made
    ///   under a master key the keyring lacks.
    static func check(_ record: RegisteredKey, keyring: ServerMasterKeyring) throws(ServerConfigurationError) {
        try check(record.tag, of: message(of: record), named: "key '\(record.keyID.clipped(toUTF8: 80))'", keyring: keyring)
        if let secret = record.secret, !secret.hasPrefix(WrappedSecret.prefix) {
            throw ServerConfigurationError(.unauthenticRecord, "the record of key '\(record.keyID.clipped(toUTF8: 80))' holds its secret in clear, and the database records a master keyring")
        }
    }

    /// Checks `user` against its tag under `keyring`, as a key record is checked.
    static func check(_ user: RegisteredUser, keyring: ServerMasterKeyring) throws(ServerConfigurationError) {
        try check(user.tag, of: message(of: user), named: "user \(user.id)", keyring: keyring)
    }

    private static func check(_ tag: String?, of message: [UInt8], named name: String, keyring: ServerMasterKeyring) throws(ServerConfigurationError) {
        guard let tag else {
            throw ServerConfigurationError(
                .unauthenticRecord, "the record of \(name) carries no tag, and the database records a master keyring: it was written outside Coffer, or before the upgrade",
                hint: "if an earlier release wrote it, a rewrap asked to tag records without a tag tags it (docs/SERVER.md, \"Authenticated key records\")"
            )
        }
        let (masterKeyID, mac) = try parts(of: tag, name: name)
        guard let key = keyring.key(id: masterKeyID) else {
            throw ServerConfigurationError(.masterKeyUnavailable, "the record of \(name) is tagged under master key \(masterKeyID), which this instance does not hold")
        }
        guard key.isRecordTag(mac, of: message) else {
            throw ServerConfigurationError(.unauthenticRecord, "the record of \(name) does not match its tag: it was changed outside Coffer")
        }
    }
}

/// How a store keeps key records authenticated while it changes them (docs/SERVER.md, "Authenticated
/// key records"): the record as read is checked against its tag, and the record as written is tagged
/// under the keyring's wrapping key, in the same transaction. Routes of an instance with master keys
/// pass one to every change of a key record; an instance without master keys passes none, and its
/// records carry no tag.
public struct KeyRecordTagging: Sendable {
    /// The master keys whose tags are accepted.
    let keyring: ServerMasterKeyring
    /// The key new tags are made under: the keyring's wrapping key as recorded when this was made.
    let key: ServerMasterKey

    /// Tagging under `keyring`'s key `wrappingKeyID`.
    /// - Throws: ``ServerConfigurationError`` `.masterKeyringMismatch` when the keyring lacks that key.
    public init(keyring: ServerMasterKeyring, wrappingKeyID: String) throws(ServerConfigurationError) {
        guard let key = keyring.key(id: wrappingKeyID) else { throw ServerMasterKeyring.mismatch(keyring, recorded: []) }
        self.init(keyring: keyring, key: key)
    }

    init(keyring: ServerMasterKeyring, key: ServerMasterKey) {
        self.keyring = keyring
        self.key = key
    }

    /// The id of the master key new tags are made under; a store writes a tagged record only while the
    /// keyring records it as wrapping.
    public var masterKeyID: String { key.keyID }

    /// Checks a record as read from the store.
    /// - Throws: ``ServerConfigurationError`` `.unauthenticRecord` (no tag, a tag that does not match,
    ///   a secret in clear) or `.masterKeyUnavailable` (a tag under a key the keyring lacks): the record
    ///   must not be used, nor its change tagged.
    public func check(_ record: RegisteredKey) throws(ServerConfigurationError) {
        try KeyRecordTag.check(record, keyring: keyring)
    }

    /// `record` with its tag made under ``masterKeyID``.
    public func tagged(_ record: RegisteredKey) -> RegisteredKey {
        record.replacing(tag: KeyRecordTag.make(record, under: key))
    }

    /// Checks a user record as read from the store.
    /// - Throws: as ``check(_:)-(RegisteredKey)``.
    public func check(_ user: RegisteredUser) throws(ServerConfigurationError) {
        try KeyRecordTag.check(user, keyring: keyring)
    }

    /// The binding of the user record the admin's link was decided on (``expecting(userBinding:)``):
    /// a link lands only on that record.
    private(set) var expectedUserBinding: String?

    /// This tagging, for a link that must land on the user record whose binding is `binding`.
    func expecting(userBinding binding: String) -> KeyRecordTagging {
        var expecting = self
        expecting.expectedUserBinding = binding
        return expecting
    }

    /// Which record of user `number` a link to it names (``KeyRecordTag/binding(of:)``), from the rows
    /// the link's transaction read under that number, the one checked first; nil for none (the link
    /// then changes nothing).
    /// - Throws: ``ServerConfigurationError`` `.unauthenticRecord` for more than one row, or a record
    ///   other than the one the link was decided on; as ``check(_:)-(RegisteredUser)``.
    func binding(ofUser number: Int64, rows users: [RegisteredUser]) throws(ServerConfigurationError) -> String? {
        guard let user = users.first else { return nil }
        guard users.count == 1 else {
            throw ServerConfigurationError(.unauthenticRecord, "the database holds \(users.count) users numbered \(number): they were written outside Coffer")
        }
        try check(user)
        let binding = KeyRecordTag.binding(of: user)
        if let expectedUserBinding, expectedUserBinding != binding {
            throw ServerConfigurationError(
                .unauthenticRecord, "user \(number) is not the record the link was decided on (its address was checked a moment before): it was changed outside Coffer"
            )
        }
        return binding
    }

    /// `user` with its tag made under ``masterKeyID``.
    public func tagged(_ user: RegisteredUser) -> RegisteredUser {
        var tagged = user
        tagged.tag = KeyRecordTag.make(user, under: key)
        return tagged
    }
}
