import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferHummingbird
import Crypto
import Foundation
import Hummingbird
import HTTPTypes
import Logging
import NIOCore

/// A key that wraps stored data keys and HMAC secrets (envelope encryption): 32 bytes from a file or the
/// environment, never in the database. Each stored row names the master key that wrapped it; an
/// instance holds one or more of them in a ``ServerMasterKeyring`` (docs/SERVER.md, "The master keyring").
public struct ServerMasterKey: Sendable {
    private let key: SymmetricKey
    /// A public name for this key: the first 8 bytes of SHA-256 over a label and the key, hex. Stored
    /// beside each data key; reveals nothing of the key.
    public let keyID: String

    /// A master key from its 32 bytes.
    /// - Throws: ``ServerConfigurationError`` `.invalidMasterKey` for another length.
    public init(bytes: [UInt8]) throws(ServerConfigurationError) {
        guard bytes.count == 32 else {
            throw ServerConfigurationError(.invalidMasterKey, "the master key must be 32 bytes, found \(bytes.count)", hint: "32 random bytes, kept out of the database")
        }
        key = SymmetricKey(data: bytes)
        keyID = Hex.encode(DigestAlgorithm.sha256.hash(Array("coffer-master-key-id".utf8) + bytes).bytes.prefix(8))
    }

    /// The master key in the file at `path`: exactly 32 raw bytes, in a file only its owner can read
    /// (mode 0600 or 0400, checked on the file as opened). A file others can read has been exposed to
    /// them, whatever else protects the host, and is refused.
    /// - Throws: ``ServerConfigurationError`` `.exposedMasterKeyFile` for another mode (its hint is the
    ///   `chmod` to run); `.invalidMasterKey` when the file cannot be read or is not 32 bytes.
    public init(contentsOf path: String) throws(ServerConfigurationError) {
        var file: KeyFile
        do {
            file = try KeyFile(contentsOf: path)
        } catch {
            throw ServerConfigurationError(.invalidMasterKey, "cannot read the master key file '\(path)': \(error.reason)", underlying: error)
        }
        defer { file.wipe() }
        if let mode = file.permissions.map({ $0 & 0o777 }), mode != 0o600 && mode != 0o400 {
            let octal = String(mode, radix: 8)
            throw ServerConfigurationError(
                .exposedMasterKeyFile,
                "the master key file '\(path)' has mode \(String(repeating: "0", count: 4 - octal.count) + octal); expected 0600 or 0400 (its owner alone reads it)",
                hint: "chmod 600 '\(path)'"
            )
        }
        do {
            try self.init(bytes: file.bytes)
        } catch {
            throw ServerConfigurationError(.invalidMasterKey, "the master key file '\(path)' holds \(file.bytes.count) bytes; expected 32 raw bytes", hint: error.hint)
        }
    }

    /// A master key from its 32 bytes in base64 (surrounding white space ignored), as an environment
    /// variable carries it.
    /// - Throws: ``ServerConfigurationError`` `.invalidMasterKey` for text that is not base64 of 32 bytes.
    public init(base64Encoded text: String) throws(ServerConfigurationError) {
        guard var bytes = try? Base64.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ServerConfigurationError(.invalidMasterKey, "the master key is not base64", hint: "32 random bytes in base64")
        }
        defer { SecretBytes.wipe(&bytes) }
        try self.init(bytes: bytes)
    }

    /// AES-256-GCM of `dataKey` bound to `context`: nonce ‖ ciphertext ‖ tag, base64.
    func wrap(_ dataKey: [UInt8], context: [UInt8]) throws -> String {
        let box = try AES.GCM.seal(dataKey, using: key, authenticating: context)
        return Base64.encode(Array(box.combined ?? Data()))
    }

    /// The data key a row holds, or nil when it does not open (another master key, a changed row).
    func unwrap(_ wrapped: String, context: [UInt8]) -> [UInt8]? {
        guard let bytes = try? Base64.decode(wrapped), let box = try? AES.GCM.SealedBox(combined: bytes),
              let opened = try? AES.GCM.open(box, using: key, authenticating: context) else { return nil }
        return Array(opened)
    }
}

/// `POST /data-keys` and `POST /data-keys/rotate` (docs/SERVER.md, "Data keys"): a device, signing with
/// its registered key, gets its data key sealed to the encryption key it registered.
enum DataKeyRoutes {
    struct FetchBody: Decodable { let version: Int64? }

    static func add(
        to group: RouterGroup<HTTPSignatureContext>, store: any RegistrationStore, records: StoreKeyProvider, writer: MasterKeyWriter, scope: DataKeyScope,
        rotationsPerHour: Int?, uses: KeyUseRecorder, metrics: ServerMetrics
    ) {
        group.post("data-keys") { request, context -> Response in
            guard let device = context.verifiedSignature?.keyID else { return RegistrationServer.problem(.unauthorized, "missing-signature", "the request is not signed") }
            try await uses.noteUse(of: device)
            var request = request
            let body: FetchBody
            switch try await StrictJSON.read(&request, limit: 4096) {
            case .problem(let problem):
                return problem.response()
            case .bytes(let data) where data.isEmpty:
                body = FetchBody(version: nil)
            case .bytes(let data):
                switch StrictJSON.decode(FetchBody.self, from: data, allowed: ["version"]) {
                case .value(let decoded): body = decoded
                case .problem(let problem): return problem.response()
                }
            }
            return try await answer(
                device: device, version: body.version, rotate: false, scope: scope, store: store, records: records, writer: writer, context: context,
                rotationsPerHour: nil, metrics: metrics
            )
        }
        group.post("data-keys/rotate") { request, context -> Response in
            guard let device = context.verifiedSignature?.keyID else { return RegistrationServer.problem(.unauthorized, "missing-signature", "the request is not signed") }
            try await uses.noteUse(of: device)
            var request = request
            if let problem = try await StrictJSON.noFields(&request, limit: 4096) { return problem.response() }
            return try await answer(
                device: device, version: nil, rotate: true, scope: scope, store: store, records: records, writer: writer, context: context,
                rotationsPerHour: rotationsPerHour, metrics: metrics
            )
        }
    }

    /// Whose data key a device's requests reach: the device's own (its key id), or its user's
    /// (`user:<id>`); nil when the scope is per user and the device belongs to no user.
    static func owner(of device: RegisteredKey, scope: DataKeyScope) -> String? {
        switch scope {
        case .device: device.keyID
        case .user: device.userID.map { "user:\($0)" }
        }
    }

    static func noUser(_ keyID: String) -> Response {
        RegistrationServer.problem(
            .conflict, "no-user",
            "data keys here are per user, and the device '\(keyID.prefix(80))' belongs to no user: the backend links a device to its user (POST /admin/keys/{keyId}/user) after its own sign-in; signing up makes no device a member"
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
    static func make(owner: String, version: Int64, store: any RegistrationStore, writer: MasterKeyWriter, logger: Logger) async throws -> Making {
        var bytes = try SecureRandom.bytes(count: 32)
        defer { SecretBytes.wipe(&bytes) }
        let id = dataKeyID(owner: owner)
        for _ in 0..<2 {
            guard let masterKey = try await writer.wrappingKey(logger: logger) else { return .mayNotWrite }
            let wrapped = try masterKey.wrap(bytes, context: wrapContext(owner: owner, version: version, dataKeyID: id))
            let record = StoredDataKey(owner: owner, version: version, dataKeyID: id, wrapped: wrapped, masterKeyID: masterKey.keyID, createdAt: Int64(Date().timeIntervalSince1970))
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
    static func rotate(owner: String, limit: Int?, store: any RegistrationStore, writer: MasterKeyWriter, logger: Logger) async throws -> Rotation {
        for _ in 0..<maximumRotationTries {
            let newest = try await store.dataKey(owner: owner, version: nil)?.version ?? 0
            if let limit {
                let now = Int64(Date().timeIntervalSince1970)
                let recent = try await store.recentDataKeys(owner: owner, since: now - 3600)
                if recent.count >= limit { return .limited(recent, now: now) }
            }
            switch try await make(owner: owner, version: newest + 1, store: store, writer: writer, logger: logger) {
            case .made(let stored): return .rotated(stored)
            case .madeByAnother: continue
            case .mayNotWrite: return .mayNotWrite
            }
        }
        throw CofferCoreError(.ioFailure, "other rotations of \(owner) made every version this one tried (\(maximumRotationTries) tries)")
    }

    /// How many versions one rotation tries before it gives up to requests rotating at once.
    static let maximumRotationTries = 32

    static func answer(
        device deviceKeyID: String, version: Int64?, rotate rotating: Bool, scope: DataKeyScope, store: any RegistrationStore, records: StoreKeyProvider,
        writer: MasterKeyWriter, context: HTTPSignatureContext, rotationsPerHour: Int?, metrics: ServerMetrics
    ) async throws -> Response {
        // The record the signature check just read (at most the key cache's age old: a user an admin
        // linked the device to counts within that time, as a revocation does).
        guard let device = try await records.record(forKeyID: deviceKeyID), let encryptionKey = device.encryptionKey,
              let spki = try? Base64.decode(encryptionKey), let recipient = try? RecipientPublicKey(importing: spki) else {
            return RegistrationServer.problem(.conflict, "no-encryption-key", "this device registered no encryption key (X25519 or P-256) to seal its data key to")
        }
        guard let owner = owner(of: device, scope: scope) else { return noUser(deviceKeyID) }
        if let version, version < 1 {
            return RegistrationServer.problem(.badRequest, "invalid-request", "version must be 1 or more, found \(version)")
        }
        // One read for the floor, the newest and the asked version (the newest when none is named).
        let lookup = try await store.lookUpDataKey(owner: owner, version: rotating ? nil : version)
        let floor = lookup.minimumVersion
        let stored: StoredDataKey
        if rotating {
            switch try await rotate(owner: owner, limit: rotationsPerHour, store: store, writer: writer, logger: context.logger) {
            case .rotated(let made): stored = made
            case .mayNotWrite: return MasterKeyWriter.refusal()
            case .limited(let recent, let now):
                metrics.rateLimited("data-key-rotations")
                return RegistrationServer.tooManyRequests(
                    retryAfter: RegistrationServer.secondsUntilHourEnds(since: recent.oldest, now: now),
                    "\(recent.count) versions of this data key were made in the last hour, the most allowed"
                )
            }
            context.logger.notice("data key rotated", metadata: ["owner": .string(owner), "version": .stringConvertible(stored.version)])
        } else if let version {
            guard version >= floor else {
                return RegistrationServer.problem(.gone, "version-retired", "version \(version) of this data key is retired (the oldest kept is \(floor))")
            }
            guard let found = lookup.key else {
                return RegistrationServer.problem(.notFound, "unknown-version", "this data key has no version \(version)")
            }
            stored = found
        } else if let newest = lookup.key {
            stored = newest
        } else {
            switch try await make(owner: owner, version: 1, store: store, writer: writer, logger: context.logger) {
            case .made(let made):
                stored = made
                context.logger.info("data key created", metadata: ["owner": .string(owner)])
            case .madeByAnother(let made): stored = made
            case .mayNotWrite: return MasterKeyWriter.refusal()
            }
        }
        guard let masterKey = writer.keyring.key(id: stored.masterKeyID),
              var key = masterKey.unwrap(stored.wrapped, context: wrapContext(owner: owner, version: stored.version, dataKeyID: stored.dataKeyID)) else {
            context.logger.error(
                "a stored data key is wrapped under a master key this instance does not hold, or does not open with it",
                metadata: ["owner": .string(owner), "master": .string(stored.masterKeyID), "held": .string(writer.keyring.keyIDs.joined(separator: ","))]
            )
            return RegistrationServer.problem(.serviceUnavailable, "master-key-unavailable", "the server cannot open this data key now; try again later")
        }
        defer { SecretBytes.wipe(&key) }
        let envelope = try DataKeyEnvelope.seal(
            key, to: recipient, context: DataKeyEnvelope.context(dataKeyID: stored.dataKeyID, version: stored.version, deviceKeyID: deviceKeyID)
        )
        // Made a moment ago, it is the newest this request knows of.
        let newest = max(lookup.newestVersion ?? stored.version, stored.version)
        metrics.dataKeyIssued(rotating ? "rotated" : "fetched")
        return RegistrationServer.json(.ok, [
            "dataKeyId": .string(stored.dataKeyID), "version": .integer(stored.version), "envelope": .string(Base64.encode(envelope)),
            "newestVersion": .integer(newest), "minimumVersion": .integer(floor),
        ])
    }
}
