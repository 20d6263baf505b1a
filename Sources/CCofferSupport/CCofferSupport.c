// Most functions of this target are inline in include/CCofferSupport.h. The ones here need one copy per
// process (the signal handlers and their registry) or feature macros that the header must not impose.
#if defined(__linux__)
#define _GNU_SOURCE 1
#endif
#include "CCofferSupport.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

int coffer_open_unnamed(const char *folder) {
#if defined(__linux__) && defined(O_TMPFILE)
    int descriptor = open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (descriptor >= 0) { (void)fchmod(descriptor, 0600); }
    return descriptor;
#else
    (void)folder;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int coffer_link_unnamed(int descriptor, const char *destination) {
#if defined(__linux__)
    if (linkat(descriptor, "", AT_FDCWD, destination, AT_EMPTY_PATH) == 0) { return 0; }
    /* Before Linux 6.10, AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH and fails with ENOENT without it; the
       process's own /proc entry for the descriptor is the documented way (open(2), O_TMPFILE). */
    if (errno != ENOENT && errno != EPERM) { return -1; }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", descriptor);
    return linkat(AT_FDCWD, path, AT_FDCWD, destination, AT_SYMLINK_FOLLOW);
#else
    (void)descriptor; (void)destination;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int coffer_rename_noreplace(const char *from, const char *to) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */);
#elif defined(__APPLE__)
    extern int renamex_np(const char *, const char *, unsigned int);
    return renamex_np(from, to, 0x00000004 /* RENAME_EXCL */);
#else
    (void)from; (void)to;
    errno = ENOSYS;
    return -1;
#endif
}

int coffer_start_writeback(int descriptor, long long offset, long long length) {
#if defined(__linux__)
    return sync_file_range(descriptor, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)descriptor; (void)offset; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}

int coffer_sync_folder(const char *folder) {
    int descriptor = open(folder, O_RDONLY | O_CLOEXEC
#if defined(O_DIRECTORY)
        | O_DIRECTORY
#endif
    );
    if (descriptor < 0) { return -1; }
    int result;
    do { result = fsync(descriptor); } while (result != 0 && errno == EINTR);
    int saved = errno;
    close(descriptor);
    errno = saved;
    return result;
}

/* ---- Cleanup on signals --------------------------------------------------------------------------- */

enum { cleanup_slots = 64, cleanup_path_size = 4096 };
enum { slot_free = 0, slot_filling = 1, slot_live = 2 };

static char cleanup_paths[cleanup_slots][cleanup_path_size];
static int cleanup_state[cleanup_slots];
static int cleanup_terminal = -1;
static struct termios cleanup_terminal_settings;
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

int coffer_cleanup_register(const char *path) {
    size_t length = strlen(path);
    if (length >= cleanup_path_size) { errno = ENAMETOOLONG; return -1; }
    for (int slot = 0; slot < cleanup_slots; slot++) {
        int expected = slot_free;
        if (__atomic_compare_exchange_n(&cleanup_state[slot], &expected, slot_filling, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            memcpy(cleanup_paths[slot], path, length + 1);
            __atomic_store_n(&cleanup_state[slot], slot_live, __ATOMIC_RELEASE);
            return slot;
        }
    }
    errno = ENFILE;
    return -1;
}

void coffer_cleanup_unregister(int slot) {
    if (slot < 0 || slot >= cleanup_slots) { return; }
    __atomic_store_n(&cleanup_state[slot], slot_free, __ATOMIC_RELEASE);
}

void coffer_cleanup_set_terminal(int descriptor) {
    if (descriptor >= 0 && tcgetattr(descriptor, &cleanup_terminal_settings) != 0) { descriptor = -1; }
    __atomic_store_n(&cleanup_terminal, descriptor, __ATOMIC_RELEASE);
}

/* Async-signal-safe: unlink(2) and tcsetattr(3) only. */
void coffer_cleanup_run(void) {
    int saved = errno;
    for (int slot = 0; slot < cleanup_slots; slot++) {
        if (__atomic_load_n(&cleanup_state[slot], __ATOMIC_ACQUIRE) == slot_live) {
            (void)unlink(cleanup_paths[slot]);
            __atomic_store_n(&cleanup_state[slot], slot_free, __ATOMIC_RELEASE);
        }
    }
    int terminal = __atomic_exchange_n(&cleanup_terminal, -1, __ATOMIC_ACQ_REL);
    if (terminal >= 0) {
        (void)tcsetattr(terminal, TCSAFLUSH, &cleanup_terminal_settings);
        (void)write(terminal, "\n", 1);
    }
    errno = saved;
}

static void cleanup_handler(int signal_number) {
    coffer_cleanup_run();
    /* SA_RESETHAND put the default action back; the signal is blocked until this handler returns, so
       raising it here ends the process the default way once we return. */
    (void)raise(signal_number);
}

int coffer_cleanup_install(void) {
    for (size_t index = 0; index < sizeof cleanup_signals / sizeof cleanup_signals[0]; index++) {
        int signal_number = cleanup_signals[index];
        struct sigaction current;
        if (sigaction(signal_number, NULL, &current) != 0) { return -1; }
        if (current.sa_handler == SIG_IGN) { continue; }
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = cleanup_handler;
        sigemptyset(&action.sa_mask);
        for (size_t other = 0; other < sizeof cleanup_signals / sizeof cleanup_signals[0]; other++) {
            sigaddset(&action.sa_mask, cleanup_signals[other]);
        }
        action.sa_flags = SA_RESETHAND;
        if (sigaction(signal_number, &action, NULL) != 0) { return -1; }
    }
    return 0;
}

/* ---- Process hygiene -------------------------------------------------------------------------------- */

/* Defined by LeakSanitizer's runtime, which sanitizer builds (tests only: .ci/sanitizers) link in. */
extern void __lsan_do_leak_check(void) __attribute__((weak));

int coffer_prevent_core_dumps(void) {
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) { return -1; }
#if defined(__linux__)
    /* LeakSanitizer stops the process's threads with ptrace from a helper task to scan their registers;
       a process that is not dumpable may refuse it, and the scan then reports leaks that are not. So a
       sanitizer build stays dumpable (still without core files); a real build never links the symbol. */
    if (&__lsan_do_leak_check != NULL) { return 0; }
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) { return -1; }
#endif
    return 0;
}

int coffer_is_dumpable(void) {
#if defined(__linux__)
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
#else
    return -1;
#endif
}

/* ---- Starting programs (the test harness) -------------------------------------------------------- */

int coffer_pipe_cloexec(int ends[2]) {
#if defined(__linux__)
    return pipe2(ends, O_CLOEXEC);
#else
    if (pipe(ends) != 0) return -1;
    (void)fcntl(ends[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(ends[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int coffer_spawn_close_from(void *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowest);
#else
    (void)actions; (void)lowest; return ENOSYS;
#endif
}
