/*
 * gs:// URL parsing, bucket and object name rules, percent-encoding and
 * safe local path mapping for downloads.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gcsurl.h"
#include "util.h"
#include "xmalloc.h"

int
gcs_is_url(const char *s)
{
	return strncmp(s, "gs://", 5) == 0;
}

void
gcs_url_release(struct gcs_url *u)
{
	free(u->bucket);
	free(u->object);
	u->bucket = u->object = NULL;
}

int
gcs_url_parse(const char *s, struct gcs_url *u, struct tpu_err *err)
{
	const char *p, *slash;
	char *bucket;
	int rc;

	u->bucket = u->object = NULL;
	if (!gcs_is_url(s))
		return tpu_error(err, TPU_E_USAGE,
		    "invalid Cloud Storage URL '%s': expected "
		    "gs://BUCKET[/OBJECT]",
		    s);
	p = s + 5;
	slash = strchr(p, '/');
	bucket = slash != NULL ? xstrndup(p, (size_t)(slash - p)) : xstrdup(p);
	if ((rc = gcs_bucket_validate(bucket, err)) != 0) {
		free(bucket);
		return rc;
	}
	u->bucket = bucket;
	u->object = xstrdup(slash != NULL ? slash + 1 : "");
	if (*u->object != '\0' &&
	    (rc = gcs_object_validate(u->object, err)) != 0) {
		gcs_url_release(u);
		return rc;
	}
	return 0;
}

static int
is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int
is_ipv4(const char *s)
{
	int parts = 0, digits = 0;

	for (; *s != '\0'; s++) {
		if (*s >= '0' && *s <= '9') {
			if (++digits > 3)
				return 0;
		} else if (*s == '.') {
			if (digits == 0)
				return 0;
			parts++;
			digits = 0;
		} else
			return 0;
	}
	return parts == 3 && digits > 0;
}

int
gcs_bucket_validate(const char *name, struct tpu_err *err)
{
	size_t len = strlen(name), part = 0, i;
	int dots = 0;

	if (len < 3 || len > 222)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid bucket name '%s': must be 3 to 63 characters "
		    "(222 with dots)",
		    name);
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (c == '.') {
			dots = 1;
			part = 0;
			continue;
		}
		if (!is_lower_alnum(c) && c != '-' && c != '_')
			return tpu_error(err, TPU_E_USAGE,
			    "invalid bucket name '%s': only lowercase letters, "
			    "digits, '-', '_' and '.' are allowed",
			    name);
		if (++part > 63)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid bucket name '%s': each dot-separated part "
			    "must be at most 63 characters",
			    name);
	}
	if (!dots && len > 63)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid bucket name '%s': must be 3 to 63 characters "
		    "(222 with dots)",
		    name);
	if (!is_lower_alnum(name[0]) || !is_lower_alnum(name[len - 1]))
		return tpu_error(err, TPU_E_USAGE,
		    "invalid bucket name '%s': must start and end with a "
		    "lowercase letter or digit",
		    name);
	if (is_ipv4(name))
		return tpu_error(err, TPU_E_USAGE,
		    "invalid bucket name '%s': must not be an IP address",
		    name);
	if (strncmp(name, "goog", 4) == 0 || strstr(name, "google") != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid bucket name '%s': must not start with 'goog' or "
		    "contain 'google'",
		    name);
	return 0;
}

int
gcs_object_validate(const char *name, struct tpu_err *err)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t len = strlen(name), n;

	if (len == 0)
		return tpu_error(
		    err, TPU_E_USAGE, "invalid object name: must not be empty");
	if (len > 1024)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid object name '%.40s...': %zu bytes, at most 1024 "
		    "are allowed",
		    name, len);
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid object name '%s': '.' and '..' are not allowed",
		    name);
	while (*p != '\0') {
		if (*p == '\r' || *p == '\n')
			return tpu_error(err, TPU_E_USAGE,
			    "invalid object name: carriage return and line "
			    "feed are not allowed");
		if ((n = tpu_utf8_len(p)) == 0)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid object name: not valid UTF-8 at byte %zu",
			    (size_t)(p - (const unsigned char *)name));
		p += n;
	}
	return 0;
}

char *
gcs_pct_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b;
	const unsigned char *p;

	buf_init(&b, BUF_NOCAP);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		char enc[3];

		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~') {
			buf_append(&b, p, 1);
			continue;
		}
		enc[0] = '%';
		enc[1] = hex[*p >> 4];
		enc[2] = hex[*p & 0xf];
		buf_append(&b, enc, 3);
	}
	return buf_detach(&b, NULL);
}

char *
gcs_local_path(
    const char *dir, const char *prefix, const char *obj, struct tpu_err *err)
{
	const char *rest, *p, *end;
	size_t plen = strlen(prefix);

	if (strncmp(obj, prefix, plen) != 0) {
		tpu_error(err, TPU_E_INTERNAL,
		    "object '%s' does not start with prefix '%s'", obj, prefix);
		return NULL;
	}
	rest = obj + plen;
	while (*rest == '/' && plen > 0 && prefix[plen - 1] != '/')
		rest++;
	if (*rest == '\0' || *rest == '/' || rest[strlen(rest) - 1] == '/' ||
	    strchr(rest, '\\') != NULL)
		goto unsafe;
	for (p = rest; *p != '\0'; p = *end == '\0' ? end : end + 1) {
		size_t n;

		end = strchr(p, '/');
		if (end == NULL)
			end = p + strlen(p);
		n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			goto unsafe;
	}
	return xasprintf("%s/%s", dir, rest);
unsafe:
	tpu_error(err, TPU_E_INVALID,
	    "refusing to download object '%s': its name would map outside "
	    "'%s' ('..', '.', empty or absolute path components, or "
	    "backslashes)",
	    obj, dir);
	return NULL;
}

int
gcs_has_wildcard(const char *obj)
{
	return strpbrk(obj, "*?") != NULL;
}

size_t
gcs_wildcard_prefix(const char *obj)
{
	return strcspn(obj, "*?");
}

int
gcs_wildcard_match(const char *p, const char *s)
{
	/* Iterative, with two backtrack points: the last '*' (which never
	 * takes a '/') and the last "**" before it (which takes anything):
	 * at most O(len(p) * len(s)) steps, no recursion. */
	const char *sp = NULL, *ss = NULL, *dp = NULL, *ds = NULL;

	while (*s != '\0') {
		if (p[0] == '*' && p[1] == '*') {
			while (*p == '*')
				p++;
			dp = p;
			ds = s;
			sp = NULL;
		} else if (*p == '*') {
			p++;
			sp = p;
			ss = s;
		} else if (*p != '\0' && (*p == '?' ? *s != '/' : *p == *s)) {
			p++;
			s++;
		} else if (sp != NULL && *ss != '/') {
			p = sp;
			s = ++ss;
		} else if (dp != NULL) {
			p = dp;
			s = ++ds;
			sp = NULL;
		} else
			return 0;
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

size_t
gcs_wildcard_root(const char *p, const char *s)
{
	const char *q;
	size_t n;
	char *part;
	int hit;

	for (q = strchr(s, '/'); q != NULL; q = strchr(q + 1, '/')) {
		n = (size_t)(q - s);
		if (n == 0)
			continue;
		part = xstrndup(s, n);
		hit = gcs_wildcard_match(p, part);
		free(part);
		if (hit)
			return n;
	}
	return *s != '\0' && gcs_wildcard_match(p, s) ? strlen(s) : 0;
}
