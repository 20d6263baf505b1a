public import AsyncHTTPClient
public import CofferCore
public import CofferCrypto
public import CofferFormats
public import CofferHTTPSignatures
public import CofferServerWire
import Foundation
import HTTPTypes
public import NIOCore

/// A device's side of a Coffer registration server (docs/SERVER.md): it registers its signing key,
/// proving that it holds the private half (the request is signed by that key, RFC 9421), sets the
/// encryption key its data keys are sealed to, and signs up its user. Every request is signed, with
/// `created` and a nonce, under the id the server registers the key as (``keyID``).
///
/// ```swift
/// let device = try DeviceClient(server: "https://api.example", key: signingKey)
/// let registration = try await device.register(encryptionKey: encryptionKey.publicKey, token: token)
/// let dataKey = try await DataKeyClient(device: device, identity: encryptionKey).fetch()
/// ```
public struct DeviceClient: Sendable {
    /// What the server answered to a registration.
    public typealias Registration = DeviceRegistration

    /// What the server answered to ``setEncryptionKey(_:)``.
    public typealias EncryptionKeyChange = EncryptionKeyUpdate

    /// A user as `POST /register_user` answered it.
    public typealias User = SignedUpUser

    /// The server's base URL.
    public let server: ServerURL
    /// The id the server registers this device's key as: `k_` and the first 16 bytes of the SHA-256 of
    /// its SubjectPublicKeyInfo, hex (`KeyFingerprint.registeredKeyID` in CofferCore).
    public let keyID: String
    /// The device's request signer: its key, under ``keyID``, covering `@method`, `@target-uri` and
    /// `content-digest`, with `created` and a nonce. ``DataKeyClient`` signs with it.
    public let signer: HTTPMessageSigner
    private let publicKey: VerifyingKey
    private let algorithm: HTTPSignatureAlgorithm?
    let client: HTTPClient
    let timeout: TimeAmount

    /// A client for the device whose signing key is `key`.
    /// - Parameters:
    ///   - server: the server's URL (`https://host[:port]`).
    ///   - key: the device's private key (in memory, or on a token: `SigningKey(tokenKey)`).
    ///   - algorithm: the HTTP signature algorithm, for an RSA key (`rsa-pss-sha512` or
    ///     `rsa-v1_5-sha256`); nil to let the key decide.
    ///   - client: the HTTP client (pinned, for instance); the shared one by default.
    ///   - timeout: how long each exchange may take.
    /// - Throws: `CofferCoreError` for a URL that cannot be used; `HTTPSignatureError` for a key that
    ///   cannot sign HTTP requests.
    public init(
        server: String, key: SigningKey, algorithm: HTTPSignatureAlgorithm? = nil, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30)
    ) throws {
        self.server = try ServerURL(server)
        publicKey = key.verifyingKey
        keyID = key.verifyingKey.fingerprint.registeredKeyID
        self.algorithm = algorithm
        signer = HTTPMessageSigner(key: try HTTPSigningKey(key, algorithm: algorithm), keyID: keyID)
        self.client = client
        self.timeout = timeout
    }

    /// Registers the device's key, signed by it (the server's proof of possession).
    /// - Parameters:
    ///   - encryptionKey: the X25519 or P-256 public key its data keys are to be sealed to, if any.
    ///     Registering again with another one is refused (`encryption-key-mismatch`): use
    ///     ``setEncryptionKey(_:)``.
    ///   - token: a registration token from the server's admin, when it registers by token.
    ///   - platform: the platform label a token may be bound to (`ios`, `android`…).
    /// - Returns: the key id and algorithm, and whether this request registered it.
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `invalid-token`,
    ///   `token-required`, `registration-closed`, `encryption-key-mismatch`, `key-exists`,
    ///   `key-revoked`, `rate-limited`…
    public func register(encryptionKey: RecipientPublicKey? = nil, token: String? = nil, platform: String? = nil) async throws(ServerClientError) -> Registration {
        struct Body: Encodable {
            let publicKey: String
            let algorithm: String?
            let encryptionKey: String?
            let token: String?
            let platform: String?
        }
        let body = Body(
            publicKey: publicKey.pemRepresentation, algorithm: algorithm?.rawValue,
            encryptionKey: encryptionKey.map { PEMArmor.encode($0.derRepresentation, label: "PUBLIC KEY") }, token: token, platform: platform
        )
        let (status, answer) = try await SignedExchange.send(
            .post, "/register", body: SignedExchange.json(body), to: server, signer: signer, client: client, timeout: timeout, decoding: Registration.self
        )
        var registration = answer
        registration.created = status == 201
        return registration
    }

    /// Sets (adds or replaces) the encryption key this device's data keys are sealed to; the server
    /// logs the change and keeps it in the key's history.
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `invalid-encryption-key`,
    ///   `key-revoked`, `rate-limited`…
    public func setEncryptionKey(_ encryptionKey: RecipientPublicKey) async throws(ServerClientError) -> EncryptionKeyChange {
        let body = SignedExchange.json(["encryptionKey": PEMArmor.encode(encryptionKey.derRepresentation, label: "PUBLIC KEY")])
        return try await SignedExchange.send(
            .post, "/encryption-key", body: body, to: server, signer: signer, client: client, timeout: timeout, decoding: EncryptionKeyChange.self
        ).answer
    }

    /// Signs up a user, signed by this device. The server verifies no address: the device becomes no
    /// member of the user (per-user data keys need an admin's link, made by the backend after its own
    /// sign-in).
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `email-exists`, `sign-up-limit`,
    ///   `invalid-email`, `invalid-name`, `invalid-request`…
    public func signUp(email: String, name: String) async throws(ServerClientError) -> User {
        try await SignedExchange.send(
            .post, "/register_user", body: SignedExchange.json(["email": email, "name": name]), to: server, signer: signer, client: client,
            timeout: timeout, decoding: User.self
        ).answer
    }
}

extension DataKeyClient {
    /// A data-key client for a device: its signer, its server and HTTP client, and the private half of
    /// the encryption key it registered.
    /// - Parameters:
    ///   - device: the device's client.
    ///   - identity: the encryption private key.
    public init(device: DeviceClient, identity: RecipientPrivateKey) {
        self.init(server: device.server, signer: device.signer, identity: identity, client: device.client, timeout: device.timeout)
    }
}
