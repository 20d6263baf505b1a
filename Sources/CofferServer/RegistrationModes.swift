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
