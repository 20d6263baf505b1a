import CCofferSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a program that handles secrets does first, so that neither a crash nor a signal leaks them.
///
/// ```swift
/// try ProcessProtection.reserveStandardDescriptors()      // command-line tools: before opening any file
/// try ProcessProtection.preventCoreDumps()                 // before reading a password or a key
/// try ProcessProtection.removeTemporaryFilesOnSignals()    // command-line tools: Ctrl-C leaves nothing
/// ```
public enum ProcessProtection {
    /// Stops the process from dumping core and other processes of the same user from reading its memory:
    /// `RLIMIT_CORE` 0 and, on Linux, `PR_SET_DUMPABLE` 0 (no `ptrace` attach or `/proc/PID/mem` read
    /// without privilege). A core file of a process that was decrypting holds its password, its keys and
    /// the plaintext in flight. Irreversible for the life of the process.
    /// - Throws: ``CofferCoreError`` `.ioFailure` when the system refuses.
    public static func preventCoreDumps() throws(CofferCoreError) {
        guard coffer_prevent_core_dumps() == 0 else {
            throw CofferCoreError(.ioFailure, "cannot turn off core dumps: \(systemErrorMessage(errno).lowercasedFirst)")
        }
    }

    /// Opens `/dev/null` on each of standard input, output and error that the process was started
    /// without (`coffer … >&-`), so that no file it opens later takes their numbers: a message meant
    /// for standard error would be written into that file, and a close of standard output would close
    /// it. Input is opened write-only and output and error read-only, so that using one still fails as
    /// it would have: a result written to a closed standard output is reported as a write error, never
    /// discarded. For command-line tools, before they open any file.
    /// - Throws: ``CofferCoreError`` `.ioFailure` when `/dev/null` cannot be opened.
    public static func reserveStandardDescriptors() throws(CofferCoreError) {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", descriptor == STDIN_FILENO ? O_WRONLY : O_RDONLY)
            guard opened >= 0 else {
                throw CofferCoreError(.ioFailure, "cannot open /dev/null: \(systemErrorMessage(errno).lowercasedFirst)")
            }
            // The lowest free number is this one, unless another thread took it meanwhile.
            if opened != descriptor {
                let placed = dup2(opened, descriptor)
                close(opened)
                guard placed == descriptor else {
                    throw CofferCoreError(.ioFailure, "cannot reserve descriptor \(descriptor): \(systemErrorMessage(errno).lowercasedFirst)")
                }
            }
        }
    }

    /// Whether the process may dump core (its core-size limit is above zero and, on Linux, it is dumpable).
    public static var allowsCoreDumps: Bool {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_CORE.rawValue), &limit) == 0 else { return true }
        return limit.rlim_cur != 0 || coffer_is_dumpable() == 1
    }

    /// Installs handlers for SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE that remove the hidden files of
    /// unfinished ``AtomicFileWriter``s (where unnamed files are unavailable) and put back a terminal a
    /// password prompt silenced, then end the process by the same signal with its default action, so the
    /// exit status still names the signal. For command-line tools; an app that handles these signals
    /// itself calls ``removeTemporaryFilesNow()`` from its own handler instead. A signal the process
    /// inherited as ignored (`nohup`, background jobs) stays ignored.
    /// - Throws: ``CofferCoreError`` `.ioFailure` when a handler cannot be installed.
    public static func removeTemporaryFilesOnSignals() throws(CofferCoreError) {
        guard coffer_cleanup_install() == 0 else {
            throw CofferCoreError(.ioFailure, "cannot install signal handlers: \(systemErrorMessage(errno).lowercasedFirst)")
        }
    }

    /// Removes the hidden files of every unfinished ``AtomicFileWriter`` now. Async-signal-safe.
    public static func removeTemporaryFilesNow() {
        coffer_cleanup_run()
    }
}
