import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferHummingbird
import Foundation
import Hummingbird
import HTTPTypes
import Logging


/// `POST /register` (docs/SERVER.md, "Public routes", "Proof of possession", "Who may register"): a
/// public key is registered only by a request its private key signed, and the token's check, the key's
/// look-up and insert and the token's use are one transaction of the store.
struct RegisterRoute: Sendable {
    let store: any RegistrationStore
    let mode: RegistrationMode
    /// Wraps HMAC secrets under the fleet's master key (docs/SERVER.md, "The master keyring"); nil
    /// stores them as they are.
    let writer: MasterKeyWriter?
    /// What a proof must satisfy: method, target URI and content digest covered; `created` and a nonce.
    let policy: HTTPSignaturePolicy
    /// The scheme and authority clients sign (see ``RegistrationServer/Options``).
    let scheme: String
    let authority: String?
    let metrics: ServerMetrics
    let clock: ServerClock

    init(_ parts: RouteParts) {
        store = parts.store
        mode = parts.options.effectiveRegistration
        writer = parts.writer
        var policy = parts.policy
        policy.requiresNonce = true
        self.policy = policy
        scheme = parts.options.scheme
        authority = parts.options.authority
        metrics = parts.metrics
        clock = parts.clock
    }

    /// The body of `POST /register`.
    struct Body: StrictRequestBody {
        static let fields: Set<String> = ["publicKey", "algorithm", "token", "platform", "encryptionKey"]
        let publicKey: String?
        let algorithm: String?
        let token: String?
        let platform: String?
        let encryptionKey: String?
    }

    func respond(to request: Request, context: HTTPSignatureContext) async throws -> Response {
        guard mode != .closed else {
            throw ProblemDetails(status: .forbidden, reason: "registration-closed", detail: "this server registers no new keys")
        }
        // The bytes are kept: the proof of possession signs their digest.
        let data = try await request.strictJSONBody(limit: 64 * 1024)
        let body = try Body.strictlyDecoded(from: data)
        if let platform = body.platform, !RegistrationServer.isPlatformLabel(platform) {
            throw ProblemDetails(status: .badRequest, reason: "invalid-platform", detail: "platform must be 1 to 32 of a-z, 0-9 and '-'")
        }
        var encryptionKey: String?
        if let text = body.encryptionKey {
            switch EncryptionKeyIdentity.stored(fromPEM: text) {
            case .stored(let der): encryptionKey = der
            case .refused(let problem): throw problem
            }
        }
        var requested: HTTPSignatureAlgorithm?
        if let name = body.algorithm {
            guard let algorithm = HTTPSignatureAlgorithm(rawValue: name) else {
                let names = HTTPSignatureAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
                throw ProblemDetails(status: .badRequest, reason: "unsupported-algorithm", detail: "'\(name.clipped(toUTF8: 64))' is not one of \(names)")
            }
            requested = algorithm
        }
        let now = clock.wallSeconds()
        var token: TokenUse?
        if mode == .token {
            guard let secret = body.token else {
                throw ProblemDetails(
                    status: .forbidden, reason: "token-required", detail: "this server registers keys only with a registration token from its admin (\"token\")"
                )
            }
            guard secret.utf8.count <= 128 else { throw Self.invalidToken }
            token = TokenUse(secretHash: RegistrationServer.tokenHash(secret), platform: body.platform, now: now)
        }
        guard let text = body.publicKey else {
            guard requested == .hmacSHA256 else {
                throw ProblemDetails(status: .badRequest, reason: "invalid-request", detail: "send a publicKey, or algorithm hmac-sha256 for a shared secret")
            }
            return try await registerSharedSecret(token: token, encryptionKey: encryptionKey, now: now, context: context)
        }
        if let problem = PrivateKeyRefusal.problem(inPublicKeyText: text, field: "publicKey", reason: "invalid-key") { throw problem }
        let key: HTTPVerificationKey
        do {
            let imported = try ImportedKey(importing: Array(text.utf8))
            guard case .verifying(let verifying) = imported.key else { return PrivateKeyRefusal.response(field: "publicKey", reason: "invalid-key") }
            key = try HTTPVerificationKey(verifying, algorithm: requested)
        } catch let error as HTTPSignatureError {
            throw ProblemDetails(status: .badRequest, reason: "unsupported-key", detail: error.reason)
        } catch {
            throw ProblemDetails(status: .badRequest, reason: "invalid-key", detail: "publicKey is not a usable public key: \(error)")
        }
        guard let verifying = key.verifyingKey else { throw ProblemDetails(status: .badRequest, reason: "invalid-key", detail: "publicKey is not a public key") }
        let keyID = verifying.fingerprint.registeredKeyID
        if let refusal = await refusal(ofProof: request.head, body: data, keyID: keyID, key: key, context: context) { return refusal }

        let tagging = try await MasterKeyWriter.tagging(writer, logger: context.logger)
        let untagged = RegisteredKey(
            keyID: keyID, algorithm: key.algorithm, publicKey: Base64.encode(verifying.derRepresentation), secret: nil, createdAt: now, encryptionKey: encryptionKey
        )
        let record = tagging?.tagged(untagged) ?? untagged
        switch try await store.registerKey(record, spending: token) {
        case .invalidToken:
            throw Self.invalidToken
        case .wrappingKeyChanged:
            context.logger.error(
                "this instance lacks the master key its database tags key records with (a promotion, or a keyring recorded after this instance started without one); nothing was stored"
            )
            return MasterKeyWriter.refusal()
        case .registered:
            context.logger.info("registered a public key", metadata: ["keyid": .string(keyID), "alg": .string(key.algorithm.rawValue)])
            return JSONAnswer.response(.created, ["keyId": .string(keyID), "algorithm": .string(key.algorithm.rawValue)])
        case .exists(let stored):
            // What is answered comes from the record as authenticated, not as the database may have it.
            try tagging?.check(stored)
            guard stored.state != .revoked else {
                throw ProblemDetails(status: .conflict, reason: "key-revoked", detail: "this key is revoked, and revocation is final: register a new key")
            }
            guard stored.algorithm == record.algorithm else {
                throw ProblemDetails(status: .conflict, reason: "key-exists", detail: "this key is already registered for \(stored.algorithm)")
            }
            if let encryptionKey, encryptionKey != stored.encryptionKey {
                let recorded = EncryptionKeyIdentity.id(ofStored: stored.encryptionKey).map { "another encryption key (\($0))" } ?? "no encryption key"
                throw ProblemDetails(
                    status: .conflict, reason: "encryption-key-mismatch",
                    detail: "this key is registered with \(recorded); a registered key's encryption key changes only through POST /encryption-key, signed by the key"
                )
            }
            return JSONAnswer.response(.ok, ["keyId": .string(keyID), "algorithm": .string(stored.algorithm.rawValue)])
        }
    }

    /// A new HMAC secret under a fresh random key id: nothing anyone could register ahead of its owner.
    /// It rests wrapped under the fleet's master key, when there is one, before a token use is spent.
    private func registerSharedSecret(token: TokenUse?, encryptionKey: String?, now: Int64, context: HTTPSignatureContext) async throws -> Response {
        var secret = try MACKey.generate().withUnsafeKeyBytes { Array($0) }
        defer { SecretBytes.wipe(&secret) }
        let secretText = Base64.encode(secret)
        let keyID = "h_" + Base64.encodeURLSafe(try SecureRandom.bytes(count: 16))
        guard let stored = try await MasterKeyWriter.storedSecret(secret, keyID: keyID, writer: writer, logger: context.logger) else {
            return MasterKeyWriter.refusal()
        }
        let untagged = RegisteredKey(keyID: keyID, algorithm: .hmacSHA256, publicKey: nil, secret: stored, createdAt: now, encryptionKey: encryptionKey)
        let record = try await MasterKeyWriter.tagging(writer, logger: context.logger)?.tagged(untagged) ?? untagged
        switch try await store.registerKey(record, spending: token) {
        case .invalidToken:
            throw Self.invalidToken
        case .wrappingKeyChanged:
            context.logger.error(
                "this instance lacks the master key its database wraps with (a promotion, or a keyring recorded after this instance started without one); nothing was stored"
            )
            return MasterKeyWriter.refusal()
        case .exists:
            // 128 random bits met an existing id: say nothing of it, and let the client try again.
            throw CofferCoreError(.ioFailure, "a fresh shared-secret key id was already registered")
        case .registered:
            context.logger.info("registered a shared secret", metadata: ["keyid": .string(record.keyID)])
            return JSONAnswer.response(.created, ["keyId": .string(record.keyID), "algorithm": .string(record.algorithm.rawValue), "secret": .string(secretText)])
        }
    }

    static let invalidToken = ProblemDetails(
        status: .forbidden, reason: "invalid-token", detail: "the registration token is unknown, expired, used up, revoked, or for another platform"
    )

    /// The answer refusing the request's proof of possession, or nil when the request is signed by the
    /// key it registers, as ``policy`` demands, under `keyID`, and is not a replay.
    func refusal(ofProof head: HTTPRequest, body: Data, keyID: String, key: HTTPVerificationKey, context: HTTPSignatureContext) async -> Response? {
        guard head.headerFields[.signature] != nil || head.headerFields[.signatureInput] != nil else {
            count("proof-required")
            context.logger.info("registration refused", metadata: ["reason": "proof-required"])
            return ProblemDetails(
                status: .unauthorized, reason: "proof-required",
                title: "The registration must be signed by the key it registers",
                detail: """
                    sign this request with the private key of publicKey (RFC 9421): cover "@method" "@target-uri" "content-digest", \
                    with created, nonce and keyid "\(keyID)" (docs/SERVER.md, "Proof of possession")
                    """
            ).response(headers: [.wwwAuthenticate: "Signature"])
        }
        let head = context.signedTarget(of: head, scheme: scheme, authority: authority)
        let verifier = HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys([keyID: key]), replayCache: store)
        do {
            _ = try await verifier.verify(head, body: body.isEmpty ? nil : Array(body))
            return nil
        } catch {
            count(error.code.rawValue)
            if error.code == .badSignature {
                context.logger.debug("bad-signature: the target the server rebuilt", metadata: ["target_uri": .string(head.rebuiltTargetURI)])
            }
            let signed = error.code == .badSignature ? await verifier.otherSchemeThatVerifies(head, body: body.isEmpty ? nil : Array(body)) : nil
            var metadata: Logger.Metadata = ["reason": .string(error.code.rawValue)]
            if let signed { metadata["signed_scheme"] = .string(signed) }
            context.logger.info("registration refused", metadata: metadata)
            if error.code == .unknownKey {
                let named = HTTPSignatureError(.unknownKey, "a registration is signed under the id its key is registered as: keyid \"\(keyID)\"")
                return HTTPSignatureMiddleware<HTTPSignatureContext>.problem(status: .unauthorized, error: named)
            }
            if let signed {
                // Still refused; the answer says the scheme is what differs (a TLS-terminating proxy, say).
                let explained = HTTPSignatureMiddleware<HTTPSignatureContext>.schemeMismatch(error, expected: scheme, signed: signed)
                return HTTPSignatureMiddleware<HTTPSignatureContext>.problem(status: .unauthorized, error: explained)
            }
            return HTTPSignatureMiddleware<HTTPSignatureContext>.problem(status: error.code == .unavailable ? .serviceUnavailable : .unauthorized, error: error)
        }
    }

    private func count(_ reason: String) {
        metrics.signatureRefused(reason)
    }
}
