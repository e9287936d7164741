/*
 * Number and duration parsing, monotonic time.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

long long
tpu_strtonum(const char *s, long long min, long long max, const char **errstr)
{
	long long v;
	char *end;

	*errstr = NULL;
	if (s == NULL || *s == '\0' || min > max) {
		*errstr = "invalid";
		return 0;
	}
	/* Reject leading space and '+', which strtoll would accept. */
	if (*s != '-' && (*s < '0' || *s > '9')) {
		*errstr = "invalid";
		return 0;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0') {
		*errstr = "invalid";
		return 0;
	}
	if ((errno == ERANGE && v == LLONG_MIN) || v < min) {
		*errstr = "too small";
		return 0;
	}
	if ((errno == ERANGE && v == LLONG_MAX) || v > max) {
		*errstr = "too large";
		return 0;
	}
	return v;
}

int
tpu_parse_duration(
    const char *flag, const char *s, long long *secs, struct tpu_err *err)
{
	const long long cap = 366LL * 24 * 3600;
	long long total = 0, n;
	const char *p = s;

	if (s == NULL || *s == '\0')
		goto bad;
	while (*p != '\0') {
		const char *seg = p;
		long long mult;

		if (*p < '0' || *p > '9')
			goto bad;
		n = 0;
		while (*p >= '0' && *p <= '9') {
			n = n * 10 + (*p - '0');
			if (n > cap)
				goto bad;
			p++;
		}
		switch (*p) {
		case '\0':
			/* A bare number is seconds, only as the whole value. */
			if (seg != s)
				goto bad;
			mult = 1;
			break;
		case 's':
			mult = 1;
			p++;
			break;
		case 'm':
			mult = 60;
			p++;
			break;
		case 'h':
			mult = 3600;
			p++;
			break;
		case 'd':
			mult = 86400;
			p++;
			break;
		default:
			goto bad;
		}
		total += n * mult;
		if (total > cap)
			goto bad;
	}
	*secs = total;
	return 0;
bad:
	return tpu_error(err, TPU_E_USAGE,
	    "invalid duration '%s' for %s: expected seconds or a value like "
	    "90s, 5m, 2h, 1d, 1h30m (at most 366d)",
	    s != NULL ? s : "", flag);
}

int64_t
tpu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
tpu_sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	return nanosleep(&ts, NULL) == 0 ? 0 : -1;
}

int
tpu_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}
