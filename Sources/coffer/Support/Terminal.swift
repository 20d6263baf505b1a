#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CofferCore

/// Standard streams, written the way a Unix tool should: data on standard output (buffered), messages on
/// standard error (unbuffered), nothing binary to a terminal.
///
/// The CLI runs on one thread; the output buffer is touched only from it.
enum Terminal {
    /// Whether standard error is a terminal (progress bars are drawn only then).
    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
    /// Whether standard output is a terminal (raw bytes are refused then).
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    private static let bufferCapacity = 64 * 1024
    nonisolated(unsafe) private static var buffer: [UInt8] = {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(bufferCapacity)
        return buffer
    }()

    /// Writes a line to standard output.
    static func writeLine(_ text: String) {
        writeOut(text)
        writeOut("\n")
    }

    /// Writes text to standard output.
    static func writeOut(_ text: String) {
        var text = text
        text.withUTF8 { writeOut(UnsafeRawBufferPointer($0)) }
    }

    /// Writes bytes to standard output.
    static func writeOut(_ bytes: UnsafeRawBufferPointer) {
        if buffer.count + bytes.count > bufferCapacity { flushStandardOutput() }
        if bytes.count >= bufferCapacity {
            writeAll(STDOUT_FILENO, bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Sends buffered output to standard output.
    static func flushStandardOutput() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { writeAll(STDOUT_FILENO, $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes text to standard error, unbuffered.
    static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { writeAll(STDERR_FILENO, UnsafeRawBufferPointer($0)) }
    }

    /// `coffer: error: MESSAGE` and an optional `hint: …` line on standard error.
    static func reportError(_ message: String, hint: String? = nil) {
        writeError("coffer: error: \(message)\n")
        if let hint { writeError("hint: \(hint)\n") }
    }

    /// `coffer: warning: MESSAGE` on standard error.
    static func warn(_ message: String) {
        writeError("coffer: warning: \(message)\n")
    }

    /// Flushes standard output and ends the process.
    static func exit(_ status: Int32) -> Never {
        flushStandardOutput()
        processExit(status)
    }

    /// Writes to a standard stream. A failure (EPIPE: the reader is gone) leaves nothing useful to do.
    private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) {
        try? CofferCore.writeAll(bytes, to: descriptor, name: descriptor == STDOUT_FILENO ? "standard output" : "standard error")
    }
}

private func processExit(_ status: Int32) -> Never {
    exit(status)
}
