import CofferCore
import CofferCrypto
import CofferFormats
public import CofferHTTPSignatures
public import CofferHummingbird
import Foundation
public import Hummingbird
import HummingbirdTLS
import HummingbirdCore
public import HTTPTypes
public import Logging
import NIOCore
import NIOSSL

/// The registration flow behind `coffer serve`:
///
/// - `POST /register` with `{"publicKey": "<PEM or JWK>"}` (and `"algorithm"` for RSA keys) answers
///   `201 {"keyId", "algorithm"}`; with `{"algorithm": "hmac-sha256"}` it answers
///   `201 {"keyId", "algorithm", "secret"}` — the only time that secret is sent.
/// - `POST /register_user` with `{"email", "name"}` answers `201` only for a request signed by a
///   registered key, covering `@method`, `@target-uri` and `content-digest` and carrying `created`;
///   otherwise `401` with a problem-details body. A replayed request is `401` too.
/// - `GET /health` answers `200 {"status": "ok"}` when the store answers.
public struct RegistrationServer: Sendable {
    /// Settings of the signed routes.
    public struct Options: Sendable {
        /// The scheme clients sign in `@target-uri` (`https` behind TLS).
        public var scheme = "http"
        /// The authority clients sign, when a proxy rewrites `Host`.
        public var authority: String?
        /// The oldest signature accepted, in seconds.
        public var maximumAge: Int64 = 300
        /// Adds `POST /unsigned/register_user`: the same work without a signature, for benchmarks only.
        /// The user is recorded against the registered key that the request's
        /// ``RegistrationServer/unsignedKeyIDField`` names, unchecked.
        public var unsignedTwin = false

        /// The defaults: plain HTTP, five minutes.
        public init() {}
    }

    /// The store.
    public let store: any RegistrationStore
    /// The settings.
    public let options: Options

    /// A server over `store`.
    public init(store: any RegistrationStore, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    /// The policy `/register_user` applies.
    public var policy: HTTPSignaturePolicy {
        var policy = HTTPSignaturePolicy(requiring: [.method, .targetURI, .field("content-digest")])
        policy.requiresCreated = true
        policy.maximumAge = options.maximumAge
        return policy
    }

    /// The routes.
    public func router() -> Router<HTTPSignatureContext> {
        let router = Router(context: HTTPSignatureContext.self)
        let store = store
        router.get("health") { _, _ -> Response in
            do {
                try await store.ping()
                return Self.json(.ok, ["status": "ok"])
            } catch {
                return Self.json(.serviceUnavailable, ["status": "unavailable"])
            }
        }
        router.post("register") { request, context -> Response in
            try await Self.register(request, context: context, store: store)
        }
        let verifier = HTTPMessageVerifier(policy: policy, keys: StoreKeyProvider(store: store), replayCache: store)
        router.group("register_user")
            .add(middleware: HTTPSignatureMiddleware<HTTPSignatureContext>(verifier: verifier, scheme: options.scheme, authority: options.authority, maximumBodySize: 64 * 1024))
            .post { request, context -> Response in
                guard let keyID = context.verifiedSignature?.keyID else { return Self.problem(.unauthorized, "missing-signature", "the request is not signed") }
                return try await Self.registerUser(request, context: context, keyID: keyID, store: store)
            }
        if options.unsignedTwin {
            router.post("unsigned/register_user") { request, context -> Response in
                // Not looked up (the signed route finds its key in a cache): an unknown id fails the insert.
                guard let keyID = request.headers[Self.unsignedKeyIDField] else {
                    return Self.problem(.badRequest, "unknown-key", "name a registered key in \(Self.unsignedKeyIDField)")
                }
                return try await Self.registerUser(request, context: context, keyID: keyID, store: store)
            }
        }
        return router
    }

    /// The header field that names the key of an unsigned twin request (``Options/unsignedTwin``).
    public static let unsignedKeyIDField = HTTPField.Name("Coffer-Unsigned-Key-Id")!

    // MARK: - Handlers

    struct RegisterBody: Decodable {
        let publicKey: String?
        let algorithm: String?
    }

    struct UserBody: Decodable {
        let email: String
        let name: String
    }

    static func register(_ request: Request, context: HTTPSignatureContext, store: any RegistrationStore) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: 64 * 1024)
        guard let body = try? JSONDecoder().decode(RegisterBody.self, from: Data(buffer.readableBytesView)) else {
            return problem(.badRequest, "invalid-request", "send JSON {\"publicKey\": \"<PEM or JWK>\"} or {\"algorithm\": \"hmac-sha256\"}")
        }
        let requested: HTTPSignatureAlgorithm?
        if let name = body.algorithm {
            guard let algorithm = HTTPSignatureAlgorithm(rawValue: name) else {
                let names = HTTPSignatureAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
                return problem(.badRequest, "unsupported-algorithm", "'\(name)' is not one of \(names)")
            }
            requested = algorithm
        } else {
            requested = nil
        }
        let now = Int64(Date().timeIntervalSince1970)
        guard let pem = body.publicKey else {
            guard requested == .hmacSHA256 else {
                return problem(.badRequest, "invalid-request", "send a publicKey, or algorithm hmac-sha256 for a shared secret")
            }
            let secret = try MACKey.generate()
            let secretText = secret.withUnsafeKeyBytes { Base64.encode(Array($0)) }
            var id = [UInt8](repeating: 0, count: 16)
            id.withUnsafeMutableBytes { SecureRandom.fill($0) }
            let record = RegisteredKey(keyID: "h_" + Base64.encodeURLSafe(id), algorithm: .hmacSHA256, publicKey: nil, secret: secretText, createdAt: now)
            _ = try await store.insertKey(record)
            context.logger.info("registered a shared secret", metadata: ["keyid": .string(record.keyID)])
            return json(.created, ["keyId": .string(record.keyID), "algorithm": .string(record.algorithm.rawValue), "secret": .string(secretText)])
        }
        let key: HTTPVerificationKey
        do {
            let imported = try KeyImporter.read(Array(pem.utf8)).verifyingKey
            key = try HTTPVerificationKey(imported, algorithm: requested)
        } catch let error as HTTPSignatureError {
            return problem(.badRequest, "unsupported-key", error.reason)
        } catch {
            return problem(.badRequest, "invalid-key", "publicKey is not a usable public key: \(error)")
        }
        guard let verifying = key.verifyingKey else { return problem(.badRequest, "invalid-key", "publicKey is not a public key") }
        let keyID = "k_" + Hex.encode(verifying.fingerprint.sha256.prefix(16))
        let record = RegisteredKey(keyID: keyID, algorithm: key.algorithm, publicKey: Base64.encode(verifying.derRepresentation), secret: nil, createdAt: now)
        let existing = try await store.key(id: keyID)
        let stored: RegisteredKey
        if let existing { stored = existing } else { stored = try await store.insertKey(record) }
        guard stored.algorithm == record.algorithm else {
            return problem(.conflict, "key-exists", "this key is already registered for \(stored.algorithm)")
        }
        if existing == nil {
            context.logger.info("registered a public key", metadata: ["keyid": .string(keyID), "alg": .string(key.algorithm.rawValue)])
        }
        return json(existing == nil ? .created : .ok, ["keyId": .string(keyID), "algorithm": .string(key.algorithm.rawValue)])
    }

    static func registerUser(_ request: Request, context: HTTPSignatureContext, keyID: String, store: any RegistrationStore) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: 64 * 1024)
        guard let body = try? JSONDecoder().decode(UserBody.self, from: Data(buffer.readableBytesView)) else {
            return problem(.badRequest, "invalid-request", "send JSON {\"email\": \"…\", \"name\": \"…\"}")
        }
        let email = body.email.trimmingCharacters(in: .whitespaces)
        guard email.count <= 254, let at = email.firstIndex(of: "@"), at != email.startIndex, email.index(after: at) != email.endIndex,
              !email.contains(where: { $0.isWhitespace }) else {
            return problem(.badRequest, "invalid-email", "email must be an address like ada@example.com")
        }
        guard !body.name.isEmpty, body.name.count <= 200 else {
            return problem(.badRequest, "invalid-name", "name must be 1 to 200 characters")
        }
        guard let user = try await store.insertUser(email: email, name: body.name, keyID: keyID, createdAt: Int64(Date().timeIntervalSince1970)) else {
            return problem(.conflict, "email-exists", "this email address is already registered")
        }
        return json(.created, ["id": .integer(user.id), "email": .string(user.email), "name": .string(user.name), "keyId": .string(user.keyID)])
    }

    static func json(_ status: HTTPResponse.Status, _ fields: [String: FlatJSONValue]) -> Response {
        let data = FlatJSONObject(fields).encoded
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func problem(_ status: HTTPResponse.Status, _ reason: String, _ detail: String) -> Response {
        let data = FlatJSONObject([
            "type": .string("https://coffer.dev/problems/\(reason)"), "title": .string(status.reasonPhrase),
            "status": .integer(Int64(status.code)), "reason": .string(reason), "detail": .string(detail),
        ]).encoded
        return Response(status: status, headers: [.contentType: "application/problem+json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension RegistrationServer {
    /// The Hummingbird application that serves ``router()`` on `host:port` (port 0 picks a free one),
    /// over TLS when a certificate chain and key (PEM files) are given. `onListening` receives the
    /// bound port once the server accepts connections.
    public func application(
        host: String, port: Int, certificatePath: String? = nil, keyPath: String? = nil, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        var server: HTTPServerBuilder = .http1()
        if let certificatePath, let keyPath {
            let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
            let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
            server = try .tls(.http1(), tlsConfiguration: TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
        }
        return Application(
            router: router(),
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "coffer"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
