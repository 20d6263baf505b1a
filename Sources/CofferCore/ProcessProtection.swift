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
