/// Spellings that changed when the flags became one language (docs/CLI.md): they keep working for this
/// release, each with one line on standard error that names the new spelling.
enum Deprecation {
    /// Warns that `old` is going away in favour of `new`, when `used`.
    static func warn(_ old: String, _ new: String, used: Bool) {
        guard used else { return }
        Terminal.warn("\(old) is deprecated and goes away after this release; use \(new)")
    }
}
