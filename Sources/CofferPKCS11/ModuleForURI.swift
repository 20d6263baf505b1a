#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The module a URI asks for (`?module-path=`, `?module-name=`) checked before it is loaded: loading a
/// module runs its code, so one the URI rules out is not loaded at all.
extension PKCS11Module {
    /// Loads the module at `path` for `uri`, once the URI's `module-path` (the same file) and
    /// `module-name` (the file's name without folder, `lib` prefix or suffix: `softhsm2` for
    /// `/usr/lib/softhsm/libsofthsm2.so`) agree with it.
    /// - Throws: ``PKCS11Error`` `.moduleNotLoaded` naming both when the URI asks for another module;
    ///   the errors of ``load(_:)``.
    public static func load(_ path: String, for uri: PKCS11URI) throws(PKCS11Error) -> PKCS11Module {
        if let wanted = uri.modulePath, !isSameFile(wanted, path) {
            throw PKCS11Error(.moduleNotLoaded, "the URI asks for the module '\(wanted)' (module-path); the module given is '\(path)'")
        }
        if let name = uri.moduleName, !isModule(path, named: name) {
            throw PKCS11Error(.moduleNotLoaded, "the URI asks for the module named '\(name)' (module-name); the module given is '\(path)'")
        }
        return try load(path)
    }

    /// Whether two paths name one file (the same device and inode), or are the same text.
    static func isSameFile(_ one: String, _ other: String) -> Bool {
        guard one != other else { return true }
        var first = stat()
        var second = stat()
        guard stat(one, &first) == 0, stat(other, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// Whether the file's name, up to its first `.`, is `name` or `lib` + `name`.
    static func isModule(_ path: String, named name: String) -> Bool {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let stem = file.prefix { $0 != "." }
        return !name.isEmpty && (stem == name || stem == "lib" + name)
    }
}
