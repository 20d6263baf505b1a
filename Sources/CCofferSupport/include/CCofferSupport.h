#ifndef C_COFFER_SUPPORT_H
#define C_COFFER_SUPPORT_H

#include <errno.h>  /* first: it defines __GLIBC__, which the test below needs */
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/// Keeps up to `trim_threshold` bytes of free heap instead of returning it to the kernel at once, and
/// grows the heap `top_pad` bytes at a time (glibc only; a no-op elsewhere). See Coffer.main for why.
static inline void coffer_tune_heap(int trim_threshold, int top_pad) {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
    mallopt(M_TOP_PAD, top_pad);
#else
    (void)trim_threshold;
    (void)top_pad;
#endif
}

/* The Linux kernel key retention service (keyrings(7)): a "user" key in the session keyring holds
   `coffer keychain unlock`'s state in kernel memory, never on disk, for the commands of one login
   session. Raw system calls, so that no libkeyutils is needed. Every function returns -1 with errno
   set where the service is missing (and always on other platforms). */
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Which keyring: the login session's (KEY_SPEC_SESSION_KEYRING), or the user-wide default session
   keyring (KEY_SPEC_USER_SESSION_KEYRING, "_uid_ses.UID"), which the kernel substitutes for the first
   when the process has none (no pam_keyinit login) and which every session of the user shares. */
enum { coffer_keyring_session = -3, coffer_keyring_user_session = -5 };

/* The id of `which` keyring, or -1. Asked without "create": add_key(KEY_SPEC_SESSION_KEYRING) in a process
   without a session keyring would make one private to that process, and the key would die with it. */
static inline long coffer_keyring(int which) {
#if defined(__linux__)
    return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, which, 0);
#else
    (void)which; errno = ENOSYS; return -1;
#endif
}

/* 1 when the process has no session keyring of its own, so that its "session" keyring is the
   user-wide default; 0 when it has one; -1 with errno set where the service is missing. */
static inline int coffer_keyring_session_is_user_default(void) {
    long session = coffer_keyring(coffer_keyring_session);
    long user = coffer_keyring(coffer_keyring_user_session);
    if (session < 0 || user < 0) { return -1; }
    return session == user;
}

static inline long coffer_session_key_add(int which, const char *description, const void *payload, unsigned long length) {
#if defined(__linux__)
    long ring = coffer_keyring(which);
    if (ring < 0) { return -1; }
    long id = syscall(SYS_add_key, "user", description, payload, length, ring);
    /* Possessor: everything; the user (other processes outside the session): see that it exists. */
    if (id >= 0) { syscall(SYS_keyctl, 5 /* KEYCTL_SETPERM */, id, 0x3f010000); }
    return id;
#else
    (void)which; (void)description; (void)payload; (void)length; errno = ENOSYS; return -1;
#endif
}

static inline long coffer_session_key_search(int which, const char *description) {
#if defined(__linux__)
    long ring = coffer_keyring(which);
    if (ring < 0) { return -1; }
    return syscall(SYS_keyctl, 10 /* KEYCTL_SEARCH */, ring, "user", description, 0);
#else
    (void)which; (void)description; errno = ENOSYS; return -1;
#endif
}

static inline long coffer_session_key_read(long id, void *buffer, unsigned long length) {
#if defined(__linux__)
    return syscall(SYS_keyctl, 11 /* KEYCTL_READ */, id, buffer, length);
#else
    (void)id; (void)buffer; (void)length; errno = ENOSYS; return -1;
#endif
}

static inline long coffer_session_key_set_timeout(long id, unsigned int seconds) {
#if defined(__linux__)
    return syscall(SYS_keyctl, 15 /* KEYCTL_SET_TIMEOUT */, id, seconds);
#else
    (void)id; (void)seconds; errno = ENOSYS; return -1;
#endif
}

static inline long coffer_session_key_invalidate(long id) {
#if defined(__linux__)
    return syscall(SYS_keyctl, 21 /* KEYCTL_INVALIDATE */, id);
#else
    (void)id; errno = ENOSYS; return -1;
#endif
}

/* Allocates disk space for the first `length` bytes of a file: fallocate(2) in its default mode, so the
   file grows to `length` bytes if it is shorter and the new range reads as zeros. A raw system call, as
   Swift's Glibc module does not export fallocate (unlike posix_fallocate, it never falls back to writing
   zeros where the file system cannot preallocate). 0, or -1 with errno set; ENOTSUP other than on
   64-bit Linux. */
static inline int coffer_preallocate(int descriptor, long long length) {
#if defined(__linux__) && defined(__LP64__)
    return (int)syscall(SYS_fallocate, descriptor, 0, 0L, (long)length);
#else
    (void)descriptor; (void)length; errno = ENOTSUP; return -1;
#endif
}

/* Extended attributes (sys/xattr.h, which Swift's Glibc module does not export): the freedesktop
   backup-exclusion mark on protected folders. Not following symbolic links. -1 with errno set on
   failure; ENOTSUP where the file system or platform has no user attributes. */
#if defined(__linux__)
#include <sys/xattr.h>
#endif

static inline int coffer_set_attribute(const char *path, const char *name, const void *value, unsigned long length) {
#if defined(__linux__)
    return lsetxattr(path, name, value, length, 0);
#else
    (void)path; (void)name; (void)value; (void)length; errno = ENOTSUP; return -1;
#endif
}

static inline long coffer_get_attribute(const char *path, const char *name, void *value, unsigned long length) {
#if defined(__linux__)
    return lgetxattr(path, name, value, length);
#else
    (void)path; (void)name; (void)value; (void)length; errno = ENOTSUP; return -1;
#endif
}

/* ---- Whole-or-nothing files ------------------------------------------------------------------ */

/* Declared here rather than in a static inline function so that the signal handler and its registry
   have one copy in the process (CCofferSupport.c). */

/* Opens a new file with no name in `folder` (O_TMPFILE, mode 0600 before the umask): it vanishes when
   closed, whatever ends the process, until coffer_link_unnamed gives it a name. -1 with errno set;
   EOPNOTSUPP, EISDIR or EINVAL where the file system or the platform has no unnamed files (every
   platform but Linux answers EOPNOTSUPP). */
int coffer_open_unnamed(const char *folder);

/* Gives the unnamed file `descriptor` the name `destination`, failing with EEXIST when anything exists
   there: linkat(AT_EMPTY_PATH), or the /proc/self/fd link where that needs a privilege (before Linux
   6.10). 0, or -1 with errno set. */
int coffer_link_unnamed(int descriptor, const char *destination);

/* rename(2) that refuses to replace: renameat2(RENAME_NOREPLACE) on Linux, renamex_np(RENAME_EXCL) on
   Apple platforms. -1 with errno EEXIST when `to` exists; ENOSYS or EINVAL where the file system cannot
   (the caller falls back to link and unlink). */
int coffer_rename_noreplace(const char *from, const char *to);

/* Starts writing back the dirty pages of a file range without waiting (sync_file_range with
   SYNC_FILE_RANGE_WRITE), so that a later fsync finds little left to do. Best effort: 0, or -1 with
   errno set (ENOSYS outside Linux). */
int coffer_start_writeback(int descriptor, long long offset, long long length);

/* fsync(2) of a folder, so that a name created, renamed or removed in it survives a crash. 0, or -1
   with errno set. */
int coffer_sync_folder(const char *folder);

/* Names of temporary files to remove when a signal ends the process (the fallback where unnamed files
   are unavailable, and the instant between naming an unnamed file and renaming it over an existing
   one). coffer_cleanup_register copies `path` and returns a slot for coffer_cleanup_unregister, or -1
   when all 64 slots are taken or the path is too long. */
int coffer_cleanup_register(const char *path);
void coffer_cleanup_unregister(int slot);

/* A terminal whose settings the signal handlers put back (a password prompt that turned echo off);
   -1 forgets it. */
void coffer_cleanup_set_terminal(int descriptor);

/* Installs the handlers for SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE: remove the registered files,
   restore the terminal, then end the process by the same signal with its default action (so the exit
   status still says which signal). A signal the process inherited as ignored stays ignored. 0, or -1
   with errno set. */
int coffer_cleanup_install(void);

/* Removes the registered files now (for an exit that does not go through a signal). */
void coffer_cleanup_run(void);

/* ---- Process hygiene ---------------------------------------------------------------------------- */

/* No core dump and no ptrace attach by other processes of the same user: RLIMIT_CORE 0 and, on Linux,
   PR_SET_DUMPABLE 0 (which also makes /proc/PID's secrets readable by root only). 0, or -1 with errno
   set by the first call that failed. */
int coffer_prevent_core_dumps(void);

/* Whether the process may dump core: 1, 0, or -1 where the platform cannot tell (for tests). */
int coffer_is_dumpable(void);

/* A pipe whose two ends are close-on-exec from the start (pipe2 with O_CLOEXEC where it exists, so a
   program another thread starts meanwhile cannot inherit them). 0, or -1 with errno set. */
int coffer_pipe_cloexec(int ends[2]);

/* Adds a "close every descriptor from `lowest` on" action to a posix_spawn file-action list (glibc's
   posix_spawn_file_actions_addclosefrom_np). 0, or an error number; ENOSYS where there is none. */
int coffer_spawn_close_from(void *actions, int lowest);

#endif
