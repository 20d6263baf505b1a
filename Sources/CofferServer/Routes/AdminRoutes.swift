import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import CofferHummingbird
import CofferServerWire
import Foundation
import Hummingbird
import HTTPTypes

/// The admin API (docs/SERVER.md): every request signed (RFC 9421) by one of the admin keys the server
/// was started with, covering `@method`, `@target-uri` and `content-digest`, with `created`, and
/// recorded in the replay cache. An admin key's `keyid` is its Coffer key id (`KeyFingerprint.keyID`).
/// Every request not verified as an admin's is answered as a path the server does not have
/// (``AdminOnly``).
///
/// - `GET /admin/keys`: the allow-list, `{"keys": [{"keyId", "algorithm", "state", "createdAt", "lastUsedAt"}]}`.
/// - `POST /admin/keys/{keyId}/disable`, `…/enable`, `…/revoke`: the key's record afterwards; `404`
///   `unknown-key`; enabling a revoked key is `409` `key-revoked` (revocation is final).
/// - `POST /admin/tokens` with `{"uses": 1, "expiresIn": 86400, "platform": "ios"}` (all optional):
///   `201 {"tokenId", "token", "uses", "expiresAt", "platform"}` — the only time the token is shown.
/// - `GET /admin/tokens`: `{"tokens": [{"tokenId", "uses", "usesLeft", "expiresAt", "platform", "revoked", "createdAt"}]}`.
/// - `POST /admin/tokens/{tokenId}/revoke`: `200`, or `404` `unknown-token`.
struct AdminRoutes: Sendable {
    /// The most records a listing of tokens returns; keys and users come a page at a time, a page ending
    /// at `Options.adminPage`'s records or bytes, whichever comes first, so that no listing is built
    /// larger than that whatever the records hold.
    static let listLimit = 10_000
    let parts: RouteParts

    /// The admin API over `parts`; nil when the server has no admin key.
    init?(_ parts: RouteParts) {
        guard !parts.adminKeys.isEmpty else { return nil }
        self.parts = parts
    }

    /// The collection to add at `admin`: ``AdminOnly``, the failure limit, the admin signature check
    /// (the server's one policy over the admin keys, bodies up to 16 KiB), then the routes.
    var routes: RouteCollection<HTTPSignatureContext> {
        let routes = RouteCollection(context: HTTPSignatureContext.self).add(middleware: AdminOnly())
        if let limit = parts.signatureFailures { routes.add(middleware: limit) }
        routes.add(middleware: parts.signatureCheck(keys: HTTPStaticKeys(parts.adminKeys), maximumBodySize: 16 * 1024))
        routes.add(middleware: SignerNote())
        routes.add(middleware: ProblemAnswers())
        routes.get("keys", use: listKeys)
        routes.get("keys/:keyId/events", use: listEvents)
        routes.get("users", use: listUsers)
        for state in [RegisteredKey.State.disabled, .active, .revoked] {
            routes.post("keys/:keyId/\(Self.action(setting: state))") { request, context in
                try await setState(state, request, context: context)
            }
        }
        routes.post("keys/:keyId/user", use: linkKey)
        routes.post("tokens", use: issueToken)
        routes.get("tokens", use: listTokens)
        routes.post("tokens/:tokenId/revoke", use: revokeToken)
        if parts.writer != nil {
            routes.post("data-keys/:keyId/rotate", use: rotateDataKey)
            routes.post("data-keys/:keyId/retire", use: retireDataKeys)
        }
        return routes
    }

    /// The path's verb for the route that sets a key to `state`.
    static func action(setting state: RegisteredKey.State) -> String {
        switch state {
        case .active: "enable"
        case .disabled: "disable"
        case .revoked: "revoke"
        }
    }

    /// Who did it, as a key's history names an admin.
    static func actor(_ context: HTTPSignatureContext) -> String { "admin:" + (context.verifiedSignature?.keyID ?? "?") }

    /// The key the path names, as stored.
    /// - Throws: ``ProblemDetails/unknownKey(_:)``.
    func pathKey(_ name: String, context: HTTPSignatureContext) async throws -> (id: String, key: RegisteredKey) {
        let keyID = try context.parameters.require(name)
        guard let key = try await parts.store.key(id: keyID) else { throw ProblemDetails.unknownKey(keyID) }
        return (keyID, key)
    }

    /// `GET /admin/keys?after=`: the allow-list, a page at a time.
    @Sendable func listKeys(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let after = try request.uri.queryParameters["after"].map { text throws(ProblemDetails) in
            guard let position = KeyListPosition(String(text)) else { throw Self.invalidCursor("a key listing's next, <createdAt>.<keyId>") }
            return position
        }
        let keys = try await parts.store.keys(after: after, limit: parts.options.adminPage.records + 1)
        let (page, more) = try boundedPage(keys.map(AdminKeyRecord.init))
        return JSONAnswer.response(.ok, AdminKeyList(keys: page, next: more ? KeyListPosition(after: keys[page.count - 1]).text : nil))
    }

    /// The records of one page: as many of `records` as fit in the page's bounds (at least one), and
    /// whether any is left for the next page.
    func page<Record: Encodable>(_ records: [Record]) -> (page: [Record], more: Bool) {
        let bounds = parts.options.adminPage
        var bytes = 0
        var count = 0
        for record in records.prefix(bounds.records) {
            bytes += JSONAnswer.size(of: record) + 1
            if bytes > bounds.bytes && count > 0 { break }
            count += 1
        }
        return (Array(records.prefix(count)), count < records.count)
    }

    /// `page`, refusing a first record larger than a whole page: no record Coffer writes comes near it,
    /// so it was written outside Coffer (answered `503`, the listing not built).
    func boundedPage<Record: Encodable>(_ records: [Record]) throws(ServerConfigurationError) -> (page: [Record], more: Bool) {
        if let first = records.first, JSONAnswer.size(of: first) > parts.options.adminPage.bytes {
            throw ServerConfigurationError(.invalidRecord, "a stored record is larger than a listing's page (\(parts.options.adminPage.bytes) bytes): it was written outside Coffer")
        }
        return page(records)
    }

    static func invalidCursor(_ what: String) -> ProblemDetails {
        ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "after must be \(what)")
    }

    /// `GET /admin/keys/{keyId}/events`: the key's history.
    @Sendable func listEvents(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let (keyID, _) = try await pathKey("keyId", context: context)
        return JSONAnswer.response(.ok, AdminKeyEventList(events: try await parts.store.events(ofKey: keyID, limit: 1_000).map(AdminKeyEvent.init)))
    }

    /// `GET /admin/users?email=`: the users with that address; `GET /admin/users?after=`: every user,
    /// a page at a time.
    @Sendable func listUsers(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        if let email = request.uri.queryParameters["email"].map(String.init) {
            guard email.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }), email.utf8.count <= 1024 else {
                throw ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "email must be an address, without control characters")
            }
            // The look-up a link is decided on: each user found is checked against its tag, and its
            // address, as tagged, must be the one asked for (the comparison column is not tagged).
            let key = UserFields.emailKey(email)
            let users = try await parts.store.users(email: email, limit: 100)
            for user in users {
                try parts.options.masterKeys.map { keyring throws(ServerConfigurationError) in try KeyRecordTag.check(user, keyring: keyring) }
                guard user.email == email || UserFields.emailKey(user.email) == key else {
                    throw ServerConfigurationError(.unauthenticRecord, "user \(user.id) was found by an address its record does not hold: it was changed outside Coffer")
                }
            }
            let (found, _) = try boundedPage(users.map(AdminUserRecord.init))
            return JSONAnswer.response(.ok, AdminUserList(users: found))
        }
        let after = try request.uri.queryParameters["after"].map { text throws(ProblemDetails) in
            guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let id = Int64(String(text)) else {
                throw Self.invalidCursor("a user listing's next, a user number")
            }
            return id
        }
        let users = try await parts.store.users(after: after, limit: parts.options.adminPage.records + 1)
        let (page, more) = try boundedPage(users.map(AdminUserRecord.init))
        return JSONAnswer.response(.ok, AdminUserList(users: page, next: more ? String(users[page.count - 1].id) : nil))
    }

    /// `POST /admin/keys/{keyId}/disable`, `…/enable`, `…/revoke`: the key's record afterwards.
    func setState(_ state: RegisteredKey.State, _ request: Request, context: HTTPSignatureContext) async throws -> Response {
        _ = try await request.decodeStrictly(as: NoFields.self, limit: 16 * 1024)
        let (keyID, before) = try await pathKey("keyId", context: context)
        if before.state == .revoked && state != .revoked {
            throw ProblemDetails(status: .conflict, reason: "key-revoked", detail: "the key '\(keyID)' is revoked; revocation is final")
        }
        let tagging = try await MasterKeyWriter.tagging(parts.writer, logger: context.logger)
        guard let after = try await parts.store.setState(state, ofKey: keyID, actor: Self.actor(context), at: parts.clock.wallSeconds(), tagging: tagging) else {
            throw ProblemDetails.unknownKey(keyID)
        }
        // A revocation that landed between the read above and the change: the change was refused in
        // the store's statement, and is answered as one asked of a revoked key.
        if after.state == .revoked && state != .revoked {
            throw ProblemDetails(status: .conflict, reason: "key-revoked", detail: "the key '\(keyID)' is revoked; revocation is final")
        }
        context.logger.notice("admin changed a key", metadata: [
            "keyid": .string(keyID), "state": .string(after.state.rawValue), "admin": .string(context.verifiedSignature?.keyID ?? "?"),
        ])
        return JSONAnswer.response(.ok, AdminKeyRecord(after))
    }

    /// `POST /admin/keys/{keyId}/user` with `{"userId", "email"}`: the key's record, now the user's.
    @Sendable func linkKey(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let keyID = try context.parameters.require("keyId")
        let body = try await request.decodeStrictly(as: KeyLinkRequest.self, limit: 16 * 1024)
        guard try await parts.store.key(id: keyID) != nil else { throw ProblemDetails.unknownKey(keyID) }
        var tagging = try await MasterKeyWriter.tagging(parts.writer, logger: context.logger)
        // The link lands on the user the admin decided on, named by the address the backend verified:
        // a number alone can be given again, or read differently a moment later.
        if let email = body.email {
            guard email.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }), email.utf8.count <= 1024 else {
                throw ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "email must be an address, without control characters")
            }
            guard let user = try await parts.store.user(id: body.userId) else {
                throw ProblemDetails(status: .notFound, reason: "unknown-user", detail: "no user has the id \(body.userId)")
            }
            try parts.options.masterKeys.map { keyring throws(ServerConfigurationError) in try KeyRecordTag.check(user, keyring: keyring) }
            guard user.email == email || UserFields.emailKey(user.email) == UserFields.emailKey(email) else {
                throw ProblemDetails(status: .notFound, reason: "unknown-user", detail: "user \(body.userId) does not have the address '\(email.clipped(toUTF8: 254))'")
            }
            tagging = tagging?.expecting(userBinding: KeyRecordTag.binding(of: user))
        } else if parts.options.masterKeys != nil {
            throw ProblemDetails(
                status: .badRequest, reason: "invalid-request",
                detail: "name the user's address too (email), the one your sign-in verified: the server links a device to a user only as the record holding that address"
            )
        }
        guard let linked = try await parts.store.linkKey(keyID, toUser: body.userId, actor: Self.actor(context), at: parts.clock.wallSeconds(), tagging: tagging) else {
            throw ProblemDetails(status: .notFound, reason: "unknown-user", detail: "no user has the id \(body.userId)")
        }
        context.logger.notice("admin linked a key to a user", metadata: [
            "keyid": .string(keyID), "user": .stringConvertible(body.userId), "admin": .string(context.verifiedSignature?.keyID ?? "?"),
        ])
        return JSONAnswer.response(.ok, AdminKeyRecord(linked))
    }

    /// `POST /admin/tokens`: `201` with the token, the only time it is shown.
    @Sendable func issueToken(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let body = try await request.decodeStrictly(as: TokenRequest.self, limit: 16 * 1024)
        let uses = body.uses ?? 1
        let lifetime = body.expiresIn ?? 86_400
        guard (1...10_000).contains(uses) else {
            throw ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "uses must be 1 to 10000, found \(uses)")
        }
        guard (60...2_592_000).contains(lifetime) else {
            throw ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "expiresIn must be 60 to 2592000 seconds (30 days), found \(lifetime)")
        }
        if let platform = body.platform, !RegistrationServer.isPlatformLabel(platform) {
            throw ProblemDetails(status: .badRequest, reason: "invalid-platform", detail: "platform must be 1 to 32 of a-z, 0-9 and '-'")
        }
        let now = parts.clock.wallSeconds()
        let secret = "rt_" + Base64.encodeURLSafe(try SecureRandom.bytes(count: 24))
        let token = RegistrationToken(
            tokenID: "t_" + Base64.encodeURLSafe(try SecureRandom.bytes(count: 9)), uses: uses, usesLeft: uses,
            expiresAt: now + lifetime, platform: body.platform, revoked: false, createdAt: now
        )
        try await parts.store.insertToken(token, secretHash: RegistrationServer.tokenHash(secret))
        context.logger.notice("admin issued a registration token", metadata: [
            "token": .string(token.tokenID), "uses": .stringConvertible(uses), "admin": .string(context.verifiedSignature?.keyID ?? "?"),
        ])
        return JSONAnswer.response(.created, IssuedRegistrationToken(tokenId: token.tokenID, token: secret, uses: uses, expiresAt: token.expiresAt, platform: token.platform))
    }

    /// `GET /admin/tokens`: the tokens, never their secrets.
    @Sendable func listTokens(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        JSONAnswer.response(.ok, AdminTokenList(tokens: try await parts.store.tokens(limit: Self.listLimit).map(AdminTokenRecord.init)))
    }

    /// `POST /admin/tokens/{tokenId}/revoke`: `200`, or `404 unknown-token`.
    @Sendable func revokeToken(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        _ = try await request.decodeStrictly(as: NoFields.self, limit: 16 * 1024)
        let tokenID = try context.parameters.require("tokenId")
        guard try await parts.store.revokeToken(id: tokenID) else {
            throw ProblemDetails(status: .notFound, reason: "unknown-token", detail: "no token has the id '\(tokenID.clipped(toUTF8: 80))'")
        }
        return JSONAnswer.response(.ok, RevokedRegistrationToken(tokenId: tokenID, revoked: true))
    }

    /// The owner of the data key of the device the path names.
    private func dataKeyOwner(_ context: HTTPSignatureContext) async throws -> (keyID: String, owner: DataKeyOwner) {
        let (keyID, device) = try await pathKey("keyId", context: context)
        guard let owner = try DataKeyRoutes.owner(of: device, scope: parts.options.dataKeyScope) else { throw DataKeyRoutes.noUser(keyID) }
        return (keyID, owner)
    }

    /// `POST /admin/data-keys/{keyId}/rotate`: a new version of the device's (or its user's) data key.
    @Sendable func rotateDataKey(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        _ = try await request.decodeStrictly(as: NoFields.self, limit: 16 * 1024)
        guard let writer = parts.writer else { return MasterKeyWriter.refusal() }
        let (_, owner) = try await dataKeyOwner(context)
        let stored: StoredDataKey
        switch try await DataKeyRoutes.rotate(owner: owner, limit: nil, clock: parts.clock, store: parts.store, writer: writer, logger: context.logger) {
        case .rotated(let made): stored = made
        case .mayNotWrite, .limited: return MasterKeyWriter.refusal()
        }
        return JSONAnswer.response(.ok, ["owner": .string(owner.name), "dataKeyId": .string(stored.dataKeyID), "version": .integer(stored.version)])
    }

    /// The body of `POST /admin/data-keys/{keyId}/retire`.
    struct RetireBody: StrictRequestBody {
        static let fields: Set<String> = ["minVersion"]
        let minVersion: Int64
    }

    /// `POST /admin/data-keys/{keyId}/retire` with `{"minVersion"}`: versions below it are no longer issued.
    @Sendable func retireDataKeys(_ request: Request, context: HTTPSignatureContext) async throws -> Response {
        let body = try await request.decodeStrictly(as: RetireBody.self, limit: 4096)
        let (keyID, dataKeyOwner) = try await dataKeyOwner(context)
        let owner = dataKeyOwner.name
        guard let newest = try await parts.store.dataKey(owner: owner, version: nil)?.version else {
            throw ProblemDetails(status: .notFound, reason: "unknown-key", detail: "'\(keyID.clipped(toUTF8: 80))' has no data key")
        }
        guard (1...newest).contains(body.minVersion) else {
            throw ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "minVersion must be 1 to the newest version, \(newest)")
        }
        try await parts.store.setMinimumDataKeyVersion(body.minVersion, owner: owner)
        return JSONAnswer.response(.ok, ["owner": .string(owner), "minimumVersion": .integer(try await parts.store.minimumDataKeyVersion(owner: owner))])
    }
}

/// Shows the admin API to admins only (docs/SERVER.md, "Admin API"): an answer the signature check gave
/// instead of the route's — `401` (unsigned, another key, a failed check), `413` (a body over the limit,
/// refused before the check) or `429` (an address past its failure limit) — becomes the `404` a path the
/// server does not have gets, byte for byte; the reason stays in the log. A request the check let through
/// is an admin's, and gets the route's own answer.
struct AdminOnly: RouterMiddleware {
    typealias Context = HTTPSignatureContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        guard [.unauthorized, .contentTooLarge, .tooManyRequests].contains(response.status) else { return response }
        context.logger.info("admin request refused", metadata: ["status": .stringConvertible(response.status.code), "path": .string(request.uri.path.clipped(toUTF8: 120))])
        return UnmatchedRoutes<Context>.notFound()
    }
}
