/// A failure a command reports to the user: printed as `coffer: error: MESSAGE` (and `hint: …`), then the
/// process exits with `exitCode`.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    let hint: String?
    let exitCode: Int32

    init(_ message: String, hint: String? = nil, exitCode: Int32 = ExitStatus.inputError) {
        self.message = message
        self.hint = hint
        self.exitCode = exitCode
    }

    var description: String { message }
}

extension String {
    var trimmingTrailingWhitespace: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }
}
