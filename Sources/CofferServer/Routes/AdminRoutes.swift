// One file on purpose: every /admin/ route, the admin-only middleware and the JSON entries they answer
// with, so that what the admin API exposes (docs/SERVER.md, "Admin API") is read in one place.

import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// Whose data key a device gets from `POST /data-keys` (docs/SERVER.md, "Data keys").
public enum DataKeyScope: String, Sendable, CaseIterable {
    /// Each device its own key: the default.
    case device
    /// One key per user, shared by the user's devices: a device gets the key of the user an admin (the
    /// backend, after its own sign-in) linked it to (`POST /admin/keys/{keyId}/user`), and `409
    /// no-user` while it belongs to none; signing up (`POST /register_user`) makes no device a member.
    /// A new device of the same user, once linked, opens what the others encrypted.
    case user
}

/// Who may register a key through `POST /register`.
public enum RegistrationMode: String, Sendable, CaseIterable {
    /// Anyone (rate-limited per address): for development, or an API whose keys need no allow-list.
    case open
    /// Only a request carrying a registration token an admin issued (`POST /admin/tokens`).
    case token
    /// Nobody: the allow-list is closed.
    case closed
}

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
enum AdminRoutes {
    /// The most records a listing returns.
    static let listLimit = 10_000

    static func add(
        to router: Router<HTTPSignatureContext>, server: RegistrationServer, store: any RegistrationStore,
        adminKeys: [String: HTTPVerificationKey], writer: MasterKeyWriter?, failureLimit: RegistrationServer.SignatureFailureLimit?
    ) {
        let scope = server.options.dataKeyScope
        var policy = HTTPSignaturePolicy(requiring: [.method, .targetURI, .field("content-digest")])
        policy.requiresCreated = true
        policy.maximumAge = server.options.maximumAge
        let verifier = HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys(adminKeys), replayCache: store)
        var group = router.group("admin").add(middleware: AdminOnly())
        if let failureLimit { group = group.add(middleware: failureLimit) }
        let admin = group
            .add(middleware: HTTPSignatureMiddleware<HTTPSignatureContext>(
                verifier: verifier, scheme: server.options.scheme, authority: server.options.authority, maximumBodySize: 16 * 1024,
                metricsFactory: server.options.metricsFactory
            ))
        admin.get("keys") { _, _ -> Response in
            let keys = try await store.keys(limit: listLimit).map(KeyEntry.init)
            return encoded(.ok, ["keys": keys])
        }
        admin.get("keys/:keyId/events") { _, context -> Response in
            let keyID = try context.parameters.require("keyId")
            guard try await store.key(id: keyID) != nil else {
                return RegistrationServer.problem(.notFound, "unknown-key", "no key is registered as '\(keyID.prefix(80))'")
            }
            return encoded(.ok, ["events": try await store.events(ofKey: keyID, limit: 1_000).map(EventEntry.init)])
        }
        admin.get("users") { request, _ -> Response in
            let email = request.uri.queryParameters["email"].map(String.init)
            return encoded(.ok, ["users": try await store.users(email: email, limit: listLimit).map(UserEntry.init)])
        }
        for (action, state) in [("disable", RegisteredKey.State.disabled), ("enable", .active), ("revoke", .revoked)] {
            admin.post("keys/:keyId/\(action)") { request, context -> Response in
                var request = request
                if let problem = try await StrictJSON.noFields(&request, limit: 16 * 1024) { return problem.response() }
                let keyID = try context.parameters.require("keyId")
                guard let before = try await store.key(id: keyID) else {
                    return RegistrationServer.problem(.notFound, "unknown-key", "no key is registered as '\(keyID.prefix(80))'")
                }
                if before.state == .revoked && state != .revoked {
                    return RegistrationServer.problem(.conflict, "key-revoked", "the key '\(keyID)' is revoked; revocation is final")
                }
                let actor = "admin:" + (context.verifiedSignature?.keyID ?? "?")
                guard let after = try await store.setState(state, ofKey: keyID, actor: actor, at: Int64(Date().timeIntervalSince1970)) else {
                    return RegistrationServer.problem(.notFound, "unknown-key", "no key is registered as '\(keyID.prefix(80))'")
                }
                context.logger.notice("admin changed a key", metadata: [
                    "keyid": .string(keyID), "state": .string(after.state.rawValue),
                    "admin": .string(context.verifiedSignature?.keyID ?? "?"),
                ])
                return encoded(.ok, KeyEntry(after))
            }
        }
        admin.post("keys/:keyId/user") { request, context -> Response in
            let keyID = try context.parameters.require("keyId")
            var request = request
            let data: Data
            switch try await StrictJSON.read(&request, limit: 16 * 1024) {
            case .bytes(let bytes): data = bytes
            case .problem(let problem): return problem.response()
            }
            struct Link: Decodable { let userId: Int64 }
            let body: Link
            switch StrictJSON.decode(Link.self, from: data, allowed: ["userId"]) {
            case .value(let decoded): body = decoded
            case .problem(let problem): return problem.response()
            }
            guard try await store.key(id: keyID) != nil else {
                return RegistrationServer.problem(.notFound, "unknown-key", "no key is registered as '\(keyID.prefix(80))'")
            }
            let actor = "admin:" + (context.verifiedSignature?.keyID ?? "?")
            guard let linked = try await store.linkKey(keyID, toUser: body.userId, actor: actor, at: Int64(Date().timeIntervalSince1970)) else {
                return RegistrationServer.problem(.notFound, "unknown-user", "no user has the id \(body.userId)")
            }
            context.logger.notice("admin linked a key to a user", metadata: [
                "keyid": .string(keyID), "user": .stringConvertible(body.userId), "admin": .string(context.verifiedSignature?.keyID ?? "?"),
            ])
            return encoded(.ok, KeyEntry(linked))
        }
        admin.post("tokens") { request, context -> Response in
            var request = request
            let data: Data
            switch try await StrictJSON.read(&request, limit: 16 * 1024) {
            case .bytes(let bytes): data = bytes.isEmpty ? Data("{}".utf8) : bytes
            case .problem(let problem): return problem.response()
            }
            let body: TokenRequest
            switch StrictJSON.decode(TokenRequest.self, from: data, allowed: ["uses", "expiresIn", "platform"]) {
            case .value(let decoded): body = decoded
            case .problem(let problem): return problem.response()
            }
            let uses = body.uses ?? 1
            let lifetime = body.expiresIn ?? 86_400
            guard (1...10_000).contains(uses) else {
                return RegistrationServer.problem(.badRequest, "invalid-request", "uses must be 1 to 10000, found \(uses)")
            }
            guard (60...2_592_000).contains(lifetime) else {
                return RegistrationServer.problem(.badRequest, "invalid-request", "expiresIn must be 60 to 2592000 seconds (30 days), found \(lifetime)")
            }
            if let platform = body.platform, !RegistrationServer.isPlatformLabel(platform) {
                return RegistrationServer.problem(.badRequest, "invalid-platform", "platform must be 1 to 32 of a-z, 0-9 and '-'")
            }
            let now = Int64(Date().timeIntervalSince1970)
            let secret = "rt_" + Base64.encodeURLSafe(try SecureRandom.bytes(count: 24))
            let token = RegistrationToken(
                tokenID: "t_" + Base64.encodeURLSafe(try SecureRandom.bytes(count: 9)), uses: uses, usesLeft: uses,
                expiresAt: now + lifetime, platform: body.platform, revoked: false, createdAt: now
            )
            try await store.insertToken(token, secretHash: RegistrationServer.tokenHash(secret))
            context.logger.notice("admin issued a registration token", metadata: [
                "token": .string(token.tokenID), "uses": .stringConvertible(uses), "admin": .string(context.verifiedSignature?.keyID ?? "?"),
            ])
            return encoded(.created, IssuedToken(tokenId: token.tokenID, token: secret, uses: uses, expiresAt: token.expiresAt, platform: token.platform))
        }
        if let writer {
            admin.post("data-keys/:owner/rotate") { request, context -> Response in
                var request = request
                if let problem = try await StrictJSON.noFields(&request, limit: 16 * 1024) { return problem.response() }
                let keyID = try context.parameters.require("owner")
                guard let device = try await store.key(id: keyID) else {
                    return RegistrationServer.problem(.notFound, "unknown-key", "no key is registered as '\(keyID.prefix(80))'")
                }
                guard let owner = DataKeyRoutes.owner(of: device, scope: scope) else { return DataKeyRoutes.noUser(keyID) }
                let stored: StoredDataKey
                switch try await DataKeyRoutes.rotate(owner: owner, limit: nil, store: store, writer: writer, logger: context.logger) {
                case .rotated(let made): stored = made
                case .mayNotWrite, .limited: return MasterKeyWriter.refusal()
                }
                return RegistrationServer.json(.ok, ["owner": .string(owner), "dataKeyId": .string(stored.dataKeyID), "version": .integer(stored.version)])
            }
            admin.post("data-keys/:owner/retire") { request, context -> Response in
                let keyID = try context.parameters.require("owner")
                var request = request
                let data: Data
                switch try await StrictJSON.read(&request, limit: 4096) {
                case .bytes(let bytes): data = bytes
                case .problem(let problem): return problem.response()
                }
                struct Retire: Decodable { let minVersion: Int64 }
                let body: Retire
                switch StrictJSON.decode(Retire.self, from: data, allowed: ["minVersion"]) {
                case .value(let decoded): body = decoded
                case .problem(let problem): return problem.response()
                }
                guard let device = try await store.key(id: keyID) else {
                    return RegistrationServer.problem(.notFound, "unknown-key", "no key is registered as '\(keyID.prefix(80))'")
                }
                guard let owner = DataKeyRoutes.owner(of: device, scope: scope) else { return DataKeyRoutes.noUser(keyID) }
                guard let newest = try await store.dataKey(owner: owner, version: nil)?.version else {
                    return RegistrationServer.problem(.notFound, "unknown-key", "'\(keyID.prefix(80))' has no data key")
                }
                guard (1...newest).contains(body.minVersion) else {
                    return RegistrationServer.problem(.badRequest, "invalid-request", "minVersion must be 1 to the newest version, \(newest)")
                }
                try await store.setMinimumDataKeyVersion(body.minVersion, owner: owner)
                return RegistrationServer.json(.ok, ["owner": .string(owner), "minimumVersion": .integer(try await store.minimumDataKeyVersion(owner: owner))])
            }
        }
        admin.get("tokens") { _, _ -> Response in
            encoded(.ok, ["tokens": try await store.tokens(limit: listLimit).map(TokenEntry.init)])
        }
        admin.post("tokens/:tokenId/revoke") { request, context -> Response in
            var request = request
            if let problem = try await StrictJSON.noFields(&request, limit: 16 * 1024) { return problem.response() }
            let tokenID = try context.parameters.require("tokenId")
            guard try await store.revokeToken(id: tokenID) else {
                return RegistrationServer.problem(.notFound, "unknown-token", "no token has the id '\(tokenID.prefix(80))'")
            }
            return encoded(.ok, RevokedToken(tokenId: tokenID, revoked: true))
        }
    }

    struct TokenRequest: Decodable {
        let uses: Int?
        let expiresIn: Int64?
        let platform: String?
    }

    struct RevokedToken: Encodable {
        let tokenId: String
        let revoked: Bool
    }

    struct IssuedToken: Encodable {
        let tokenId: String
        let token: String
        let uses: Int
        let expiresAt: Int64
        let platform: String?
    }

    /// A key as the admin API lists it (never its secret).
    struct KeyEntry: Codable, Sendable {
        let keyId: String
        let algorithm: String
        let state: String
        let createdAt: Int64
        let lastUsedAt: Int64?
        let userId: Int64?
        let encryptionKeyId: String?

        init(_ key: RegisteredKey) {
            keyId = key.keyID
            algorithm = key.algorithm.rawValue
            state = key.state.rawValue
            createdAt = key.createdAt
            // Uses are recorded to the minute: never shown before the key existed.
            lastUsedAt = key.lastUsedAt.map { max($0, key.createdAt) }
            userId = key.userID
            encryptionKeyId = EncryptionKeyIdentity.id(ofStored: key.encryptionKey)
        }
    }

    /// One change in a key's history, as the admin API lists it.
    struct EventEntry: Codable, Sendable {
        let at: Int64
        let kind: String
        let actor: String
        let detail: String?

        init(_ event: KeyEvent) {
            at = event.at
            kind = event.kind.rawValue
            actor = event.actor
            detail = event.detail
        }
    }

    /// A user as the admin API lists it.
    struct UserEntry: Codable, Sendable {
        let id: Int64
        let email: String
        let name: String
        let createdAt: Int64
        let keyId: String

        init(_ user: RegisteredUser) {
            id = user.id
            email = user.email
            name = user.name
            createdAt = user.createdAt
            keyId = user.keyID
        }
    }

    /// A token as the admin API lists it (never its secret).
    struct TokenEntry: Codable, Sendable {
        let tokenId: String
        let uses: Int
        let usesLeft: Int
        let expiresAt: Int64
        let platform: String?
        let revoked: Bool
        let createdAt: Int64

        init(_ token: RegistrationToken) {
            tokenId = token.tokenID
            uses = token.uses
            usesLeft = token.usesLeft
            expiresAt = token.expiresAt
            platform = token.platform
            revoked = token.revoked
            createdAt = token.createdAt
        }
    }

    static func encoded(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // invariant: these plain structs of strings and integers always encode.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
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
        context.logger.info("admin request refused", metadata: ["status": .stringConvertible(response.status.code), "path": .string(String(request.uri.path.prefix(120)))])
        return UnmatchedRoutes<Context>.notFound()
    }
}

/// JSON bodies read strictly: `Content-Type: application/json` (`415 unsupported-media-type`
/// otherwise), at most a route's limit (`413 body-too-large`), an object with only the fields a route
/// knows, each of its type (`400 unknown-field`, `400 invalid-request`).
enum StrictJSON {
    enum Body {
        case bytes(Data)
        case problem(ProblemDetails)
    }

    /// The request's body, once its content type and size are known to be acceptable. An empty body is
    /// accepted whatever its content type (routes whose fields are all optional read it as `{}`).
    static func read(_ request: inout Request, limit: Int) async throws -> Body {
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            return .problem(ProblemDetails(status: .contentTooLarge, reason: "body-too-large", detail: "the body is larger than this route's \(limit) bytes"))
        }
        guard buffer.readableBytes > 0 else { return .bytes(Data()) }
        guard let type = request.headers.combinedLines(of: .contentType), isJSON(mediaType: type) else {
            return .problem(ProblemDetails(
                status: .unsupportedMediaType, reason: "unsupported-media-type",
                detail: "send the body as Content-Type: application/json, not \(request.headers[.contentType].map { "'\($0.prefix(60))'" } ?? "without a content type")"
            ))
        }
        return .bytes(Data(buffer.readableBytesView))
    }

    /// For a route that takes no fields: nil when the body is empty or `{}`, else the problem.
    static func noFields(_ request: inout Request, limit: Int) async throws -> ProblemDetails? {
        struct Nothing: Decodable {}
        switch try await read(&request, limit: limit) {
        case .problem(let problem): return problem
        case .bytes(let data) where data.isEmpty: return nil
        case .bytes(let data):
            if case .problem(let problem) = decode(Nothing.self, from: data, allowed: []) { return problem }
            return nil
        }
    }

    /// Whether a `Content-Type` value names JSON: `application/json` or `application/…+json`, in any
    /// case, with any parameters and surrounding whitespace. Byte by byte: Foundation's trimming and
    /// lowercasing consult Unicode tables, a cost every signed request paid.
    static func isJSON(mediaType field: String) -> Bool {
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        var type = field.utf8.prefix { $0 != UInt8(ascii: ";") }   // a view of the field: nothing copied
        while let first = type.first, isWhitespace(first) { type = type.dropFirst() }
        while let last = type.last, isWhitespace(last) { type = type.dropLast() }
        /// Whether `bytes` spell `lowercase` in any case.
        func spell(_ bytes: Substring.UTF8View, _ lowercase: String) -> Bool {
            bytes.elementsEqual(lowercase.utf8) { ((0x41...0x5A).contains($0) ? $0 | 0x20 : $0) == $1 }
        }
        let application = "application/", json = "+json"
        return spell(type, "application/json")
            || (type.count >= application.utf8.count + json.utf8.count
                && spell(type.prefix(application.utf8.count), application) && spell(type.suffix(json.utf8.count), json))
    }

    enum Decoded<T> {
        case value(T)
        case problem(ProblemDetails)
    }

    /// The body as `T`, parsed once: the keys are checked against `allowed` from the same parse that
    /// decodes the value (a second parser for the keys cost as much as the rest of a signed request).
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, allowed: Set<String>) -> Decoded<T> {
        let decoder = JSONDecoder()
        if let key = allowedFieldsKey { decoder.userInfo[key] = allowed }
        do {
            return .value(try decoder.decode(Checked<T>.self, from: data).value)
        } catch let unknown as UnknownFields {
            return .problem(unknownFields(unknown.names, allowed: allowed))
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            return .problem(notAnObject)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            return .problem(notAnObject)
        } catch {
            return .problem(wrongType(allowed: allowed))
        }
    }

    /// A body that is an object of required string fields, exactly `names`: their values in that order.
    /// The same answers as ``decode(_:from:allowed:)`` for such a body, from one `JSONSerialization`
    /// pass (the signed `/register_user` reads its body this way: with the `Codable` path it took
    /// 30–45 µs more server CPU a request under load, docs/PERFORMANCE.md).
    static func strings(_ names: [String], from data: Data) -> Decoded<[String]> {
        let allowed = Set(names)
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return .problem(notAnObject) }
        let unknown = object.keys.filter { !allowed.contains($0) }
        guard unknown.isEmpty else { return .problem(unknownFields(unknown, allowed: allowed)) }
        var values: [String] = []
        values.reserveCapacity(names.count)
        for name in names {
            guard let value = object[name] as? String else { return .problem(wrongType(allowed: allowed)) }
            values.append(value)
        }
        return .value(values)
    }

    static let notAnObject = ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "the body must be a JSON object")

    static func wrongType(allowed: Set<String>) -> ProblemDetails {
        ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "a field has the wrong type; expected \(allowed.sorted().joined(separator: ", "))")
    }

    static func unknownFields(_ unknown: [String], allowed: Set<String>) -> ProblemDetails {
        let names = unknown.sorted()
        return ProblemDetails(
            status: .badRequest, reason: "unknown-field",
            detail: "unknown field\(names.count == 1 ? "" : "s") \(names.map { "'\($0.prefix(40))'" }.joined(separator: ", ")); expected \(allowed.sorted().joined(separator: ", "))"
        )
    }

    /// Where ``decode(_:from:allowed:)`` tells ``Checked`` the allowed fields. (Were it ever nil, no
    /// field would be allowed: a refusal, never a pass.)
    static let allowedFieldsKey = CodingUserInfoKey(rawValue: "coffer.allowed-fields")

    /// Fields a body has that its route does not read.
    struct UnknownFields: Error {
        let names: [String]
    }

    /// `T`, decoded after checking that the object has no key outside the allowed set.
    struct Checked<T: Decodable>: Decodable {
        let value: T

        struct AnyKey: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let allowed = StrictJSON.allowedFieldsKey.flatMap { decoder.userInfo[$0] as? Set<String> } ?? []
            let unknown = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).filter { !allowed.contains($0) }
            if !unknown.isEmpty { throw UnknownFields(names: unknown) }
            value = try T(from: decoder)
        }
    }
}

