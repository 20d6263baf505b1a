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
/// Every write to standard output is checked. A reader that went away (EPIPE) ends the process quietly,
/// by SIGPIPE, as `cat` or `age` end. Any other failure (a full disk behind `> file`, `/dev/full`, an
/// I/O error) is an error of the command: ``writeData(_:)`` throws it at once, and text written with
/// ``writeOut(_:)`` records it for ``finishStandardOutput()``, which every command's end goes through,
/// so a command never reports success for output that was lost.
///
/// The CLI runs on one thread; the output buffer is touched only from it.
enum Terminal {
    /// Whether standard error is a terminal (progress bars are drawn only then). Asked once: every
    /// line printed consults it.
    static let standardErrorIsTerminal = isatty(STDERR_FILENO) == 1
    /// Whether standard output is a terminal (raw bytes are refused then). Asked once.
    static let standardOutputIsTerminal = isatty(STDOUT_FILENO) == 1
    /// Whether standard output takes the data of a command that names no output: anything but a
    /// terminal, so a pipe, a file, a socket, or a device such as `/dev/null` (`> /dev/null` discards the
    /// output as asked; it once wrote a file beside the input instead, plaintext included).
    static var standardOutputTakesData: Bool { !standardOutputIsTerminal }

    private static let bufferCapacity = 64 * 1024
    nonisolated(unsafe) private static var buffer: [UInt8] = {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(bufferCapacity)
        return buffer
    }()
    /// The first failure to write standard output; later writes are dropped.
    nonisolated(unsafe) private static var outputFailure: CommandFailure?

    /// Writes a line of text to standard output; on a terminal, as ``shown(_:)`` shows it.
    static func writeLine(_ text: String) {
        writeOut(standardOutputIsTerminal ? shown(text) : text)
        writeOut("\n")
    }

    /// Text as it may reach a terminal (and as `request -i` prints a server's fields anywhere): control characters (C0 but tab, DEL, C1), the line and paragraph separators, and the characters
    /// that reorder text (bidirectional embeddings, overrides and isolates) are shown as `\xHH` or
    /// `\u{HHHH}`, so that a name from a file, a list, a keychain or a server can neither drive the
    /// terminal (escape sequences) nor disguise what is printed around it ("FAILED" made to read "OK").
    /// Pipes and files get the text as it is.
    static func shown(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isHidden) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if !isHidden(scalar) {
                shown.unicodeScalars.append(scalar)
            } else if scalar.value < 0x100 {
                shown += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16, uppercase: true)
            } else {
                shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return shown
    }

    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: false
        case 0x00..<0x20, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: true
        default: false
        }
    }

    /// Writes text to standard output. A failure is recorded and reported when the command ends.
    static func writeOut(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            do { try writeData(UnsafeRawBufferPointer(bytes)) } catch { /* recorded in outputFailure */ }
        }
    }

    /// Writes bytes to standard output.
    /// - Throws: ``CommandFailure`` naming standard output when they cannot be written.
    static func writeData(_ bytes: UnsafeRawBufferPointer) throws(CommandFailure) {
        if let outputFailure { throw outputFailure }
        if buffer.count + bytes.count > bufferCapacity { try flush() }
        if bytes.count >= bufferCapacity {
            try writeStandardOutput(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Sends buffered output to standard output.
    /// - Throws: ``CommandFailure`` naming standard output when it cannot be written.
    static func flush() throws(CommandFailure) {
        if let outputFailure { throw outputFailure }
        guard !buffer.isEmpty else { return }
        defer {
            // The buffer may hold plaintext or a secret (decrypt -o -, keychain get): wipe it as it empties.
            _ = buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
            buffer.removeAll(keepingCapacity: true)
        }
        let failure: CommandFailure? = buffer.withUnsafeBytes { bytes in
            do throws(CommandFailure) { try writeStandardOutput(bytes) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Sends buffered output to standard output now (before a slow step, so the user sees it); a failure
    /// is recorded for ``finishStandardOutput()``.
    static func flushStandardOutput() {
        try? flush()
    }

    /// Flushes standard output to stable storage when it is a regular file (`coffer encrypt > backup`),
    /// so that success means durable there as for `-o FILE`. Pipes and terminals need nothing.
    static func syncStandardOutput() throws(CommandFailure) {
        try flush()
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return }
        while fsync(STDOUT_FILENO) != 0 {
            guard errno == EINTR else { throw record(errno, action: "flush") }
        }
    }

    /// Flushes standard output and collects what its file system reports only when the file is closed
    /// (NFS reports a failed write only then), the last step of every command; safe to call again.
    ///
    /// Standard output itself stays open until the process exits: closed, its number would go to the
    /// next descriptor any thread opens (a libdispatch worker's epoll instance took it once), and a
    /// later close of standard output would close that instead (the worker then crashed). Closing a
    /// duplicate makes the file system report the same errors.
    /// - Throws: ``CommandFailure`` when anything written to standard output was lost.
    static func finishStandardOutput() throws(CommandFailure) {
        try flush()
        let duplicate = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        guard duplicate >= 0 else { return }   // nothing to close: standard output was never open
        if close(duplicate) != 0 && errno != EINTR {
            throw record(errno, action: "close")
        }
    }

    /// Writes text to standard error, unbuffered. Failures are ignored: there is nowhere left to report them.
    static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { try? CofferCore.writeAll(UnsafeRawBufferPointer($0), to: STDERR_FILENO, name: "standard error") }
    }

    /// `coffer: error: MESSAGE` and an optional `hint: …` line on standard error.
    static func reportError(_ message: String, hint: String? = nil) {
        writeError("coffer: error: \(forStandardError(message))\n")
        if let hint { writeError("hint: \(forStandardError(hint))\n") }
    }

    /// `coffer: warning: MESSAGE` on standard error.
    static func warn(_ message: String) {
        writeError("coffer: warning: \(forStandardError(message))\n")
    }

    /// A line about what the command did, on standard error, as ``shown(_:)`` shows it on a terminal:
    /// for lines that carry names the user or a file chose.
    static func note(_ line: String) {
        writeError(forStandardError(line) + "\n")
    }

    /// A message as ``shown(_:)`` shows it when standard error is a terminal.
    private static func forStandardError(_ text: String) -> String {
        standardErrorIsTerminal ? shown(text) : text
    }

    /// Ends the process with `status`. Standard output is not flushed here: the command's end already
    /// did, and output that could not be written must not be retried on the way out.
    static func exit(_ status: Int32) -> Never {
        processExit(status)
    }

    private static func writeStandardOutput(_ bytes: UnsafeRawBufferPointer) throws(CommandFailure) {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(STDOUT_FILENO, base, remaining)
            if written > 0 {
                remaining -= written
                base += written
            } else if written < 0 && errno == EPIPE {
                endForClosedPipe()
            } else if written < 0 && errno != EINTR {
                throw record(errno, action: "write to")
            }
        }
    }

    private static func record(_ code: Int32, action: String) -> CommandFailure {
        let message = String(cString: strerror(code))
        let failure = CommandFailure(
            "cannot \(action) standard output: \(message.prefix(1).lowercased() + message.dropFirst())",
            hint: code == ENOSPC || code == EDQUOT ? "the output is incomplete: free some space and run the command again" : nil
        )
        outputFailure = outputFailure ?? failure
        return failure
    }

    /// The reader of standard output went away (`coffer … | head`): end quietly, as SIGPIPE would have,
    /// after removing any unfinished output file.
    private static func endForClosedPipe() -> Never {
        ProcessProtection.removeTemporaryFilesNow()
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
        processExit(128 + SIGPIPE)
    }
}

private func processExit(_ status: Int32) -> Never {
    exit(status)
}
