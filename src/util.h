/*
 * Small helpers shared by every layer: bounded number parsing, monotonic
 * time, durations, RFC 3339 times, UTF-8 sequences.
 */
#ifndef TPUCTL_UTIL_H
#define TPUCTL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"

/* A size for people: "512 B", "3.4 MiB" (binary units up to TiB). */
void tpu_human_size(double bytes, char *out, size_t n);

/*
 * Parse a decimal integer in [min, max], the OpenBSD strtonum way.  On
 * error returns 0 and sets *errstr to "invalid", "too small" or "too
 * large"; on success *errstr is NULL.
 */
long long tpu_strtonum(
    const char *, long long min, long long max, const char **errstr);

/*
 * Parse a duration: "90", "90s", "5m", "2h", "1d", "1h30m" into seconds.
 * Returns 0, or TPU_E_USAGE with err naming the flag and the value.
 */
int tpu_parse_duration(
    const char *flag, const char *, long long *secs, struct tpu_err *);

/*
 * A job's --timeout DURATION (run, logs --follow): a duration as
 * tpu_parse_duration reads it, 1 s to 7 days, into *secs.  0, or
 * TPU_E_USAGE naming the value and the rule.
 */
int tpu_parse_job_timeout(const char *, long long *secs, struct tpu_err *);

/*
 * Parse an RFC 3339 date-time: "2026-12-01T10:00:00Z", "t" allowed for
 * "T", an optional fraction of any length (ignored), then "Z"/"z" or an
 * offset "+HH:MM"/"-HH:MM" of at most 24:00.  Rejects months and days the
 * calendar lacks (2026-02-29) and hour 24; second 60 is accepted unless
 * it rolls over into the next day.  Returns 0 with *t the Unix time, -1
 * when malformed (*t untouched); the caller words the error.
 */
int tpu_parse_rfc3339(const char *, time_t *t);

/* Milliseconds on CLOCK_MONOTONIC: for deadlines, never for dates. */
int64_t tpu_now_ms(void);

/* Sleep for ms milliseconds; returns early (-1) when a signal arrives. */
int tpu_sleep_ms(int64_t);

/* 1 if s starts with prefix. */
int tpu_startswith(const char *, const char *);

/*
 * Length of the valid UTF-8 sequence at s (1 to 4), or 0.  Overlong
 * forms, surrogates and code points above U+10FFFF are invalid; a NUL
 * inside a sequence ends it (invalid), so s may be a C string.
 */
size_t tpu_utf8_len(const unsigned char *s);

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

enum tpu_show_flags {
	TPU_SHOW_BACKSLASH = (1 << 0), /* "\\" for a backslash too */
};

/*
 * A printable, bounded rendering of untrusted text for a terminal or a
 * message: control characters (below 0x20, and 0x7f) become \n, \r, \t or
 * \xNN, so no escape sequence reaches the terminal.  Without
 * TPU_SHOW_BACKSLASH a backslash stays as it is (text already shown this
 * way is unchanged).  len bytes of s into out (outlen bytes, NUL always
 * written); "..." marks a cut.  Returns out.
 */
char *tpu_show(const char *s, size_t len, char *out, size_t outlen, int flags);

/* tpu_show of the whole NUL-terminated s into a new string (caller's). */
char *tpu_show_dup(const char *s, int flags);

enum tpu_b64_flags {
	TPU_B64_URL = (1 << 0),   /* RFC 4648 section 5 alphabet: - and _ */
	TPU_B64_NOPAD = (1 << 1), /* encode: no trailing '=' */
};

/* Characters tpu_b64_encode writes for len bytes, without the NUL. */
size_t tpu_b64_len(size_t len, int flags);

/*
 * Base64 of len bytes of p into out, which holds tpu_b64_len(len, flags)
 * + 1 bytes; NUL-terminated.  Returns the length written.
 */
size_t tpu_b64_encode_to(
    char *out, const unsigned char *p, size_t len, int flags);

/* tpu_b64_encode_to into a new string (caller's). */
char *tpu_b64_encode(const unsigned char *p, size_t len, int flags);

/* The value (0 to 63) of base64 character c in the alphabet, or -1. */
int tpu_b64_value(unsigned char c, int flags);

/*
 * Strict base64 decode of len characters of s (padding optional, but
 * when present it completes a group of four; no white space; unused
 * trailing bits zero).  Returns a new buffer (caller's, *outlen bytes,
 * plus a NUL not counted), or NULL on bad or empty input.
 */
unsigned char *tpu_b64_decode(
    const char *s, size_t len, size_t *outlen, int flags);

/*
 * Write all n bytes of p to fd: retries EINTR, waits (poll) on EAGAIN.
 * Returns 0, or the errno of the failed write (EIO for a write of 0).
 */
int tpu_write_all(int fd, const void *p, size_t n);

#endif
