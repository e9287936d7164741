/*
 * Framing of short commands through one long-lived remote shell (issue
 * 18, the warm pool): instead of an exec channel (an sshd session and a
 * shell) per command, the holder keeps a channel running sh that reads
 * commands on its stdin, and writes each command wrapped so that its
 * output on each stream ends with a trailer line carrying a marker
 * unique to that command:
 *
 *	stdout: <output> "\n" MARKER " " <exit status, decimal> "\n"
 *	stderr: <output> "\n" MARKER "\n"
 *
 * The "\n" before the marker is always written by the wrapper, so the
 * command's output is exactly the bytes before it (a last line without
 * a newline stays so).  The command runs in a subshell (cd, exit, set
 * do not reach the shell), through eval of its single-quoted text (a
 * syntax error is the command's status 2, not a shell left waiting for
 * the rest of a quote), with stdin from /dev/null (it cannot read the
 * commands that follow).  Worker side: POSIX sh only.
 *
 * Everything from the shell is untrusted: a trailer that is not exactly
 * the expected one, or any byte after it, means the shell is out of
 * step (desynchronised); the caller drops it and runs the command on a
 * fresh exec channel.
 */
#ifndef TPUCTL_SHFRAME_H
#define TPUCTL_SHFRAME_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

/* "tpuctl-end-" and 32 hex digits (128 random bits), NUL */
#define SHFRAME_MARKER_MAX 48

/* A new random marker into out[SHFRAME_MARKER_MAX]: 0, or TPU_E_IO when
 * no random bytes could be read. */
int shframe_marker(char *out, struct tpu_err *);

/* Append the shell input that runs cmd under marker to out: 0, or
 * TPU_E_INVALID (cmd holds a NUL, a marker that is not one of
 * shframe_marker's form, out's cap). */
int shframe_wrap(
    struct buf *out, const char *marker, const char *cmd, struct tpu_err *);

/* The reader of one stream of one framed command. */
struct shframe_rd {
	char marker[SHFRAME_MARKER_MAX];
	int want_status; /* stdout: the trailer carries the exit status */
	struct buf hold; /* bytes that may begin the trailer */
	int done;
	int status; /* the exit status, when done and want_status */
};

void shframe_rd_init(struct shframe_rd *, const char *marker, int want_status);
void shframe_rd_release(struct shframe_rd *);

/*
 * Feed the next len bytes of the stream: the command's output among
 * them goes to emit (possibly in several calls; bytes that may begin the
 * trailer are held back until they are known not to).  0: more to come;
 * 1: the trailer is complete (r->done, r->status); TPU_E_API: the
 * stream is out of step (a bad trailer, bytes after it, a status over
 * 255); after 1 or an error, feeding more is an error.
 */
int shframe_rd_feed(struct shframe_rd *, const char *data, size_t len,
    void (*emit)(void *arg, const char *data, size_t len), void *arg,
    struct tpu_err *);

#endif
