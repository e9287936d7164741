/*
 * Errors.  Library code returns 0 or a negative enum tpu_errc and fills a
 * caller-provided struct tpu_err; it never prints or exits.  cmd/main.c
 * prints the message once and maps the code onto the exit-status contract
 * (DESIGN.md) through tpu_exit_status(), the only table of that mapping.
 */
#ifndef TPUCTL_ERR_H
#define TPUCTL_ERR_H

#include <stdarg.h>

enum tpu_errc {
	TPU_OK = 0,
	TPU_E_INTERNAL = -1, /* 1: bug or unexpected local failure */
	TPU_E_API = -2,      /* 1: malformed or unexpected server reply */
	TPU_E_IO = -3,       /* 1: local I/O failure (disk full, ...) */
	TPU_E_USAGE = -4,    /* 2: bad flags or operands */
	TPU_E_INVALID = -5,  /* 2: bad value, or server 400 INVALID_ARGUMENT */
	TPU_E_AUTH = -6,     /* 3: 401 after refresh, invalid_grant */
	TPU_E_PERMISSION = -7,    /* 3: 403 */
	TPU_E_NOTFOUND = -8,      /* 4: 404 */
	TPU_E_CONFLICT = -9,      /* 4: 409 */
	TPU_E_PRECONDITION = -10, /* 4: 412, FAILED_PRECONDITION */
	TPU_E_TRANSIENT = -11,    /* 5: retries or deadline exhausted */
	TPU_E_INTEGRITY = -12,    /* 6: crc32c/md5 mismatch */
	TPU_E_OPERATION = -13,    /* 7: the operation finished with an error */
	TPU_E_PARTIAL = -14,      /* 8: some workers failed */
	TPU_E_UNREACHABLE = -15,  /* 9: no worker reached or trusted */
	TPU_E_TIMEOUT = -16,      /* 124: --timeout reached */
	TPU_E_INTERRUPTED = -17,  /* 130: SIGINT */
	TPU_E_TERMINATED = -18,   /* 143: SIGTERM */
	TPU_E_DECLINED = -19,     /* 1: a confirmation prompt was declined */
};

#define TPU_ERR_MSGLEN 1024

struct tpu_err {
	enum tpu_errc code;
	int http_status;     /* 0 when no HTTP reply was involved */
	char api_status[48]; /* Google error.status, e.g. "ALREADY_EXISTS" */
	char msg[TPU_ERR_MSGLEN];
};

/* Reset err to "no error". */
void tpu_err_init(struct tpu_err *);

/*
 * Format a message into err and return code, so "return tpu_error(...)"
 * reads naturally.  The http_status and api_status fields are kept.
 */
int tpu_error(struct tpu_err *, enum tpu_errc, const char *, ...)
    __attribute__((format(printf, 3, 4)));
int tpu_verror(struct tpu_err *, enum tpu_errc, const char *, va_list)
    __attribute__((format(printf, 3, 0)));

/* Prefix the existing message with "what: ", keeping code and status. */
int tpu_error_prefix(struct tpu_err *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* The process exit status for a code (0 for TPU_OK). */
int tpu_exit_status(enum tpu_errc);

/* The errc for an HTTP status (401 -> TPU_E_AUTH ...); TPU_OK for 2xx. */
enum tpu_errc tpu_errc_from_http(int);

/* A short name for a code, e.g. "not found"; for messages and JSON. */
const char *tpu_errc_name(enum tpu_errc);

/* Print file and line, then abort: for broken internal invariants only. */
#define TPU_BUG(msg) tpu_bug(__FILE__, __LINE__, (msg))
void tpu_bug(const char *, int, const char *) __attribute__((noreturn));

#endif
