/*
 * Number, duration and RFC 3339 time parsing, monotonic time, base64,
 * writing a whole buffer.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "xmalloc.h"

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

int
tpu_parse_job_timeout(const char *arg, long long *secs, struct tpu_err *err)
{
	int rc;

	if ((rc = tpu_parse_duration("--timeout", arg, secs, err)) != 0)
		return rc;
	if (*secs <= 0 || *secs > 7 * 24 * 3600)
		return tpu_error(err, TPU_E_USAGE,
		    "--timeout '%s': must be between 1 s and 7 days", arg);
	return 0;
}

int
tpu_parse_rfc3339(const char *s, time_t *t)
{
	struct tm tm;
	const char *p = s;
	int v[6], i, off = 0;
	static const int len[6] = { 4, 2, 2, 2, 2, 2 };
	static const char sep[6] = { '-', '-', 'T', ':', ':', '\0' };
	time_t base;

	for (i = 0; i < 6; i++) {
		int k;

		v[i] = 0;
		for (k = 0; k < len[i]; k++, p++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			v[i] = v[i] * 10 + (*p - '0');
		}
		if (sep[i] != '\0') {
			if (*p != sep[i] && !(i == 2 && *p == 't'))
				return -1;
			p++;
		}
	}
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 ||
	    v[4] > 59 || v[5] > 60)
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		if (!isdigit((unsigned char)p[1]) ||
		    !isdigit((unsigned char)p[2]) || p[3] != ':' ||
		    !isdigit((unsigned char)p[4]) ||
		    !isdigit((unsigned char)p[5]))
			return -1;
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
		      ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		if (off > 24 * 3600)
			return -1;
		off *= sign;
		p += 6;
	} else
		return -1;
	if (*p != '\0')
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	base = timegm(&tm);
	/* timegm normalizes 2026-02-31: reject days the month lacks. */
	if (tm.tm_mday != v[2])
		return -1;
	*t = base - off;
	return 0;
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

size_t
tpu_utf8_len(const unsigned char *s)
{
	unsigned long cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

char *
tpu_show(const char *s, size_t len, char *out, size_t outlen, int flags)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	if (outlen == 0)
		return out;
	for (i = 0; i < len && o + 8 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c == '\\' && (flags & TPU_SHOW_BACKSLASH)) || c < 0x20 ||
		    c == 0x7f) {
			out[o++] = '\\';
			if (c == '\n')
				out[o++] = 'n';
			else if (c == '\r')
				out[o++] = 'r';
			else if (c == '\t')
				out[o++] = 't';
			else if (c == '\\')
				out[o++] = '\\';
			else {
				out[o++] = 'x';
				out[o++] = hex[c >> 4];
				out[o++] = hex[c & 15];
			}
		} else
			out[o++] = (char)c;
	}
	if (i < len && o + 3 < outlen) {
		out[o++] = '.';
		out[o++] = '.';
		out[o++] = '.';
	}
	out[o] = '\0';
	return out;
}

char *
tpu_show_dup(const char *s, int flags)
{
	size_t len = strlen(s), n = 4 * len + 8;
	char *out = xmalloc(n);

	return tpu_show(s, len, out, n, flags);
}

static const char b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t
tpu_b64_len(size_t len, int flags)
{
	if (flags & TPU_B64_NOPAD)
		return len / 3 * 4 + (len % 3 == 0 ? 0 : len % 3 + 1);
	return (len + 2) / 3 * 4;
}

size_t
tpu_b64_encode_to(char *out, const unsigned char *p, size_t len, int flags)
{
	const char *t = (flags & TPU_B64_URL) ? b64_url : b64_std;
	int pad = !(flags & TPU_B64_NOPAD);
	size_t i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		out[o++] = t[p[i] >> 2];
		out[o++] = t[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		out[o++] = t[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
		out[o++] = t[p[i + 2] & 63];
	}
	if (len - i == 1) {
		out[o++] = t[p[i] >> 2];
		out[o++] = t[(p[i] & 3) << 4];
		if (pad) {
			out[o++] = '=';
			out[o++] = '=';
		}
	} else if (len - i == 2) {
		out[o++] = t[p[i] >> 2];
		out[o++] = t[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		out[o++] = t[(p[i + 1] & 15) << 2];
		if (pad)
			out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

char *
tpu_b64_encode(const unsigned char *p, size_t len, int flags)
{
	char *out = xmalloc(tpu_b64_len(len, flags) + 1);

	tpu_b64_encode_to(out, p, len, flags);
	return out;
}

int
tpu_b64_value(unsigned char c, int flags)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == ((flags & TPU_B64_URL) ? '-' : '+'))
		return 62;
	if (c == ((flags & TPU_B64_URL) ? '_' : '/'))
		return 63;
	return -1;
}

unsigned char *
tpu_b64_decode(const char *s, size_t len, size_t *outlen, int flags)
{
	unsigned char *out;
	uint32_t acc = 0;
	size_t i, o = 0, pad = 0;
	int bits = 0, v;

	while (len > 0 && s[len - 1] == '=' && pad < 2) {
		len--;
		pad++;
	}
	if (len == 0 || len % 4 == 1 || (pad > 0 && (len + pad) % 4 != 0))
		return NULL;
	out = xmalloc(len * 3 / 4 + 1);
	for (i = 0; i < len; i++) {
		if ((v = tpu_b64_value((unsigned char)s[i], flags)) < 0) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	/* leftover bits must be zero (canonical encoding) */
	if ((acc & ((1u << bits) - 1)) != 0) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

int
tpu_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { fd, POLLOUT, 0 };

			(void)poll(&pfd, 1, 1000);
			continue;
		}
		if (w < 0)
			return errno != 0 ? errno : EIO;
		if (w == 0)
			return EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void
tpu_human_size(double v, char *out, size_t n)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t i = 0;

	while (v >= 1024 && i + 1 < sizeof u / sizeof u[0]) {
		v /= 1024;
		i++;
	}
	snprintf(out, n, i == 0 ? "%.0f %s" : "%.1f %s", v, u[i]);
}
