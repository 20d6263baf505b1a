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

#if defined(__linux__)
/* The session keyring when the login set one up (pam_keyinit), else the user's default session keyring.
   Asking without "create" matters: add_key(KEY_SPEC_SESSION_KEYRING) in a process without one would
   make a new session keyring private to that process, and the key would die with it. */
static inline long coffer_session_keyring(void) {
    return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* KEY_SPEC_SESSION_KEYRING */, 0);
}
#endif

static inline long coffer_session_key_add(const char *description, const void *payload, unsigned long length) {
#if defined(__linux__)
    long ring = coffer_session_keyring();
    if (ring < 0) { return -1; }
    long id = syscall(SYS_add_key, "user", description, payload, length, ring);
    /* Possessor: everything; the user (other processes outside the session): see that it exists. */
    if (id >= 0) { syscall(SYS_keyctl, 5 /* KEYCTL_SETPERM */, id, 0x3f010000); }
    return id;
#else
    (void)description; (void)payload; (void)length; errno = ENOSYS; return -1;
#endif
}

static inline long coffer_session_key_search(const char *description) {
#if defined(__linux__)
    long ring = coffer_session_keyring();
    if (ring < 0) { return -1; }
    return syscall(SYS_keyctl, 10 /* KEYCTL_SEARCH */, ring, "user", description, 0);
#else
    (void)description; errno = ENOSYS; return -1;
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

#endif
