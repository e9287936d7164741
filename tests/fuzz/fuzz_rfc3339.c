/*
 * Fuzz the RFC 3339 time parser: no crash, *t untouched on failure, and
 * an accepted value is a well-formed time within the 4-digit-year range
 * that parses again to the same instant when printed back as UTC.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "xmalloc.h"

/* 0000-01-01T00:00:00+24:00 and 9999-12-31T23:59:60-24:00. */
#define MIN_T (-62167219200LL - 86400)
#define MAX_T (253402300799LL + 1 + 86400)

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, buf[64];
	time_t t = 42, t2 = 7;
	struct tm tm;

	s = xstrndup((const char *)data, size);
	if (tpu_parse_rfc3339(s, &t) != 0) {
		if (t != 42)
			abort();
		free(s);
		return 0;
	}
	if ((long long)t < MIN_T || (long long)t > MAX_T)
		abort();
	/* Round trip through the canonical form. */
	if (gmtime_r(&t, &tm) == NULL)
		abort();
	if (tm.tm_year + 1900 >= 0 && tm.tm_year + 1900 <= 9999) {
		/* %04d: strftime's %Y prints year 26 as "26". */
		snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec);
		if (tpu_parse_rfc3339(buf, &t2) != 0 || t2 != t)
			abort();
	}
	free(s);
	return 0;
}
