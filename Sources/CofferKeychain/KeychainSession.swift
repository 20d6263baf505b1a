import CCofferSupport
import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps an unlocked keychain unlocked between processes of one login session, as `coffer keychain
/// unlock` does: the keychain's session key goes into the Linux kernel's keyring (keyrings(7)) with a
/// timeout, so later processes of the same login session need no password, and the master key never
/// touches the disk. ``end(_:path:)`` invalidates it.
///
/// Entries are named by the keychain's identity (``Keychain/identifier``), not by its path, so any
/// spelling of the path (`kc/k.db`, `./kc/k.db`, a symbolic link) finds and locks the same entry. The
/// session key is bound to the keychain's header: an entry made before a password change or a rotation
/// no longer unlocks. Only on Linux; elsewhere ``keepUnlocked(_:for:allowingUserWideKeyring:)`` throws
/// `.keyringUnavailable` and nothing is ever found.
///
/// ```swift
/// try keychain.unlock(password: password)
/// let keyring = try KeychainSession.keepUnlocked(keychain, for: 900, allowingUserWideKeyring: false)
/// // …in a later process of the same login session:
/// if KeychainSession.restore(keychain) { /* unlocked without a password */ }
/// ```
public enum KeychainSession {
    /// Where an unlocked key is kept.
    public enum Keyring: Sendable, Hashable, CustomStringConvertible {
        /// The login session's keyring: gone when the session ends, invisible to other sessions.
        case loginSession
        /// The user-wide default session keyring (`_uid_ses.UID`), shared by every session of the user
        /// and outliving them: only when asked for with `--user-keyring`.
        case userWide

        var which: Int32 {
            switch self {
            case .loginSession: Int32(coffer_keyring_session)
            case .userWide: Int32(coffer_keyring_user_session)
            }
        }

        /// Names the keyring for a person.
        public var description: String {
            switch self {
            case .loginSession: "this login session's keyring"
            case .userWide: "the user-wide keyring _uid_ses.\(getuid()), shared by every session of this user"
            }
        }
    }

    static func description(for keychain: Keychain) throws(KeychainError) -> String {
        "coffer-keychain:" + (try keychain.identifier)
    }

    /// The names versions before issue 20 used: the path as typed, made absolute.
    static func legacyDescriptions(forPath path: String) -> [String] {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let canonical = URL(fileURLWithPath: absolute).resolvingSymlinksInPath().path
        return Array(Set(["coffer-keychain:" + absolute, "coffer-keychain:" + canonical]))
    }

    /// Keeps `keychain`'s unlocked state for `seconds` and says where. The user-wide keyring is used
    /// only when `allowingUserWideKeyring`: a process without a login-session keyring is refused.
    /// - Throws: ``KeychainError`` `.keyringUnavailable` when the kernel keyring is unavailable or
    ///   refuses, `.userWideKeyringNotAllowed` when only the user-wide one is there and it was not
    ///   allowed, `.interactionNotAllowed` when the keychain is locked.
    public static func keepUnlocked(_ keychain: Keychain, for seconds: UInt32, allowingUserWideKeyring allowingUserWide: Bool) throws(KeychainError) -> Keyring {
        let onlyUserWide: Bool
        switch coffer_keyring_session_is_user_default() {
        case 0: onlyUserWide = false
        case 1: onlyUserWide = true
        default:
            throw KeychainError(.keyringUnavailable, "cannot keep the keychain unlocked: the kernel keyring is unavailable (\(String(cString: strerror(errno))))")
        }
        let keyring: Keyring = allowingUserWide || onlyUserWide ? .userWide : .loginSession
        if keyring == .userWide && !allowingUserWide {
            throw KeychainError(
                .userWideKeyringNotAllowed,
                "this process has no login-session keyring, so the unlocked key would go to the user-wide keyring _uid_ses.\(getuid()), which every session of this user shares and which outlives them"
            )
        }
        var bytes = try keychain.sessionKeyBytes()
        defer { SecretBytes.wipe(&bytes) }
        let description = try description(for: keychain)
        for which in [Keyring.loginSession, .userWide] {
            if let old = find(description, in: which) { _ = coffer_session_key_invalidate(old) }
        }
        let id = bytes.withUnsafeBytes { coffer_session_key_add(keyring.which, description, $0.baseAddress, UInt($0.count)) }
        guard id >= 0 else {
            throw KeychainError(.keyringUnavailable, "cannot keep the keychain unlocked: the kernel keyring refused (\(String(cString: strerror(errno))))")
        }
        _ = coffer_session_key_set_timeout(id, seconds)
        return keyring
    }

    private static func find(_ description: String, in keyring: Keyring) -> Int? {
        let id = coffer_session_key_search(keyring.which, description)
        return id >= 0 ? id : nil
    }

    /// The entry for `keychain`: in the login session's keyring (which is the user-wide one when the
    /// process has no session of its own), else in the user-wide one.
    private static func find(_ keychain: Keychain) -> Int? {
        guard let description = try? description(for: keychain) else { return nil }
        return find(description, in: .loginSession) ?? find(description, in: .userWide)
    }

    /// Unlocks `keychain` from the keyring; false when there is no valid entry (none, expired, or made
    /// for the keychain's old password or master key).
    public static func restore(_ keychain: Keychain) -> Bool {
        guard let id = find(keychain) else { return false }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { coffer_session_key_read(id, $0.baseAddress, UInt($0.count)) }
        defer { SecretBytes.wipe(&buffer) }
        guard count == 64 else { return false }
        do {
            try keychain.unlock(sessionKey: Array(buffer[0..<64]))
            return true
        } catch {
            return false
        }
    }

    /// Whether an unlocked entry exists for `keychain`.
    public static func exists(_ keychain: Keychain) -> Bool { find(keychain) != nil }

    /// Ends the unlocked state of `keychain`, which was opened from `path` (and removes any entry an
    /// earlier version made under the path's name); true when there was one.
    @discardableResult
    public static func end(_ keychain: Keychain, path: String) -> Bool {
        var ended = false
        var descriptions = legacyDescriptions(forPath: path)
        if let current = try? description(for: keychain) { descriptions.append(current) }
        for description in descriptions {
            for keyring in [Keyring.loginSession, .userWide] {
                while let id = find(description, in: keyring) {
                    guard coffer_session_key_invalidate(id) == 0 else { break }
                    ended = true
                }
            }
        }
        return ended
    }
}
