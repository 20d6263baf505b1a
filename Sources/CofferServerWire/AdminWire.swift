/// A registered key as the admin API lists it (`GET /admin/keys`, and the answer of every route that
/// changes a key): never its secret.
public struct AdminKeyRecord: Codable, Sendable, Hashable {
    /// The id clients sign with.
    public let keyId: String
    /// The algorithm bound to it (an RFC 9421 algorithm name, `ed25519`, `ecdsa-p256-sha256`…).
    public let algorithm: String
    /// Whether it may sign.
    public let state: KeyState
    /// Registration time, UNIX seconds.
    public let createdAt: Int64
    /// The last accepted signature's time, to the minute; nil before the first.
    public let lastUsedAt: Int64?
    /// The user the device belongs to (per-user data keys), if any: only an admin's link makes it one.
    public let userId: Int64?
    /// The id of the encryption key its data keys are sealed to (the first 8 bytes of the SHA-256 of
    /// its SubjectPublicKeyInfo, hex), if it has one.
    public let encryptionKeyId: String?

    /// A record from its fields.
    public init(keyId: String, algorithm: String, state: KeyState, createdAt: Int64, lastUsedAt: Int64?, userId: Int64?, encryptionKeyId: String?) {
        self.keyId = keyId
        self.algorithm = algorithm
        self.state = state
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.userId = userId
        self.encryptionKeyId = encryptionKeyId
    }
}

/// One change in a key's history (`GET /admin/keys/{keyId}/events`).
public struct AdminKeyEvent: Codable, Sendable, Hashable {
    /// When, UNIX seconds.
    public let at: Int64
    /// What changed.
    public let kind: KeyEventKind
    /// Who changed it: `key:<keyId>`, `admin:<keyId>` or `migration`.
    public let actor: String
    /// What it became, where the kind does not say.
    public let detail: String?

    /// An event from its fields.
    public init(at: Int64, kind: KeyEventKind, actor: String, detail: String?) {
        self.at = at
        self.kind = kind
        self.actor = actor
        self.detail = detail
    }
}

/// A user as the admin API lists it (`GET /admin/users`).
public struct AdminUserRecord: Codable, Sendable, Hashable {
    /// The user's id (what `POST /admin/keys/{keyId}/user` takes).
    public let id: Int64
    /// The address as stored (normalized); the server verified none.
    public let email: String
    /// The name.
    public let name: String
    /// Sign-up time, UNIX seconds.
    public let createdAt: Int64
    /// The key that signed the user up (its creator, which is no member of it).
    public let keyId: String

    /// A user from its fields.
    public init(id: Int64, email: String, name: String, createdAt: Int64, keyId: String) {
        self.id = id
        self.email = email
        self.name = name
        self.createdAt = createdAt
        self.keyId = keyId
    }
}

/// A registration token as the admin API lists it (`GET /admin/tokens`): never the token itself.
public struct AdminTokenRecord: Codable, Sendable, Hashable {
    /// The token's public id.
    public let tokenId: String
    /// Registrations it allows in all.
    public let uses: Int
    /// Registrations it still allows.
    public let usesLeft: Int
    /// Expiry, UNIX seconds.
    public let expiresAt: Int64
    /// The platform label it is bound to, if any.
    public let platform: String?
    /// Whether it was revoked.
    public let revoked: Bool
    /// Issue time, UNIX seconds.
    public let createdAt: Int64

    /// A token record from its fields.
    public init(tokenId: String, uses: Int, usesLeft: Int, expiresAt: Int64, platform: String?, revoked: Bool, createdAt: Int64) {
        self.tokenId = tokenId
        self.uses = uses
        self.usesLeft = usesLeft
        self.expiresAt = expiresAt
        self.platform = platform
        self.revoked = revoked
        self.createdAt = createdAt
    }
}

/// A token just issued (`201` of `POST /admin/tokens`): the only time its secret is shown.
public struct IssuedRegistrationToken: Codable, Sendable, Hashable {
    /// The token's public id.
    public let tokenId: String
    /// The secret an app sends in `POST /register` as `"token"`.
    public let token: String
    /// Registrations it allows.
    public let uses: Int
    /// Expiry, UNIX seconds.
    public let expiresAt: Int64
    /// The platform label it is bound to, if any.
    public let platform: String?

    /// An issued token from its fields.
    public init(tokenId: String, token: String, uses: Int, expiresAt: Int64, platform: String?) {
        self.tokenId = tokenId
        self.token = token
        self.uses = uses
        self.expiresAt = expiresAt
        self.platform = platform
    }
}

/// The answer of `POST /admin/tokens/{tokenId}/revoke`.
public struct RevokedRegistrationToken: Codable, Sendable, Hashable {
    /// The token's public id.
    public let tokenId: String
    /// Always true: the token is revoked.
    public let revoked: Bool

    /// The answer for `tokenId`.
    public init(tokenId: String, revoked: Bool) {
        self.tokenId = tokenId
        self.revoked = revoked
    }
}

/// The body of `POST /admin/tokens`: every field optional (the server's defaults: 1 use, 86,400 s, no
/// platform).
public struct TokenRequest: Codable, Sendable, Hashable {
    /// Registrations it allows, 1 to 10,000.
    public let uses: Int?
    /// Seconds until it stops working, 60 to 2,592,000 (30 days).
    public let expiresIn: Int64?
    /// The platform label a registration with it must give.
    public let platform: String?

    /// A request from its fields.
    public init(uses: Int?, expiresIn: Int64?, platform: String?) {
        self.uses = uses
        self.expiresIn = expiresIn
        self.platform = platform
    }
}

/// The body of `POST /admin/keys/{keyId}/user`: the user's number and the address the link was
/// decided on.
public struct KeyLinkRequest: Codable, Sendable, Hashable {
    /// The user's id.
    public let userId: Int64
    /// The user's address, as the backend verified it: the server links only when user `userId` holds
    /// it (compared as the look-up compares), so that a number given again is never linked in the
    /// verified user's place. A server with master keys requires it.
    public let email: String?

    /// A link to `userId`, which must hold `email`.
    public init(userId: Int64, email: String? = nil) {
        self.userId = userId
        self.email = email
    }
}

/// The admin API's listings: `{"keys": […]}`, `{"events": […]}`, `{"users": […]}`, `{"tokens": […]}`.
/// The keys and users come a page at a time (at most 10,000 records and 8 MiB): `next`, when present,
/// is what to pass as `after` for the rest.
public struct AdminKeyList: Codable, Sendable, Hashable {
    /// The keys, oldest first.
    public let keys: [AdminKeyRecord]
    /// Where the next page starts (`GET /admin/keys?after=…`); absent on the last page.
    public let next: String?
    /// A listing of `keys`, and where the next page starts, if there is one.
    public init(keys: [AdminKeyRecord], next: String? = nil) {
        self.keys = keys
        self.next = next
    }
}

/// `{"events": […]}`: a key's history, newest first.
public struct AdminKeyEventList: Codable, Sendable, Hashable {
    /// The events.
    public let events: [AdminKeyEvent]
    /// A listing of `events`.
    public init(events: [AdminKeyEvent]) { self.events = events }
}

/// `{"users": […]}`, a page at a time.
public struct AdminUserList: Codable, Sendable, Hashable {
    /// The users, oldest first.
    public let users: [AdminUserRecord]
    /// Where the next page starts (`GET /admin/users?after=…`); absent on the last page.
    public let next: String?
    /// A listing of `users`, and where the next page starts, if there is one.
    public init(users: [AdminUserRecord], next: String? = nil) {
        self.users = users
        self.next = next
    }
}

/// `{"tokens": […]}`: newest first.
public struct AdminTokenList: Codable, Sendable, Hashable {
    /// The tokens.
    public let tokens: [AdminTokenRecord]
    /// A listing of `tokens`.
    public init(tokens: [AdminTokenRecord]) { self.tokens = tokens }
}

/// The answer of `POST /admin/data-keys/{keyId}/rotate`: the new version of the data key the device's
/// key uses (its own, or its user's).
public struct RotatedDataKey: Codable, Sendable, Hashable {
    /// Whose data key it is: `key:<id>` or `user:<id>`.
    public let owner: String
    /// The data key's id (the same for every version).
    public let dataKeyId: String
    /// The new version.
    public let version: Int64

    /// The answer from its fields.
    public init(owner: String, dataKeyId: String, version: Int64) {
        self.owner = owner
        self.dataKeyId = dataKeyId
        self.version = version
    }
}

/// The body of `POST /admin/data-keys/{keyId}/retire`.
public struct DataKeyRetireRequest: Codable, Sendable, Hashable {
    /// The oldest version still issued; versions below it are refused from now on.
    public let minVersion: Int64

    /// A request from its field.
    public init(minVersion: Int64) {
        self.minVersion = minVersion
    }
}

/// The answer of `POST /admin/data-keys/{keyId}/retire`.
public struct RetiredDataKeys: Codable, Sendable, Hashable {
    /// Whose data key it is: `key:<id>` or `user:<id>`.
    public let owner: String
    /// The oldest version still issued (never lowered: a retire below it leaves it).
    public let minimumVersion: Int64

    /// The answer from its fields.
    public init(owner: String, minimumVersion: Int64) {
        self.owner = owner
        self.minimumVersion = minimumVersion
    }
}
