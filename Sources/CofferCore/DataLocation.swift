#if canImport(Darwin)
import Foundation
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Where a user's application data lives: one rule for every Coffer module (the keychain's default file,
/// the server's default SQLite database, protected application folders).
///
/// - Apple platforms: the user's Application Support folder.
/// - Linux and other platforms: `$XDG_DATA_HOME` when it is an absolute path, otherwise
///   `$HOME/.local/share`. A relative `XDG_DATA_HOME` is ignored, as the XDG Base Directory
///   Specification requires ("all paths … must be absolute"), and `HOME` must be absolute too.
///
/// ```swift
/// let file = try DataLocation.cofferFolder() + "/keychain.db"   // ~/.local/share/coffer/keychain.db
/// ```
public enum DataLocation {
    /// The variables the data location depends on (`XDG_DATA_HOME`, `HOME`), read from this process's
    /// environment now.
    public static var currentEnvironment: [String: String] {
        var values: [String: String] = [:]
        for name in ["XDG_DATA_HOME", "HOME"] {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }

    /// The folder for this user's application data, by the rule above. It need not exist yet.
    /// - Throws: ``CofferCoreError`` `.fileNotFound` when neither variable names an absolute path (or,
    ///   on Apple platforms, when the system knows no Application Support folder).
    public static func userData(environment: [String: String] = currentEnvironment) throws(CofferCoreError) -> String {
        #if canImport(Darwin)
        guard let url = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first else {
            throw CofferCoreError(.fileNotFound, "no Application Support folder for this user")
        }
        return url.path
        #else
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw CofferCoreError(.fileNotFound, "neither XDG_DATA_HOME nor HOME is set to an absolute path")
        }
        return home + "/.local/share"
        #endif
    }

    /// Coffer's own folder in ``userData(environment:)``: `…/coffer`. It need not exist yet.
    /// - Throws: as ``userData(environment:)``.
    public static func cofferFolder(environment: [String: String] = currentEnvironment) throws(CofferCoreError) -> String {
        try userData(environment: environment) + "/coffer"
    }
}
