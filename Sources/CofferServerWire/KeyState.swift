/// Whether a registered key may sign: `state` in the admin API's key records, the same type on the
/// server that writes it and the client that reads it.
///
/// A client that meets a state it does not know refuses the answer (decoding fails) rather than guess.
public enum KeyState: String, Sendable, Hashable, CaseIterable, Codable {
    /// It signs.
    case active
    /// An admin stopped it; an admin can enable it again.
    case disabled
    /// An admin withdrew it for good: it never signs again, and cannot be enabled.
    case revoked
}

/// What one change in a key's history changed: `kind` in the admin API's key events.
public enum KeyEventKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// The key was registered.
    case registered
    /// The device's encryption key was set or replaced (`detail`: the old and new ids).
    case encryptionKey = "encryption-key"
    /// An admin disabled, enabled or revoked it (`detail`: the new state).
    case state
    /// It was linked to a user, or unlinked (`detail` says which).
    case user
}
