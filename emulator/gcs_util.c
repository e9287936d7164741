/*
 * Pure parsing helpers of the emulator's Cloud Storage module: see
 * gcs_util.h.  Everything here works on caller memory and never does I/O,
 * so the fuzz target fuzz_emu_gcs drives it directly.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gcs_util.h"
#include "util.h"
#include "xmalloc.h"

static int
gcsemu_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *
gcsemu_pct_decode(const char *s, size_t len)
{
	char *out = xmalloc(len + 1);
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < len; i++) {
		if (s[i] == '%') {
			if (i + 2 >= len)
				goto bad;
			hi = gcsemu_hexval((unsigned char)s[i + 1]);
			lo = gcsemu_hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				goto bad;
			out[o] = (char)(hi * 16 + lo);
			i += 2;
		} else
			out[o] = s[i];
		if (out[o] == '\0')
			goto bad;
		o++;
	}
	out[o] = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

char *
gcsemu_pct_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	char *out = xmalloc(strlen(s) * 3 + 1);
	size_t o = 0;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~') {
			out[o++] = (char)*p;
			continue;
		}
		out[o++] = '%';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 0xf];
	}
	out[o] = '\0';
	return out;
}

/* Decode and join segs[from..to) with '/'; NULL on a bad escape. */
static char *
gcsemu_join(char **segs, size_t from, size_t to)
{
	size_t i, n = 0, o = 0, l;
	char *out, *d;

	for (i = from; i < to; i++)
		n += strlen(segs[i]) + 1;
	out = xmalloc(n + 1);
	for (i = from; i < to; i++) {
		if ((d = gcsemu_pct_decode(segs[i], strlen(segs[i]))) == NULL) {
			free(out);
			return NULL;
		}
		if (i > from)
			out[o++] = '/';
		l = strlen(d);
		memcpy(out + o, d, l);
		o += l;
		free(d);
	}
	out[o] = '\0';
	return out;
}

void
gcsemu_path_release(struct gcsemu_path *p)
{
	free(p->bucket);
	free(p->object);
	free(p->dbucket);
	free(p->dobject);
	memset(p, 0, sizeof(*p));
}

int
gcsemu_path_parse(const char *raw, const char *method, struct gcsemu_path *p)
{
	static const struct {
		const char *prefix;
		enum gcsemu_api api;
	} apis[] = {
		{ "/storage/v1", GCSEMU_API_JSON },
		{ "/upload/storage/v1", GCSEMU_API_UPLOAD },
		{ "/download/storage/v1", GCSEMU_API_DOWNLOAD },
		{ "", GCSEMU_API_JSON },
	};
	char *path = NULL, **segs = NULL, *s, *slash;
	size_t i, n = 0, k, plen, l;
	int rc = -1;

	memset(p, 0, sizeof(*p));
	plen = strcspn(raw, "?#");
	for (i = 0; i < sizeof(apis) / sizeof(apis[0]); i++) {
		l = strlen(apis[i].prefix);
		if (plen >= l + 2 && strncmp(raw, apis[i].prefix, l) == 0 &&
		    strncmp(raw + l, "/b", 2) == 0 &&
		    (plen == l + 2 || raw[l + 2] == '/'))
			break;
	}
	if (i == sizeof(apis) / sizeof(apis[0]))
		return -1;
	p->api = apis[i].api;
	l = strlen(apis[i].prefix);
	path = xstrndup(raw + l + 1, plen - l - 1); /* "b/..." */
	/* Split on '/': at most one segment per byte. */
	segs = xcalloc(strlen(path) + 2, sizeof(*segs));
	s = path;
	for (;;) {
		segs[n++] = s;
		if ((slash = strchr(s, '/')) == NULL)
			break;
		*slash = '\0';
		s = slash + 1;
	}
	if (n == 1 || (n == 2 && segs[1][0] == '\0')) {
		p->kind = GCSEMU_P_BUCKETS;
		rc = 0;
		goto out;
	}
	if ((p->bucket = gcsemu_join(segs, 1, 2)) == NULL || p->bucket[0] == 0)
		goto out;
	if (n == 2) {
		p->kind = GCSEMU_P_BUCKET;
		rc = 0;
		goto out;
	}
	if (strcmp(segs[2], "o") != 0)
		goto out;
	if (n == 3 || (n == 4 && segs[3][0] == '\0')) {
		p->kind = GCSEMU_P_OBJECTS;
		rc = 0;
		goto out;
	}
	for (k = 4; k + 4 < n; k++) {
		if ((strcmp(segs[k], "rewriteTo") == 0 ||
		        strcmp(segs[k], "copyTo") == 0) &&
		    strcmp(segs[k + 1], "b") == 0 &&
		    strcmp(segs[k + 3], "o") == 0) {
			p->kind = segs[k][0] == 'r' ? GCSEMU_P_REWRITE
			                            : GCSEMU_P_COPY;
			p->object = gcsemu_join(segs, 3, k);
			p->dbucket = gcsemu_join(segs, k + 2, k + 3);
			p->dobject = gcsemu_join(segs, k + 4, n);
			if (p->object == NULL || p->dbucket == NULL ||
			    p->dobject == NULL || p->dbucket[0] == '\0')
				goto out;
			rc = 0;
			goto out;
		}
	}
	if (n >= 5 && strcmp(segs[n - 1], "compose") == 0 &&
	    strcmp(method, "POST") == 0) {
		p->kind = GCSEMU_P_COMPOSE;
		p->object = gcsemu_join(segs, 3, n - 1);
	} else {
		p->kind = GCSEMU_P_OBJECT;
		p->object = gcsemu_join(segs, 3, n);
	}
	if (p->object != NULL)
		rc = 0;
out:
	free(segs);
	free(path);
	if (rc != 0)
		gcsemu_path_release(p);
	return rc;
}

int
gcsemu_mp_boundary(const char *ctype, char *out, size_t outlen)
{
	const char *p, *q;
	size_t n;

	if (ctype == NULL || strncasecmp(ctype, "multipart/", 10) != 0)
		return -1;
	for (p = ctype; (p = strchr(p, ';')) != NULL;) {
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "boundary=", 9) != 0)
			continue;
		p += 9;
		if (*p == '"') {
			p++;
			if ((q = strchr(p, '"')) == NULL)
				return -1;
		} else
			q = p + strcspn(p, "; \t");
		n = (size_t)(q - p);
		if (n == 0 || n > 70 || n >= outlen)
			return -1;
		memcpy(out, p, n);
		out[n] = '\0';
		return 0;
	}
	return -1;
}

/* Skip one line end at buf[*i]; 0 or -1 when there is none. */
static int
gcsemu_eol(const char *buf, size_t len, size_t *i)
{
	if (*i < len && buf[*i] == '\n') {
		(*i)++;
		return 0;
	}
	if (*i + 1 < len && buf[*i] == '\r' && buf[*i + 1] == '\n') {
		*i += 2;
		return 0;
	}
	return -1;
}

/*
 * Part headers from *i up to and including the blank line; the
 * Content-Type value goes into ctype.  0 or -1.
 */
static int
gcsemu_mp_headers(
    const char *buf, size_t len, size_t *i, char *ctype, size_t ctlen)
{
	size_t start, end, n;
	const char *v;

	if (ctype != NULL)
		ctype[0] = '\0';
	for (;;) {
		start = *i;
		if (gcsemu_eol(buf, len, i) == 0)
			return 0; /* the blank line */
		while (*i < len && buf[*i] != '\n')
			(*i)++;
		if (*i >= len)
			return -1;
		end = *i;
		if (end > start && buf[end - 1] == '\r')
			end--;
		(*i)++;
		if (ctype != NULL && end - start > 13 &&
		    strncasecmp(buf + start, "content-type:", 13) == 0) {
			v = buf + start + 13;
			while (v < buf + end && (*v == ' ' || *v == '\t'))
				v++;
			n = (size_t)(buf + end - v);
			if (n >= ctlen)
				n = ctlen - 1;
			memcpy(ctype, v, n);
			ctype[n] = '\0';
		}
	}
}

int
gcsemu_mp_parse(
    const char *buf, size_t len, const char *boundary, struct gcsemu_mp *mp)
{
	char delim[80];
	size_t dl, i, q;
	const char *hit;

	memset(mp, 0, sizeof(*mp));
	dl = (size_t)snprintf(delim, sizeof(delim), "--%s", boundary);
	if (dl >= sizeof(delim) || dl <= 2)
		return -1;
	/* The first delimiter, after an optional preamble. */
	if ((hit = memmem(buf, len, delim, dl)) == NULL)
		return -1;
	i = (size_t)(hit - buf) + dl;
	if (gcsemu_eol(buf, len, &i) != 0)
		return -1;
	if (gcsemu_mp_headers(buf, len, &i, NULL, 0) != 0)
		return -1;
	mp->json_off = i;
	/* The metadata part ends at the next delimiter, on its own line. */
	for (;;) {
		hit = memmem(buf + i, len - i, delim, dl);
		if (hit == NULL)
			return -1;
		q = (size_t)(hit - buf);
		if (q > mp->json_off && buf[q - 1] == '\n')
			break;
		if (q == mp->json_off)
			break;
		i = q + 1;
	}
	mp->json_len = q - mp->json_off;
	if (mp->json_len > 0 && buf[q - 1] == '\n')
		mp->json_len--;
	if (mp->json_len > 0 && buf[mp->json_off + mp->json_len - 1] == '\r')
		mp->json_len--;
	i = q + dl;
	if (gcsemu_eol(buf, len, &i) != 0)
		return -1; /* "--B--" right away: no media part */
	if (gcsemu_mp_headers(
	        buf, len, &i, mp->data_ctype, sizeof(mp->data_ctype)) != 0)
		return -1;
	mp->data_off = i;
	/* The media part ends at the last closing delimiter "--B--". */
	if (len < mp->data_off + dl + 2)
		return -1;
	for (q = len - dl - 2;; q--) {
		if (memcmp(buf + q, delim, dl) == 0 && buf[q + dl] == '-' &&
		    buf[q + dl + 1] == '-')
			break;
		if (q == mp->data_off)
			return -1;
	}
	if (q > mp->data_off && buf[q - 1] == '\n') {
		q--;
		if (q > mp->data_off && buf[q - 1] == '\r')
			q--;
	}
	mp->data_len = q - mp->data_off;
	return 0;
}

/* Parse a decimal uint64 at *s, advancing; -1 when there is none. */
static int
gcsemu_u64(const char **s, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = *s;

	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p)) {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
		p++;
	}
	*s = p;
	*v = x;
	return 0;
}

int
gcsemu_crange_parse(const char *s, struct gcsemu_crange *cr)
{
	memset(cr, 0, sizeof(*cr));
	if (s == NULL || strncmp(s, "bytes ", 6) != 0)
		return -1;
	s += 6;
	while (*s == ' ')
		s++;
	if (*s == '*') {
		s++;
	} else {
		if (gcsemu_u64(&s, &cr->first) != 0 || *s++ != '-')
			return -1;
		if (*s == '*') {
			cr->open_end = 1;
			s++;
		} else if (gcsemu_u64(&s, &cr->last) != 0 ||
		           cr->last < cr->first)
			return -1;
		cr->has_range = 1;
	}
	if (*s++ != '/')
		return -1;
	if (*s == '*') {
		s++;
	} else {
		if (gcsemu_u64(&s, &cr->total) != 0)
			return -1;
		cr->total_known = 1;
		if (cr->has_range && !cr->open_end && cr->last >= cr->total)
			return -1;
	}
	return *s == '\0' ? 0 : -1;
}

int
gcsemu_range_parse(const char *s, uint64_t size, uint64_t *off, uint64_t *len)
{
	uint64_t a, b;

	if (s == NULL || strncmp(s, "bytes=", 6) != 0)
		return 1;
	s += 6;
	if (strchr(s, ',') != NULL)
		return 1;
	if (*s == '-') {
		s++;
		if (gcsemu_u64(&s, &b) != 0 || *s != '\0')
			return 1;
		if (b == 0)
			return -1;
		if (b > size)
			b = size;
		*off = size - b;
		*len = b;
		return size == 0 ? -1 : 0;
	}
	if (gcsemu_u64(&s, &a) != 0 || *s++ != '-')
		return 1;
	if (*s == '\0')
		b = UINT64_MAX;
	else if (gcsemu_u64(&s, &b) != 0 || *s != '\0' || b < a)
		return 1;
	if (a >= size)
		return -1;
	if (b >= size)
		b = size - 1;
	*off = a;
	*len = b - a + 1;
	return 0;
}

int
gcsemu_goog_hash_parse(
    const char *s, char *crc, size_t crclen, char *md5, size_t md5len)
{
	const char *p = s, *end, *eq;
	char *dst;
	size_t n, dlen;

	crc[0] = '\0';
	md5[0] = '\0';
	while (*p != '\0') {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		end = p + strcspn(p, ",");
		if ((eq = memchr(p, '=', (size_t)(end - p))) == NULL)
			return -1;
		if (eq - p == 6 && strncasecmp(p, "crc32c", 6) == 0) {
			dst = crc;
			dlen = crclen;
		} else if (eq - p == 3 && strncasecmp(p, "md5", 3) == 0) {
			dst = md5;
			dlen = md5len;
		} else {
			p = end;
			continue;
		}
		eq++;
		n = (size_t)(end - eq);
		while (n > 0 && eq[n - 1] == ' ')
			n--;
		if (n == 0 || n >= dlen)
			return -1;
		memcpy(dst, eq, n);
		dst[n] = '\0';
		p = end;
	}
	return 0;
}

static size_t
gcsemu_varint(uint64_t v, unsigned char *out)
{
	size_t n = 0;

	do {
		out[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v != 0)
			out[n] |= 0x80;
		n++;
	} while (v != 0);
	return n;
}

void
gcsemu_etag(int64_t gen, int64_t metagen, char *out, size_t outlen)
{
	unsigned char b[32];
	char tmp[48];
	size_t n = 0;

	b[n++] = 0x08;
	n += gcsemu_varint((uint64_t)gen, b + n);
	b[n++] = 0x10;
	n += gcsemu_varint((uint64_t)metagen, b + n);
	tpu_b64_encode_to(tmp, b, n, 0);
	snprintf(out, outlen, "%s", tmp);
}

int
gcsemu_is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}
