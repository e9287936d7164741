/*
 * Error construction and the one table that maps error codes onto the
 * exit-status contract of DESIGN.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static const struct {
	enum tpu_errc code;
	int status;
	const char *name;
} errc_table[] = {
	{ TPU_OK, 0, "ok" },
	{ TPU_E_INTERNAL, 1, "internal error" },
	{ TPU_E_API, 1, "unexpected server reply" },
	{ TPU_E_IO, 1, "i/o error" },
	{ TPU_E_USAGE, 2, "usage error" },
	{ TPU_E_INVALID, 2, "invalid argument" },
	{ TPU_E_AUTH, 3, "authentication failed" },
	{ TPU_E_PERMISSION, 3, "permission denied" },
	{ TPU_E_NOTFOUND, 4, "not found" },
	{ TPU_E_CONFLICT, 4, "conflict" },
	{ TPU_E_PRECONDITION, 4, "failed precondition" },
	{ TPU_E_TRANSIENT, 5, "transient failure" },
	{ TPU_E_INTEGRITY, 6, "data integrity failure" },
	{ TPU_E_OPERATION, 7, "operation failed" },
	{ TPU_E_PARTIAL, 8, "some workers failed" },
	{ TPU_E_UNREACHABLE, 9, "no worker reachable" },
	{ TPU_E_TIMEOUT, 124, "timed out" },
	{ TPU_E_INTERRUPTED, 130, "interrupted" },
	{ TPU_E_TERMINATED, 143, "terminated" },
	{ TPU_E_DECLINED, 1, "declined" },
};

void
tpu_err_init(struct tpu_err *err)
{
	memset(err, 0, sizeof *err);
}

int
tpu_verror(struct tpu_err *err, enum tpu_errc code, const char *fmt, va_list ap)
{
	if (err != NULL) {
		err->code = code;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	}
	return code;
}

int
tpu_error(struct tpu_err *err, enum tpu_errc code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tpu_verror(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int
tpu_error_prefix(struct tpu_err *err, const char *fmt, ...)
{
	char old[TPU_ERR_MSGLEN];
	size_t n;
	va_list ap;
	int len;

	memcpy(old, err->msg, sizeof old);
	va_start(ap, fmt);
	len = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	n = len < 0 ? 0 : (size_t)len;
	if (n + 2 < sizeof err->msg) {
		size_t room = sizeof err->msg - n - 2, olen = strlen(old);

		if (olen >= room)
			olen = room - 1;
		err->msg[n++] = ':';
		err->msg[n++] = ' ';
		memcpy(err->msg + n, old, olen);
		err->msg[n + olen] = '\0';
	}
	return err->code;
}

int
tpu_exit_status(enum tpu_errc code)
{
	size_t i;

	for (i = 0; i < sizeof errc_table / sizeof errc_table[0]; i++)
		if (errc_table[i].code == code)
			return errc_table[i].status;
	return 1;
}

const char *
tpu_errc_name(enum tpu_errc code)
{
	size_t i;

	for (i = 0; i < sizeof errc_table / sizeof errc_table[0]; i++)
		if (errc_table[i].code == code)
			return errc_table[i].name;
	return "unknown error";
}

enum tpu_errc
tpu_errc_from_http(int status)
{
	if (status >= 200 && status < 300)
		return TPU_OK;
	switch (status) {
	case 400:
		return TPU_E_INVALID;
	case 401:
		return TPU_E_AUTH;
	case 403:
		return TPU_E_PERMISSION;
	case 404:
	case 410:
		return TPU_E_NOTFOUND;
	case 409:
		return TPU_E_CONFLICT;
	case 412:
		return TPU_E_PRECONDITION;
	case 408:
	case 429:
		return TPU_E_TRANSIENT;
	default:
		if (status >= 500)
			return TPU_E_TRANSIENT;
		return TPU_E_API;
	}
}

void
tpu_bug(const char *file, int line, const char *msg)
{
	fprintf(
	    stderr, "tpuctl: internal error at %s:%d: %s\n", file, line, msg);
	abort();
}
