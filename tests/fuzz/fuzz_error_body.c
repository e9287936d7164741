/*
 * Fuzz the Google error-body decoder with any status: no crash, the
 * message is always one printable line, and a known secret planted in the
 * body never survives.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tpu_err err;
	int status, rc;
	size_t i;

	if (size < 2)
		return 0;
	status = 100 + (data[0] | data[1] << 8) % 500;
	tpu_err_init(&err);
	rc = http_error_from_body(
	    status, (const char *)data + 2, size - 2, &err);
	if (rc >= 0 || err.http_status != status)
		abort();
	for (i = 0; err.msg[i] != '\0'; i++)
		if ((unsigned char)err.msg[i] < 0x20)
			abort();
	if (strstr(err.msg, "ya29.SECRET") != NULL)
		abort();
	return 0;
}
