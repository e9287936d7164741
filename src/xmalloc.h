/*
 * Allocation wrappers.  Running out of memory is fatal: every x* function
 * either returns usable memory or prints a message and aborts, so callers
 * never check for NULL.  TPUCTL_FAIL_ALLOC_AT=n makes the n-th allocation
 * fail, for allocation-torture tests.
 */
#ifndef TPUCTL_XMALLOC_H
#define TPUCTL_XMALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xrealloc(void *, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
char *xasprintf(const char *, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *, va_list) __attribute__((format(printf, 1, 0)));

/* Wipe then free a secret string; NULL-safe. */
void xfree_secret(char *);

#endif
