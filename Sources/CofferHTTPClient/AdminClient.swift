public import AsyncHTTPClient
public import CofferCore
public import CofferCrypto
import CofferHTTPSignatures
public import CofferServerWire
import Foundation
import HTTPTypes
public import NIOCore

/// A client for a Coffer registration server's admin API (docs/SERVER.md): every request signed with
/// an admin's private key, whose `keyid` is its Coffer key id, covering `@method`, `@target-uri` and
/// `content-digest`, with `created` and a nonce.
///
/// ```swift
/// let admin = try AdminClient(server: "https://api.example", key: adminKey)
/// for key in try await admin.keys() where key.state == .active { print(key.keyId) }
/// let issued = try await admin.createToken(uses: 10, expiresIn: 86_400, platform: "ios")
/// ```
public struct AdminClient: Sendable {
    /// A registered key as the admin API lists it (its `state` a `KeyState` (CofferServerWire)).
    public typealias KeyRecord = AdminKeyRecord
    /// One change in a key's history (docs/SERVER.md, "Admin API"; its `kind` a
    /// `KeyEventKind` (CofferServerWire)).
    public typealias KeyEvent = AdminKeyEvent
    /// A user as the admin API lists it.
    public typealias UserRecord = AdminUserRecord
    /// A registration token as the admin API lists it (never the token itself).
    public typealias TokenRecord = AdminTokenRecord
    /// A token just issued: the only time its secret is shown.
    public typealias IssuedToken = IssuedRegistrationToken

    /// What the admin API can do to a key.
    public enum KeyAction: String, Sendable, CaseIterable {
        /// Stop it signing, until enabled.
        case disable
        /// Let a disabled key sign again.
        case enable
        /// Stop it for good.
        case revoke
    }

    /// The server's base URL.
    public let server: ServerURL
    private let signer: HTTPMessageSigner
    private let client: HTTPClient
    private let timeout: TimeAmount

    /// A client for the admin API at `server`, signing with `key`.
    /// - Parameters:
    ///   - server: the server's URL (`https://host[:port]`).
    ///   - key: an admin's private key (EC or Ed25519; in memory, or on a token: `SigningKey(tokenKey)`), one
    ///     the server was started with.
    ///   - client: the HTTP client; the shared one by default. To pin the server, a client made with
    ///     CofferPinning's `HTTPClient.Configuration.pinned(by:host:)` for the server's host. Redirects
    ///     are never followed (`HTTPClient.execute(signing:body:with:timeout:)`).
    ///   - timeout: how long each exchange may take.
    /// - Throws: `CofferCoreError` for a URL that cannot be used; `HTTPSignatureError` for a key that
    ///   cannot sign HTTP requests.
    public init(server: String, key: SigningKey, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30)) throws {
        self.server = try ServerURL(server)
        signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: key.verifyingKey.fingerprint.keyID)
        self.client = client
        self.timeout = timeout
    }

    /// Every registered key, oldest first, read a page at a time.
    public func keys() async throws(ServerClientError) -> [KeyRecord] {
        var keys: [KeyRecord] = []
        var after: String?
        repeat {
            let path = "/admin/keys" + (after.map { "?after=" + ($0.addingPercentEncoding(withAllowedCharacters: Self.queryValue) ?? "") } ?? "")
            let page = try await send(.get, path, decoding: AdminKeyList.self)
            keys += page.keys
            after = try Self.next(page.next, after: after, pageSize: page.keys.count)
        } while after != nil
        return keys
    }

    /// The key's history, newest first (at most 1,000 events).
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `unknown-key`.
    public func events(ofKey keyID: String) async throws(ServerClientError) -> [KeyEvent] {
        try await send(.get, "/admin/keys/\(Self.pathSegment(keyID))/events", decoding: AdminKeyEventList.self).events
    }

    /// The user whose address is `email` (compared as the server's sign-up compares them: NFC, case
    /// ignored), or every user when nil, oldest first. What the backend looks up, by the address it
    /// verified itself, before linking a device with ``link(key:toUser:email:)``.
    /// Every user is read a page at a time.
    public func users(email: String? = nil) async throws(ServerClientError) -> [UserRecord] {
        if let email {
            return try await send(.get, "/admin/users?email=" + (email.addingPercentEncoding(withAllowedCharacters: Self.queryValue) ?? ""), decoding: AdminUserList.self).users
        }
        var users: [UserRecord] = []
        var after: String?
        repeat {
            let page = try await send(.get, "/admin/users" + (after.map { "?after=" + ($0.addingPercentEncoding(withAllowedCharacters: Self.queryValue) ?? "") } ?? ""), decoding: AdminUserList.self)
            users += page.users
            after = try Self.next(page.next, after: after, pageSize: page.users.count)
        } while after != nil
        return users
    }

    /// The next page's start, checked: a page that names a next page must hold records and move on
    /// (a server that answers otherwise would keep the client reading for ever).
    private static func next(_ next: String?, after previous: String?, pageSize: Int) throws(ServerClientError) -> String? {
        guard let next else { return nil }
        guard pageSize > 0, next != previous else {
            throw ServerClientError(.unexpectedAnswer, "the server's listing names a next page that does not move on")
        }
        return next
    }

    private static let queryValue = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))

    /// Disables, enables or revokes a key; the record afterwards.
    public func apply(_ action: KeyAction, toKey keyID: String) async throws(ServerClientError) -> KeyRecord {
        try await send(.post, "/admin/keys/\(Self.pathSegment(keyID))/\(action.rawValue)", decoding: KeyRecord.self)
    }

    /// Links a device's key to a user, once the backend has verified, by its own sign-in, that the user
    /// is the one on that device: with per-user data keys, the device then gets that user's key. Only
    /// this link makes a device a member of a user; link by what the backend verified, never by an id or
    /// address the device claims. The server links only when user `userID` holds `email`, the address
    /// the backend verified (a number can be given again); a server with master keys requires it. The
    /// record afterwards.
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `unknown-key`, `unknown-user` (no
    ///   such user, or not with that address) or `invalid-request` (no address, where one is required).
    public func link(key keyID: String, toUser userID: Int64, email: String? = nil) async throws(ServerClientError) -> KeyRecord {
        let body = KeyLinkRequest(userId: userID, email: email)
        return try await send(.post, "/admin/keys/\(Self.pathSegment(keyID))/user", body: SignedExchange.json(body), decoding: KeyRecord.self)
    }

    /// Issues a registration token.
    /// - Parameters:
    ///   - uses: registrations it allows, 1 to 10,000.
    ///   - expiresIn: seconds until it stops working, 60 to 30 days.
    ///   - platform: the platform label a registration with it must give, if any.
    public func createToken(uses: Int = 1, expiresIn: Int64 = 86_400, platform: String? = nil) async throws(ServerClientError) -> IssuedToken {
        let request = TokenRequest(uses: uses, expiresIn: expiresIn, platform: platform)
        return try await send(.post, "/admin/tokens", body: SignedExchange.json(request), decoding: IssuedToken.self)
    }

    /// Every token, newest first.
    public func tokens() async throws(ServerClientError) -> [TokenRecord] {
        try await send(.get, "/admin/tokens", decoding: AdminTokenList.self).tokens
    }

    /// Revokes a token.
    public func revokeToken(id tokenID: String) async throws(ServerClientError) {
        _ = try await send(.post, "/admin/tokens/\(Self.pathSegment(tokenID))/revoke", decoding: RevokedRegistrationToken.self)
    }

    /// Makes a new version of the data key the key `keyID` uses (its own, or its user's with per-user
    /// data keys); devices get it at their next fetch, and older versions stay available.
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `unknown-key`, `no-user`, or
    ///   `master-key-unavailable` (the server cannot write a data key now).
    public func rotateDataKey(ofKey keyID: String) async throws(ServerClientError) -> RotatedDataKey {
        try await send(.post, "/admin/data-keys/\(Self.pathSegment(keyID))/rotate", decoding: RotatedDataKey.self)
    }

    /// Stops issuing the versions below `minimumVersion` of the data key the key `keyID` uses: what they
    /// encrypted must have been re-encrypted first. The floor is never lowered.
    /// - Throws: ``ServerClientError``: `.refused` with `problemReason` `unknown-key` (no such key, or
    ///   no data key yet) or `invalid-request` (`minimumVersion` is not 1 to the newest version).
    public func retireDataKeys(ofKey keyID: String, below minimumVersion: Int64) async throws(ServerClientError) -> RetiredDataKeys {
        try await send(
            .post, "/admin/data-keys/\(Self.pathSegment(keyID))/retire", body: SignedExchange.json(DataKeyRetireRequest(minVersion: minimumVersion)),
            decoding: RetiredDataKeys.self
        )
    }

    /// A key or token id as one path segment (ids are base64url or hex; anything else is escaped).
    static func pathSegment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_"))) ?? id
    }

    private func send<Reply: Decodable>(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8] = [], decoding: Reply.Type
    ) async throws(ServerClientError) -> Reply {
        try await SignedExchange.send(method, path, body: body, to: server, signer: signer, client: client, timeout: timeout, decoding: decoding).answer
    }
}

/// One signed request to a Coffer server and its JSON answer, or the problem document as an error.
enum SignedExchange {
    /// A body's JSON (its fields' order is not the API's concern); empty when it cannot be encoded.
    static func json(_ value: some Encodable) -> [UInt8] {
        (try? JSONEncoder().encode(value)).map { Array($0) } ?? []
    }

    static func send<Reply: Decodable>(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8], to server: ServerURL, signer: HTTPMessageSigner,
        client: HTTPClient, timeout: TimeAmount, decoding: Reply.Type
    ) async throws(ServerClientError) -> (status: Int, answer: Reply) {
        var request = HTTPRequest(method: method, scheme: server.scheme, authority: server.authority, path: path)
        if !body.isEmpty { request.headerFields[.contentType] = "application/json" }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(signing: request, body: body, with: signer, timeout: timeout)
            bytes = try await response.body.collect(upTo: 16 << 20)
        } catch let error as ServerClientError {
            throw error
        } catch {
            throw ServerClientError(.unreachable, "the server did not answer: \(error)", underlying: error)
        }
        let data = Data(bytes.readableBytesView)
        if let location = response.redirectLocation {
            throw ServerClientError(
                .refused, "HTTP \(response.status.code): the server redirected the request to \(location); a signed request is not followed, so nothing was sent there",
                status: Int(response.status.code)
            )
        }
        guard (200..<300).contains(response.status.code) else {
            let problem = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            throw ServerClientError(
                .refused, "HTTP \(response.status.code) \(problem?["reason"] as? String ?? ""): \(problem?["detail"] as? String ?? "no details")",
                status: Int(response.status.code), problemReason: problem?["reason"] as? String
            )
        }
        do {
            return (Int(response.status.code), try JSONDecoder().decode(Reply.self, from: data))
        } catch {
            throw ServerClientError(.unexpectedAnswer, "the server's answer is not the JSON its API documents", underlying: error)
        }
    }
}
