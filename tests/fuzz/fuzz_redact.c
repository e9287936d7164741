/*
 * Fuzz the redactor: no crash on any bytes, and a secret planted after a
 * sensitive header, JSON field, form field or query parameter never
 * survives, whatever surrounds it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "redact.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const shapes[] = {
	"\nAuthorization: Bearer SECRETX\n",
	"{\"access_token\": \"SECRETX\"}",
	"&refresh_token=SECRETX&",
	"?upload_id=SECRETX ",
	"\nhttp://u:SECRETX@proxy\n",
	" ya29.SECRETX ",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf b;
	char *r;
	size_t half = size / 2;

	r = redact_text((const char *)data, size);
	free(r);
	if (size == 0)
		return 0;
	buf_init(&b, BUF_NOCAP);
	buf_append(&b, data, half);
	buf_puts(&b, shapes[data[0] % (sizeof shapes / sizeof shapes[0])]);
	buf_append(&b, data + half, size - half);
	r = redact_text(b.data, b.len);
	/* the planted secret is gone unless the fuzzer wrote it itself */
	if (strstr(r, "SECRETX") != NULL &&
	    memmem(data, size, "SECRETX", 7) == NULL)
		abort();
	free(r);
	buf_release(&b);
	return 0;
}
