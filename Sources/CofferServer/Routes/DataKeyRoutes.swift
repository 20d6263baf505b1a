import CofferCore
import CofferFormats
import CofferCrypto
import CofferHummingbird
import Hummingbird

/// `POST /data-keys` and `POST /data-keys/rotate` (docs/SERVER.md, "Data keys"): a device, signing with
/// its registered key, gets its data key sealed to the encryption key it registered. Only with master
/// keys (``RegistrationServer/Options/masterKeys``).
struct DataKeyRoutes: Sendable {
    let parts: RouteParts
    let writer: MasterKeyWriter

    /// The routes over `parts`; nil when the server holds no master key.
    init?(_ parts: RouteParts) {
        guard let writer = parts.writer else { return nil }
        self.parts = parts
        self.writer = writer
    }

    /// The collection to add at the root.
    var routes: RouteCollection<HTTPSignatureContext> {
        let routes = RouteCollection(context: HTTPSignatureContext.self)
        let signed = parts.deviceSigned(routes)
        signed.post("data-keys", use: fetchKey)
        signed.post("data-keys/rotate", use: rotateKey)
        return routes
    }

    /// The body of `POST /data-keys`: the version wanted, or none for the newest.
    struct FetchBody: StrictRequestBody {
        static let fields: Set<String> = ["version"]
        static let emptyBodyIsEmptyObject = true
        let version: Int64?
    }

    /// `POST /data-keys` with `{"version"}` (optional).
    @Sendable func fetchKey(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let device = try context.signerKeyID()
        try await parts.uses.noteUse(of: device, now: parts.clock.wallSeconds())
        let body = try await request.decodeStrictly(as: FetchBody.self, limit: 4096)
        return try await issue(device: device, version: body.version, rotate: false, context: context)
    }

    /// `POST /data-keys/rotate`, with no fields.
    @Sendable func rotateKey(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let device = try context.signerKeyID()
        try await parts.uses.noteUse(of: device, now: parts.clock.wallSeconds())
        _ = try await request.decodeStrictly(as: NoFields.self, limit: 4096)
        return try await issue(device: device, version: nil, rotate: true, context: context)
    }

    /// The device's data key (version `version`, else the newest, made when there is none; or a new
    /// version when `rotating`), sealed to the encryption key it registered.
    func issue(device deviceKeyID: String, version: Int64?, rotate rotating: Bool, context: HTTPSignatureContext) async throws -> Response {
        let scope = parts.options.dataKeyScope, store = parts.store, metrics = parts.metrics
        let rotationsPerHour = rotating ? parts.options.dataKeyRotationsPerHour : nil
        // The record the signature check just read (at most the key cache's age old: a user an admin
        // linked the device to counts within that time, as a revocation does).
        guard let device = try await parts.keys.record(forKeyID: deviceKeyID), let encryptionKey = device.encryptionKey,
              let spki = try? Base64.decode(encryptionKey), let recipient = try? RecipientPublicKey(importing: spki) else {
            throw ProblemDetails(status: .conflict, reason: "no-encryption-key", detail: "this device registered no encryption key (X25519 or P-256) to seal its data key to")
        }
        guard let owner = try Self.owner(of: device, scope: scope) else { throw Self.noUser(deviceKeyID) }
        if let version, version < 1 {
            throw ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "version must be 1 or more, found \(version)")
        }
        // One read for the floor, the newest and the asked version (the newest when none is named).
        let lookup = try await store.lookUpDataKey(owner: owner.name, version: rotating ? nil : version)
        let floor = lookup.minimumVersion
        let stored: StoredDataKey
        if rotating {
            switch try await Self.rotate(owner: owner, limit: rotationsPerHour, clock: parts.clock, store: store, writer: writer, logger: context.logger) {
            case .rotated(let made): stored = made
            case .mayNotWrite: return MasterKeyWriter.refusal()
            case .limited(let recent, let now):
                metrics.rateLimited("data-key-rotations")
                return RegistrationServer.tooManyRequests(
                    retryAfter: RegistrationServer.secondsUntilHourEnds(since: recent.oldest, now: now),
                    "\(recent.count) versions of this data key were made in the last hour, the most allowed"
                )
            }
            context.logger.notice("data key rotated", metadata: ["owner": .string(owner.name), "version": .stringConvertible(stored.version)])
        } else if let version {
            guard version >= floor else {
                throw ProblemDetails(status: .gone, reason: "version-retired", detail: "version \(version) of this data key is retired (the oldest kept is \(floor))")
            }
            guard let found = lookup.key else {
                throw ProblemDetails(status: .notFound, reason: "unknown-version", detail: "this data key has no version \(version)")
            }
            stored = found
        } else if let newest = lookup.key {
            stored = newest
        } else {
            switch try await Self.make(owner: owner, version: 1, now: parts.clock.wallSeconds(), store: store, writer: writer, logger: context.logger) {
            case .made(let made):
                stored = made
                context.logger.info("data key created", metadata: ["owner": .string(owner.name)])
            case .madeByAnother(let made): stored = made
            case .mayNotWrite: return MasterKeyWriter.refusal()
            }
        }
        guard let masterKey = writer.keyring.key(id: stored.masterKeyID),
              var key = masterKey.unwrap(stored.wrapped, context: Self.wrapContext(owner: owner, version: stored.version, dataKeyID: stored.dataKeyID)) else {
            if owner.binding != nil, let masterKey = writer.keyring.key(id: stored.masterKeyID) {
                throw Self.unopened(stored, ofUser: owner, under: masterKey)
            }
            context.logger.error(
                "a stored data key is wrapped under a master key this instance does not hold, or does not open with it",
                metadata: ["owner": .string(owner.name), "master": .string(stored.masterKeyID), "held": .string(writer.keyring.keyIDs.joined(separator: ","))]
            )
            throw ProblemDetails(status: .serviceUnavailable, reason: "master-key-unavailable", detail: "the server cannot open this data key now; try again later")
        }
        defer { SecretBytes.wipe(&key) }
        let envelope = try DataKeyEnvelope.seal(
            key, to: recipient, context: DataKeyEnvelope.context(dataKeyID: stored.dataKeyID, version: stored.version, deviceKeyID: deviceKeyID)
        )
        // Made a moment ago, it is the newest this request knows of.
        let newest = max(lookup.newestVersion ?? stored.version, stored.version)
        metrics.dataKeyIssued(rotating ? "rotated" : "fetched")
        return JSONAnswer.response(.ok, [
            "dataKeyId": .string(stored.dataKeyID), "version": .integer(stored.version), "envelope": .string(Base64.encode(envelope)),
            "newestVersion": .integer(newest), "minimumVersion": .integer(floor),
        ])
    }
}
