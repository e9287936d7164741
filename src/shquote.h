/*
 * POSIX shell quoting for remote commands.  Every argument is wrapped in
 * single quotes, and an embedded ' becomes '\'' (close, escaped quote,
 * reopen), so a POSIX sh sees exactly the original bytes as one word
 * whatever they contain: $, `, \, newlines, leading dashes.  The empty
 * string becomes ''.  NUL cannot travel through a shell word and is
 * rejected.
 */
#ifndef TPUCTL_SHQUOTE_H
#define TPUCTL_SHQUOTE_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

/*
 * Append the quoted form of the len bytes at s to out.  Returns 0,
 * TPU_E_INVALID when s holds a NUL byte (out unchanged), or TPU_E_INVALID
 * when out's cap would be exceeded.
 */
int shquote_append(
    struct buf *out, const char *s, size_t len, struct tpu_err *);

/* The quoted form of the C string s; the caller frees it. */
char *shquote(const char *s);

/*
 * Build a remote command line from argv[0..argc-1]: each argument quoted,
 * separated by single spaces.  *out is the caller's to free.  Returns 0,
 * or TPU_E_USAGE when argc < 1 (nothing to run).
 */
int shquote_argv(int argc, char *const argv[], char **out, struct tpu_err *);

#endif
