/*
 * Fuzz the shell quoter: no crash, NUL always rejected, and the quoted
 * form always decodes (by the POSIX single-quote rules, simulated here)
 * back to exactly the input as one word.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "shquote.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Undo POSIX quoting of a string made of '...' and \' parts only. */
static int
unquote(const char *q, size_t len, char *out, size_t *outlen)
{
	size_t i = 0, o = 0;

	while (i < len) {
		if (q[i] == '\'') {
			for (i++; i < len && q[i] != '\''; i++)
				out[o++] = q[i];
			if (i == len)
				return -1; /* unterminated */
			i++;
		} else if (q[i] == '\\' && i + 1 < len && q[i + 1] == '\'') {
			out[o++] = '\'';
			i += 2;
		} else
			return -1; /* anything unquoted is a bug */
	}
	*outlen = o;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf b;
	struct tpu_err err;
	char *out;
	size_t outlen;
	int rc;

	buf_init(&b, BUF_NOCAP);
	rc = shquote_append(&b, (const char *)data, size, &err);
	if ((memchr(data, 0, size) != NULL) != (rc != 0))
		abort();
	if (rc == 0) {
		out = malloc(b.len + 1);
		if (unquote(b.data, b.len, out, &outlen) != 0 ||
		    outlen != size || memcmp(out, data, size) != 0)
			abort();
		free(out);
	}
	buf_release(&b);
	return 0;
}
