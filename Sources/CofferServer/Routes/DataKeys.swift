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
extension DataKeyRoutes {
    /// Whose data key a device's requests reach: the device's own (its key id), or its user's
    /// (`user:<id>`); nil when the scope is per user and the device belongs to no user.
    static func owner(of device: RegisteredKey, scope: DataKeyScope) -> String? {
        switch scope {
        case .device: device.keyID
        case .user: device.userID.map { "user:\($0)" }
        }
    }

    static func noUser(_ keyID: String) -> ProblemDetails {
        ProblemDetails(
            status: .conflict, reason: "no-user",
            detail: "data keys here are per user, and the device '\(keyID.prefix(80))' belongs to no user: the backend links a device to its user (POST /admin/keys/{keyId}/user) after its own sign-in; signing up makes no device a member"
        )
    }

    /// The owner's data key id: the same for every version.
    static func dataKeyID(owner: String) -> String { "dk_" + Hex.encode(DigestAlgorithm.sha256.hash(owner).bytes.prefix(8)) }

    static func wrapContext(owner: String, version: Int64, dataKeyID: String) -> [UInt8] {
        Array("coffer-data-key-wrap v1:\(owner):\(version):\(dataKeyID)".utf8)
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
    static func make(owner: String, version: Int64, now: Int64, store: any RegistrationStore, writer: MasterKeyWriter, logger: Logger) async throws -> Making {
        var bytes = try SecureRandom.bytes(count: 32)
        defer { SecretBytes.wipe(&bytes) }
        let id = dataKeyID(owner: owner)
        for _ in 0..<2 {
            guard let masterKey = try await writer.wrappingKey(logger: logger) else { return .mayNotWrite }
            let wrapped = try masterKey.wrap(bytes, context: wrapContext(owner: owner, version: version, dataKeyID: id))
            let record = StoredDataKey(owner: owner, version: version, dataKeyID: id, wrapped: wrapped, masterKeyID: masterKey.keyID, createdAt: now)
            if let stored = try await store.insertDataKey(record) {
                // A fresh nonce in every wrapping: the same bytes stored are this request's own.
                return stored.wrapped == record.wrapped ? .made(stored) : .madeByAnother(stored)
            }
        }
        logger.error("the database's wrapping master key kept changing: the data key was not written", metadata: ["owner": .string(owner)])
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
    static func rotate(owner: String, limit: Int?, clock: ServerClock, store: any RegistrationStore, writer: MasterKeyWriter, logger: Logger) async throws -> Rotation {
        for _ in 0..<maximumRotationTries {
            let newest = try await store.dataKey(owner: owner, version: nil)?.version ?? 0
            let now = clock.wallSeconds()
            if let limit {
                let recent = try await store.recentDataKeys(owner: owner, since: now - 3600)
                if recent.count >= limit { return .limited(recent, now: now) }
            }
            switch try await make(owner: owner, version: newest + 1, now: now, store: store, writer: writer, logger: logger) {
            case .made(let stored): return .rotated(stored)
            case .madeByAnother: continue
            case .mayNotWrite: return .mayNotWrite
            }
        }
        throw CofferCoreError(.ioFailure, "other rotations of \(owner) made every version this one tried (\(maximumRotationTries) tries)")
    }

    /// How many versions one rotation tries before it gives up to requests rotating at once.
    static let maximumRotationTries = 32
}
