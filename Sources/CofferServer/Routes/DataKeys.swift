import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes
import Logging
import NIOCore

/// What the data-key routes share with the admin API's data-key routes: whose key a device reaches,
/// making and rotating versions, and the answer that seals a version to the device.
/// Whose data key a device's requests reach, and what every version of it is bound to.
struct DataKeyOwner: Sendable, Hashable {
    /// The owner's name: a device's own key id, or `user:<id>`.
    let name: String
    /// For a user's key: the user record its versions are bound to (``KeyRecordTag/binding(of:)``), so
    /// that a version made for one user never opens for another given the same number. Nil for a device's
    /// own key, whose id is its public key's fingerprint and cannot be given again.
    let binding: String?
}

/// What the data-key routes share with the admin API's data-key routes: whose key a device reaches,
/// making and rotating versions, and the answer that seals a version to the device.
extension DataKeyRoutes {
    /// Whose data key a device's requests reach: the device's own (its key id), or its user's
    /// (`user:<id>`), bound to the user record the device's link names (covered by the key record's tag,
    /// which the signature check verified); nil when the scope is per user and the device belongs to no
    /// user. No user record is read: a version opens only under the binding it was made with, so a
    /// device linked to one record of a number never opens a version made for another, whichever record
    /// the database holds now.
    /// - Throws: ``ServerConfigurationError`` `.unauthenticRecord` for a link that names no record (an
    ///   earlier release made it).
    static func owner(of device: RegisteredKey, scope: DataKeyScope) throws(ServerConfigurationError) -> DataKeyOwner? {
        switch scope {
        case .device:
            return DataKeyOwner(name: device.keyID, binding: nil)
        case .user:
            guard let userID = device.userID else { return nil }
            guard let linked = device.userBinding else {
                throw ServerConfigurationError(
                    .unauthenticRecord,
                    "key '\(device.keyID.clipped(toUTF8: 80))' was linked to user \(userID) without naming the user's record (an earlier release linked it), and gets no per-user data key",
                    hint: "a rewrap asked to tag records without a tag binds the link to the user recorded now (docs/SERVER.md, \"Authenticated key records\")"
                )
            }
            return DataKeyOwner(name: userOwner(userID), binding: linked)
        }
    }

    /// The owner name of user `id`'s data key.
    static func userOwner(_ id: Int64) -> String { "user:\(id)" }

    /// The user number an owner name gives, or nil for a device's own key.
    static func userNumber(ofOwner owner: String) -> Int64? {
        guard owner.hasPrefix("user:"), let id = Int64(owner.dropFirst(5)), userOwner(id) == owner else { return nil }
        return id
    }

    static func noUser(_ keyID: String) -> ProblemDetails {
        ProblemDetails(
            status: .conflict, reason: "no-user",
            detail: "data keys here are per user, and the device '\(keyID.clipped(toUTF8: 80))' belongs to no user: the backend links a device to its user (POST /admin/keys/{keyId}/user) after its own sign-in; signing up makes no device a member"
        )
    }

    /// The owner's data key id: the same for every version.
    static func dataKeyID(owner: String) -> String { "dk_" + Hex.encode(DigestAlgorithm.sha256.hash(owner).bytes.prefix(8)) }

    /// What a version's wrapping under a master key is bound to (docs/SERVER.md, "Data keys", at rest):
    /// `coffer-data-key-wrap v1:<owner>:<version>:<dataKeyId>` for a device's own key (and a user's
    /// key made before user keys were bound), `coffer-data-key-wrap v2:<owner>:<version>:<dataKeyId>:<binding>`
    /// for a user's key.
    static func wrapContext(owner: String, version: Int64, dataKeyID: String, binding: String?) -> [UInt8] {
        guard let binding else { return Array("coffer-data-key-wrap v1:\(owner):\(version):\(dataKeyID)".utf8) }
        return Array("coffer-data-key-wrap v2:\(owner):\(version):\(dataKeyID):\(binding)".utf8)
    }

    static func wrapContext(owner: DataKeyOwner, version: Int64, dataKeyID: String) -> [UInt8] {
        wrapContext(owner: owner.name, version: version, dataKeyID: dataKeyID, binding: owner.binding)
    }

    /// Why a version of a user's key does not open with the master key it names, for the log (the
    /// client gets `503`): made before user keys were bound (it opens under the unbound context, and is
    /// wiped at once), or for another record of the user's number.
    static func unopened(_ stored: StoredDataKey, ofUser owner: DataKeyOwner, under masterKey: ServerMasterKey) -> ServerConfigurationError {
        let named = "version \(stored.version) of \(owner.name)'s data key"
        let unbound = wrapContext(owner: owner.name, version: stored.version, dataKeyID: stored.dataKeyID, binding: nil)
        if var bytes = masterKey.unwrap(stored.wrapped, context: unbound) {
            SecretBytes.wipe(&bytes)
            return ServerConfigurationError(
                .unauthenticRecord, "\(named) is bound to no user record (an earlier release made it), and is not handed out",
                hint: "a rewrap asked to tag records without a tag binds it to the user recorded now (docs/SERVER.md, \"Authenticated key records\")"
            )
        }
        return ServerConfigurationError(
            .unauthenticRecord, "\(named) was made for another record of that user number, or the row was changed: a user deleted and their number given again outside Coffer"
        )
    }


    /// What making one version of an owner's key came to.
    enum Making {
        /// This request made it.
        case made(StoredDataKey)
        /// Another request made this version first: the version as stored.
        case madeByAnother(StoredDataKey)
        /// This instance lacks the wrapping master key: nothing written (logged).
        case mayNotWrite
    }

    /// Makes version `version` of the owner's key under the fleet's wrapping master key, or finds the
    /// one another request made first. The insert checks the key again: a promotion landing between the
    /// two is tried once more under the new key.
    static func make(owner: DataKeyOwner, version: Int64, now: Int64, store: any RegistrationStore, writer: MasterKeyWriter, logger: Logger) async throws -> Making {
        var bytes = try SecureRandom.bytes(count: 32)
        defer { SecretBytes.wipe(&bytes) }
        let id = dataKeyID(owner: owner.name)
        for _ in 0..<2 {
            guard let masterKey = try await writer.wrappingKey(logger: logger) else { return .mayNotWrite }
            let wrapped = try masterKey.wrap(bytes, context: wrapContext(owner: owner, version: version, dataKeyID: id))
            let record = StoredDataKey(owner: owner.name, version: version, dataKeyID: id, wrapped: wrapped, masterKeyID: masterKey.keyID, createdAt: now)
            if let stored = try await store.insertDataKey(record) {
                // A fresh nonce in every wrapping: the same bytes stored are this request's own.
                return stored.wrapped == record.wrapped ? .made(stored) : .madeByAnother(stored)
            }
        }
        logger.error("the database's wrapping master key kept changing: the data key was not written", metadata: ["owner": .string(owner.name)])
        return .mayNotWrite
    }

    /// What a rotation came to.
    enum Rotation {
        /// This request made a new version, the newest.
        case rotated(StoredDataKey)
        /// The owner's versions made in the last hour reached the limit (their count and the oldest's time).
        case limited(RecentActivity, now: Int64)
        /// This instance lacks the wrapping master key: nothing written (logged).
        case mayNotWrite
    }

    /// Rotates an owner's key: makes a version after the newest (the first when there is none) that is
    /// this request's alone. Rotations at once each make their own version: one that loses a version to
    /// another request reads the newest again and tries the next. `limit` (versions an hour) is checked
    /// before every try, after the newest is read, so versions made at once never pass it.
    static func rotate(owner: DataKeyOwner, limit: Int?, clock: ServerClock, store: any RegistrationStore, writer: MasterKeyWriter, logger: Logger) async throws -> Rotation {
        for _ in 0..<maximumRotationTries {
            let newest = try await store.dataKey(owner: owner.name, version: nil)?.version ?? 0
            let now = clock.wallSeconds()
            if let limit {
                let recent = try await store.recentDataKeys(owner: owner.name, since: now - 3600)
                if recent.count >= limit { return .limited(recent, now: now) }
            }
            switch try await make(owner: owner, version: newest + 1, now: now, store: store, writer: writer, logger: logger) {
            case .made(let stored): return .rotated(stored)
            case .madeByAnother: continue
            case .mayNotWrite: return .mayNotWrite
            }
        }
        throw CofferCoreError(.ioFailure, "other rotations of \(owner.name) made every version this one tried (\(maximumRotationTries) tries)")
    }

    /// How many versions one rotation tries before it gives up to requests rotating at once.
    static let maximumRotationTries = 32
}
