public import AsyncHTTPClient
public import CofferCore
public import CofferFormats
public import CofferHTTPSignatures
import CofferServerWire
import Foundation
import HTTPTypes
public import NIOCore

/// The app's side of server-held data keys (docs/SERVER.md, "Data keys"): a device that registered an
/// encryption key alongside its signing key fetches its 256-bit data key — sealed to that encryption
/// key, opened here — and encrypts its local data with it, without asking the user for a password.
///
/// ```swift
/// let device = try DeviceClient(server: "https://api.example", key: signingKey)
/// _ = try await device.register(encryptionKey: deviceKey.publicKey)
/// let dataKey = try await DataKeyClient(device: device, identity: deviceKey).fetch()
/// try CofferEncryption.encryptFile(atPath: "notes.db", toPath: "notes.db.coffer", to: .key(dataKey.key))
/// ```
public struct DataKeyClient: Sendable {
    /// One version of the device's data key, opened.
    public struct DataKey: Sendable {
        /// The key's public id (the same for every version).
        public let dataKeyID: String
        /// This version.
        public let version: Int64
        /// The key, ready for the encrypted format's key mode.
        public let key: EncryptionKey
        /// The newest version the server holds.
        public let newestVersion: Int64
        /// The oldest version it still hands out.
        public let minimumVersion: Int64
    }

    /// The server's base URL.
    public let server: ServerURL
    private let signer: HTTPMessageSigner
    private let identity: RecipientPrivateKey
    private let client: HTTPClient
    private let timeout: TimeAmount

    /// A client for the device whose registered key signs with `signer` (its `keyID` is the one
    /// `POST /register` answered) and whose encryption private key is `identity`.
    /// - Parameters:
    ///   - server: the server's URL.
    ///   - signer: the device's signer (registered key and key id); it must cover `@method`,
    ///     `@target-uri` and `content-digest` and add a nonce, as its defaults do.
    ///   - identity: the private half of the encryption key the device registered.
    ///   - client: the HTTP client; the shared one by default. To pin the server, a client made with
    ///     CofferPinning's `HTTPClient.Configuration.pinned(by:host:)` for the server's host. Redirects
    ///     are never followed (`HTTPClient.execute(signing:body:with:timeout:)`).
    ///   - timeout: how long each exchange may take.
    /// - Throws: `CofferCoreError` for a URL that cannot be used.
    public init(server: String, signer: HTTPMessageSigner, identity: RecipientPrivateKey, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30)) throws {
        self.init(server: try ServerURL(server), signer: signer, identity: identity, client: client, timeout: timeout)
    }

    init(server: ServerURL, signer: HTTPMessageSigner, identity: RecipientPrivateKey, client: HTTPClient, timeout: TimeAmount) {
        self.server = server
        self.signer = signer
        self.identity = identity
        self.client = client
        self.timeout = timeout
    }

    /// The data key: its newest version, or `version` (an older one, to decrypt what it encrypted).
    /// The server makes the first version on the first request.
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `key-revoked` (the device was
    ///   revoked), `no-encryption-key`, `version-retired`, `unknown-version`; `.unexpectedAnswer` for an
    ///   envelope that does not open with `identity` (another device's, or altered).
    public func fetch(version: Int64? = nil) async throws(ServerClientError) -> DataKey {
        let body = version.map { Array(#"{"version":\#($0)}"#.utf8) } ?? Array("{}".utf8)
        return try open(try await SignedExchange.send(
            .post, "/data-keys", body: body, to: server, signer: signer, client: client, timeout: timeout, decoding: SealedDataKey.self
        ).answer)
    }

    /// Makes a new version and returns it; older versions stay fetchable until an admin retires them.
    public func rotate() async throws(ServerClientError) -> DataKey {
        try open(try await SignedExchange.send(
            .post, "/data-keys/rotate", body: Array("{}".utf8), to: server, signer: signer, client: client, timeout: timeout, decoding: SealedDataKey.self
        ).answer)
    }

    private func open(_ answer: SealedDataKey) throws(ServerClientError) -> DataKey {
        let context = DataKeyEnvelope.context(dataKeyID: answer.dataKeyId, version: answer.version, deviceKeyID: signer.keyID)
        do {
            var bytes = try DataKeyEnvelope.open(try Base64.decode(answer.envelope), with: identity, context: context)
            defer { SecretBytes.wipe(&bytes) }
            return DataKey(
                dataKeyID: answer.dataKeyId, version: answer.version, key: try EncryptionKey(bytes: bytes),
                newestVersion: answer.newestVersion, minimumVersion: answer.minimumVersion
            )
        } catch {
            throw ServerClientError(.unexpectedAnswer, "the data key the server sent does not open with this device's key: \(error)", underlying: error)
        }
    }
}
