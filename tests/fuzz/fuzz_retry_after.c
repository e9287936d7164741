/*
 * Fuzz Retry-After parsing (delta-seconds and the three HTTP-date forms):
 * no crash, and an accepted value is never negative nor beyond a year.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "retry.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	int64_t ms = -1;

	if (retry_parse_after(s, 1445412480, &ms) == 0 &&
	    (ms < 0 || ms > 86400000LL * 366 * 10000))
		abort();
	free(s);
	return 0;
}
