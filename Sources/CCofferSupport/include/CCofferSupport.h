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

#endif
