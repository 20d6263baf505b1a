import ArgumentParser
import Foundation

/// Options a command also reads from the environment, by one rule: `--some-option` is
/// `COFFER_SOME_OPTION`. A value given on the command line wins over the environment's; a repeatable
/// option's variable holds a comma-separated list; a flag's variable is `1`/`true`/`yes` (set) or
/// `0`/`false`/`no`/empty (not set).
struct EnvironmentOptions {
    /// How a variable becomes arguments.
    enum Kind {
        /// One value: `--name VALUE`.
        case value
        /// A comma-separated list: `--name A --name B`.
        case list
        /// `--name` when the variable is true.
        case flag
    }

    /// The options, by long name without the dashes, and how each reads.
    let options: [(name: String, kind: Kind)]

    /// The variable that holds `--name`.
    static func variable(for name: String) -> String {
        "COFFER_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// `arguments` (the command's own, after its name) with the environment's options added for every
    /// option the command line does not give.
    /// - Throws: `ValidationError` for a flag's variable that is not a yes or a no.
    func arguments(_ arguments: [String], environment: [String: String]) throws -> [String] {
        let given = Set(arguments.prefix { $0 != "--" }.compactMap { argument -> String? in
            guard argument.hasPrefix("--") else { return nil }
            return String(argument.dropFirst(2).prefix { $0 != "=" })
        })
        var added: [String] = []
        for (name, kind) in options where !given.contains(name) {
            let variable = Self.variable(for: name)
            guard let value = environment[variable] else { continue }
            if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw ValidationError("\(variable) holds a control character (an environment file with CRLF line ends?)")
            }
            switch kind {
            case .value:
                added += ["--\(name)", value]
            case .list:
                // Set but naming nothing is a mistake, never "none": an empty COFFER_ADMIN_KEY would
                // otherwise open registration.
                let items = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                guard !items.contains(where: \.isEmpty) else {
                    throw ValidationError("\(variable) is a comma-separated list with an empty item: unset it to give none")
                }
                for item in items { added += ["--\(name)", item] }
            case .flag:
                switch value.lowercased() {
                case "1", "true", "yes": added.append("--\(name)")
                case "0", "false", "no", "": break
                default: throw ValidationError("\(variable) must be 1, true or yes (or 0, false, no), not '\(value.clipped(toUTF8: 16))'")
                }
            }
        }
        guard !added.isEmpty else { return arguments }
        // Before a `--`, so that they stay options.
        if let end = arguments.firstIndex(of: "--") { return Array(arguments[..<end]) + added + Array(arguments[end...]) }
        return arguments + added
    }

    /// The help text's list: each option's variable.
    var helpList: String {
        options.map { name, kind in
            "  \(Self.variable(for: name))" + (kind == .list ? " (comma-separated)" : kind == .flag ? " (1 or true)" : "")
        }.joined(separator: "\n")
    }
}
