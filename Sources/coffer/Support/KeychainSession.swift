import CCofferSupport
import CofferCore
import CofferKeychain
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `coffer keychain unlock`'s state between commands: the keychain's session key in the Linux kernel's
/// session keyring (keyrings(7)), with a timeout, so later commands of the same login session need no
/// password and the master key never touches the disk. `lock` invalidates it.
enum KeychainSession {
    static func description(for path: String) -> String {
        "coffer-keychain:" + (path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
    }

    /// Keeps the unlocked state for `seconds`. - Throws: when the kernel keyring is not available.
    static func store(_ keychain: Keychain, path: String, seconds: UInt32) throws {
        var bytes = try keychain.sessionKeyBytes()
        defer { SecretBytes.wipe(&bytes) }
        let description = description(for: path)
        if let old = find(description) { _ = coffer_session_key_invalidate(old) }
        let id = bytes.withUnsafeBytes { coffer_session_key_add(description, $0.baseAddress, UInt($0.count)) }
        guard id >= 0 else {
            throw CommandFailure(
                "cannot keep the keychain unlocked: the kernel keyring refused (\(String(cString: strerror(errno))))",
                hint: "each command will ask for the password instead"
            )
        }
        _ = coffer_session_key_set_timeout(id, seconds)
    }

    private static func find(_ description: String) -> Int? {
        let id = coffer_session_key_search(description)
        return id >= 0 ? id : nil
    }

    /// Unlocks `keychain` from the session keyring; false when there is no valid entry.
    static func restore(_ keychain: Keychain, path: String) -> Bool {
        guard let id = find(description(for: path)) else { return false }
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

    /// Whether an unlocked session exists for `path`.
    static func exists(path: String) -> Bool { find(description(for: path)) != nil }

    /// Ends the session; true when there was one.
    @discardableResult
    static func end(path: String) -> Bool {
        guard let id = find(description(for: path)) else { return false }
        return coffer_session_key_invalidate(id) == 0
    }
}
