import CofferServerWire

// The admin API's answers (CofferServerWire, shared with the clients) from the store's records.

extension AdminKeyRecord {
    /// A key as the admin API lists it: never its secret.
    init(_ key: RegisteredKey) {
        self.init(
            keyId: key.keyID, algorithm: key.algorithm.rawValue, state: key.state, createdAt: key.createdAt,
            // Uses are recorded to the minute: never shown before the key existed.
            lastUsedAt: key.lastUsedAt.map { max($0, key.createdAt) }, userId: key.userID,
            encryptionKeyId: EncryptionKeyIdentity.id(ofStored: key.encryptionKey)
        )
    }
}

extension AdminKeyEvent {
    /// One change in a key's history, as the admin API lists it.
    init(_ event: KeyEvent) {
        self.init(at: event.at, kind: event.kind, actor: event.actor, detail: event.detail)
    }
}

extension AdminUserRecord {
    /// A user as the admin API lists it.
    init(_ user: RegisteredUser) {
        self.init(id: user.id, email: user.email, name: user.name, createdAt: user.createdAt, keyId: user.keyID)
    }
}

extension AdminTokenRecord {
    /// A token as the admin API lists it: never its secret.
    init(_ token: RegistrationToken) {
        self.init(
            tokenId: token.tokenID, uses: token.uses, usesLeft: token.usesLeft, expiresAt: token.expiresAt, platform: token.platform,
            revoked: token.revoked, createdAt: token.createdAt
        )
    }
}

extension TokenRequest: StrictRequestBody {
    static var fields: Set<String> { ["uses", "expiresIn", "platform"] }
    static var emptyBodyIsEmptyObject: Bool { true }
}

extension KeyLinkRequest: StrictRequestBody {
    static var fields: Set<String> { ["userId", "email"] }
}
