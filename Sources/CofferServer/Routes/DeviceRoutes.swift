import CofferHTTPSignatures
import CofferHummingbird
import CofferServerWire
import Hummingbird

/// The routes a registered device signs with its key (docs/SERVER.md): `POST /register_user` and `POST
/// /encryption-key`. Each request passes the per-address failure limit and the signature check (the
/// server's one ``RegistrationServer/policy``) before its route; the data-key routes are
/// ``DataKeyRoutes``.
struct DeviceRoutes: Sendable {
    let parts: RouteParts

    init(_ parts: RouteParts) {
        self.parts = parts
    }

    /// The collection to add at the root.
    var routes: RouteCollection<HTTPSignatureContext> {
        let routes = RouteCollection(context: HTTPSignatureContext.self)
        // The user and the signature's replay record are written in one transaction: one write per
        // request instead of two, and a request that fails to be stored can be sent again.
        parts.deviceSigned(routes, defersReplayRecord: true).post("register_user", use: registerUser)
        parts.deviceSigned(routes).post("encryption-key", use: changeEncryptionKey)
        return routes
    }

    /// The body of `POST /register_user`.
    struct UserBody {
        let email: String
        let name: String
    }

    /// `POST /register_user` with `{"email", "name"}`: `201` with the user, `409 email-exists`. The key's
    /// use is recorded for every answer the route itself gives (a refused body too).
    @Sendable func registerUser(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let keyID = try context.signerKeyID()
        let response: Response
        do {
            response = try await insertUser(request, context: context, keyID: keyID)
        } catch let problem as ProblemDetails {
            try await parts.uses.noteUse(of: keyID, now: parts.clock.wallSeconds())
            throw problem
        }
        try await parts.uses.noteUse(of: keyID, now: parts.clock.wallSeconds())
        return response
    }

    /// The user `POST /register_user` asks for, inserted with the signature's replay record.
    private func insertUser(_ request: Request, context: HTTPSignatureContext, keyID: String) async throws -> Response {
        // One JSONSerialization pass (StrictJSON.strings): the Codable path took 30–45 µs more server CPU
        // a request under load (docs/PERFORMANCE.md).
        let fields = try StrictJSON.strings(["email", "name"], from: try await request.strictJSONBody(limit: 64 * 1024)).get()
        let body = UserBody(email: fields[0], name: fields[1])
        let email: String
        let name: String
        switch (UserFields.email(body.email), UserFields.name(body.name)) {
        case (.success(let address), .success(let text)):
            (email, name) = (address, text)
        case (.failure(let refusal), _), (_, .failure(let refusal)):
            throw ProblemDetails(status: .badRequest, reason: refusal.reason, detail: refusal.detail)
        }
        let createdAt = parts.clock.wallSeconds()
        let limit = parts.options.signUpsPerKey
        // Only the obligation is taken out of the verified signature (a copy of all of it retains each of
        // its strings); its label is read again only for a replay.
        let replay = context.verifiedSignature?.replayObligation?.take()
        let user: RegisteredUser
        let tagging = try await MasterKeyWriter.tagging(parts.writer, logger: context.logger)
        switch try await parts.store.insertUser(
            email: email, name: name, keyID: keyID, createdAt: createdAt, recordingFirstUse: replay, signUpsPerKey: limit, tagging: tagging
        ) {
        case .inserted(let inserted): user = inserted
        case .emailExists: throw ProblemDetails(status: .conflict, reason: "email-exists", detail: "this email address is already registered")
        case .replayed: throw HTTPMessageVerifier.replayed(label: context.verifiedSignature?.label ?? "")
        case .limited:
            // A limit in all, not per hour: no time to try again in, so not a 429.
            throw ProblemDetails(
                status: .conflict, reason: "sign-up-limit",
                detail: "this key signed up \(limit ?? 0) users, the most one key may sign up on this server"
            )
        }
        return JSONAnswer.response(.created, ["id": .integer(user.id), "email": .string(user.email), "name": .string(user.name), "keyId": .string(user.keyID)])
    }

    /// The body of `POST /encryption-key`.
    struct EncryptionKeyBody: StrictRequestBody {
        static let fields: Set<String> = ["encryptionKey"]
        let encryptionKey: String
    }

    /// `POST /encryption-key` (docs/SERVER.md, "A device's encryption key"): a device adds or replaces
    /// the key its data keys are sealed to; each change is logged and kept in the key's history, at most
    /// ``RegistrationServer/Options/encryptionKeyChangesPerHour`` an hour.
    @Sendable func changeEncryptionKey(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let keyID = try context.signerKeyID()
        let now = parts.clock.wallSeconds()
        try await parts.uses.noteUse(of: keyID, now: now)
        let body = try await request.decodeStrictly(as: EncryptionKeyBody.self, limit: 4096)
        let stored: String
        switch EncryptionKeyIdentity.stored(fromPEM: body.encryptionKey) {
        case .stored(let der): stored = der
        case .refused(let problem): throw problem
        }
        // The count and the change in one transaction (serialized per key across instances): changes
        // sent at once never pass the limit together.
        let change: EncryptionKeyChange
        let tagging = try await MasterKeyWriter.tagging(parts.writer, logger: context.logger)
        switch try await parts.store.setEncryptionKey(stored, ofKey: keyID, at: now, changesPerHour: parts.options.encryptionKeyChangesPerHour, tagging: tagging) {
        case .set(let made): change = made
        case .unknownKey: throw ProblemDetails.unknownKey(keyID)
        case .limited(let recent):
            parts.metrics.rateLimited("encryption-key-changes")
            return RegistrationServer.tooManyRequests(
                retryAfter: RegistrationServer.secondsUntilHourEnds(since: recent.oldest, now: now),
                "this key's encryption key changed \(recent.count) times in the last hour, the most allowed"
            )
        }
        let id = EncryptionKeyIdentity.id(ofStored: stored) ?? ""
        if change.changed {
            context.logger.notice("a device changed its encryption key", metadata: [
                "keyid": .string(keyID), "from": .string(EncryptionKeyIdentity.id(ofStored: change.previous) ?? "none"), "to": .string(id),
            ])
        }
        return JSONAnswer.response(.ok, EncryptionKeyUpdate(keyId: keyID, encryptionKeyId: id, changed: change.changed))
    }
}
