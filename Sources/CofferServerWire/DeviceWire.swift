/// What the server answers to `POST /register` for a public key (`201` new, `200` already registered).
public struct DeviceRegistration: Codable, Sendable, Hashable {
    /// The id the key is registered as (what every signed request names in `keyid`).
    public let keyId: String
    /// The algorithm bound to it.
    public let algorithm: String
    /// Whether this request registered it (`201`); false when it was already registered with nothing
    /// to change (`200`). Not on the wire: the client sets it from the status.
    public var created: Bool = false

    private enum CodingKeys: String, CodingKey { case keyId, algorithm }

    /// A registration from its fields.
    public init(keyId: String, algorithm: String, created: Bool = false) {
        self.keyId = keyId
        self.algorithm = algorithm
        self.created = created
    }
}

/// What the server answers to `POST /encryption-key`.
public struct EncryptionKeyUpdate: Codable, Sendable, Hashable {
    /// The device's key id.
    public let keyId: String
    /// The encryption key's id: the first 8 bytes of the SHA-256 of its SubjectPublicKeyInfo, hex.
    public let encryptionKeyId: String
    /// Whether it changed (false when it was already the device's encryption key).
    public let changed: Bool

    /// An answer from its fields.
    public init(keyId: String, encryptionKeyId: String, changed: Bool) {
        self.keyId = keyId
        self.encryptionKeyId = encryptionKeyId
        self.changed = changed
    }
}

/// A user as `POST /register_user` answers it (`201`).
public struct SignedUpUser: Codable, Sendable, Hashable {
    /// The user's id.
    public let id: Int64
    /// The address as the server stores it (normalized).
    public let email: String
    /// The name.
    public let name: String
    /// The key that signed the user up.
    public let keyId: String

    /// A user from its fields.
    public init(id: Int64, email: String, name: String, keyId: String) {
        self.id = id
        self.email = email
        self.name = name
        self.keyId = keyId
    }
}

/// What the server answers to `POST /data-keys` and `POST /data-keys/rotate`: one version of the data
/// key, sealed to the device's encryption key.
public struct SealedDataKey: Codable, Sendable, Hashable {
    /// The key's public id (the same for every version).
    public let dataKeyId: String
    /// This version.
    public let version: Int64
    /// The data key sealed to the device (a data-key envelope, base64).
    public let envelope: String
    /// The newest version the server holds.
    public let newestVersion: Int64
    /// The oldest version it still hands out.
    public let minimumVersion: Int64

    /// An answer from its fields.
    public init(dataKeyId: String, version: Int64, envelope: String, newestVersion: Int64, minimumVersion: Int64) {
        self.dataKeyId = dataKeyId
        self.version = version
        self.envelope = envelope
        self.newestVersion = newestVersion
        self.minimumVersion = minimumVersion
    }
}
