/// When an item's secret can be read, in Keychain Services' terms (`kSecAttrAccessible…`).
///
/// On Linux "unlocked" means the keychain password was given to ``Keychain/unlock(password:)`` and
/// ``Keychain/lock()`` was not called since.
public enum Accessibility: String, Sendable, Hashable, CaseIterable, Codable, LosslessStringConvertible {
    /// Readable only while the keychain is unlocked. The default, as on Apple platforms.
    case whenUnlocked
    /// Readable from the first unlock until the process ends, even after ``Keychain/lock()``: for
    /// background work (a sync job holding a token) that must go on after the user locks.
    case afterFirstUnlock
    /// ``whenUnlocked``, and never leaves this device: skipped by export.
    case whenUnlockedThisDeviceOnly
    /// ``afterFirstUnlock``, and never leaves this device: skipped by export.
    case afterFirstUnlockThisDeviceOnly

    /// Whether export leaves the item out.
    public var isThisDeviceOnly: Bool { self == .whenUnlockedThisDeviceOnly || self == .afterFirstUnlockThisDeviceOnly }

    /// Whether the item stays readable after ``Keychain/lock()`` once the keychain was unlocked.
    public var survivesLock: Bool { self == .afterFirstUnlock || self == .afterFirstUnlockThisDeviceOnly }

    /// The name in kebab case, as messages and ``KeychainItem``'s JSON write it: `when-unlocked`,
    /// `after-first-unlock`, `when-unlocked-this-device-only`, `after-first-unlock-this-device-only`.
    public var description: String {
        switch self {
        case .whenUnlocked: "when-unlocked"
        case .afterFirstUnlock: "after-first-unlock"
        case .whenUnlockedThisDeviceOnly: "when-unlocked-this-device-only"
        case .afterFirstUnlockThisDeviceOnly: "after-first-unlock-this-device-only"
        }
    }

    /// Reads a ``description`` (or the case name).
    public init?(_ description: String) {
        guard let match = Self.allCases.first(where: { $0.description == description || $0.rawValue == description }) else {
            return nil
        }
        self = match
    }
}

/// Extra conditions on reading one item, beyond its ``Accessibility`` (`SecAccessControl`).
public struct AccessControl: Sendable, Hashable {
    /// The item's secret is additionally sealed under a key derived from this application password
    /// (scrypt), which every read and update must supply: the keychain password alone does not open it.
    /// Never stored.
    public var applicationPassword: String?
    /// Every read asks the user to confirm presence. On Linux that means re-entering the keychain
    /// password through the keychain's ``Keychain/presencePrompt`` (there is no biometry); on Apple
    /// platforms it is `.userPresence` (Face ID, Touch ID or the passcode).
    public var requiresUserPresence: Bool

    /// No extra condition.
    public static let none = AccessControl(applicationPassword: nil, requiresUserPresence: false)

    /// Conditions as given.
    public init(applicationPassword: String? = nil, requiresUserPresence: Bool = false) {
        self.applicationPassword = applicationPassword
        self.requiresUserPresence = requiresUserPresence
    }
}
