/*
 * tpuctl's known_hosts: an OpenSSH-format file parsed by hand (fuzzed by
 * tests/fuzz/fuzz_knownhosts.c), keys compared blob to blob, written
 * through fsutil's atomic replace.  See knownhosts.h.
 */
#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "buf.h"
#include "fsutil.h"
#include "knownhosts.h"
#include "util.h"
#include "xmalloc.h"

#define KNOWNHOSTS_MAX_FILE (16 << 20)
#define KNOWNHOSTS_MAX_BLOB 16384

char *
knownhosts_default_path(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg != NULL && xdg[0] == '/')
		return xasprintf("%s/tpuctl/known_hosts", xdg);
	if (home == NULL || home[0] == '\0')
		return NULL;
	return xasprintf("%s/.config/tpuctl/known_hosts", home);
}

int
knownhosts_alias(
    const char *node_id, int worker, char **out, struct tpu_err *err)
{
	size_t len = strlen(node_id);

	*out = NULL;
	if (len == 0 || len > 64 ||
	    strspn(node_id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                    "abcdefghijklmnopqrstuvwxyz0123456789_.-") != len)
		return tpu_error(err, TPU_E_INVALID,
		    "invalid node id '%.80s': expected 1 to 64 characters "
		    "of [A-Za-z0-9_.-]",
		    node_id);
	if (worker < 0 || worker > 99999)
		return tpu_error(err, TPU_E_INVALID,
		    "invalid worker index %d: expected 0 to 99999", worker);
	*out = xasprintf("tpu.%s-%d", node_id, worker);
	return 0;
}

static int
is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/* Next whitespace-separated field of s[*i..len). */
static int
next_field(const char *s, size_t len, size_t *i, const char **f, size_t *flen)
{
	while (*i < len && is_ws(s[*i]))
		(*i)++;
	if (*i >= len)
		return 0;
	*f = s + *i;
	while (*i < len && !is_ws(s[*i]))
		(*i)++;
	*flen = (size_t)(s + *i - *f);
	return 1;
}

int
knownhosts_parse_key(
    const char *s, size_t len, struct knownhosts_key *key, struct tpu_err *err)
{
	const char *t = NULL, *b = NULL;
	size_t i = 0, tlen = 0, blen = 0, n, j;
	unsigned char *blob;
	uint32_t inner;

	memset(key, 0, sizeof *key);
	for (j = 0; j < len; j++)
		if (s[j] == '\0' || s[j] == '\n' || s[j] == '\r')
			return tpu_error(err, TPU_E_INVALID,
			    "invalid public key: contains a NUL, CR or LF");
	if (!next_field(s, len, &i, &t, &tlen) ||
	    !next_field(s, len, &i, &b, &blen))
		return tpu_error(err, TPU_E_INVALID,
		    "invalid public key '%.*s': expected 'keytype base64'",
		    (int)(len > 80 ? 80 : len), s);
	if (tlen >= KNOWNHOSTS_TYPE_LEN ||
	    strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	              "0123456789@.-") < tlen)
		return tpu_error(err, TPU_E_INVALID,
		    "invalid public key type '%.*s'",
		    (int)(tlen > 60 ? 60 : tlen), t);
	if (blen > KNOWNHOSTS_MAX_BLOB * 4 / 3 + 4 ||
	    (blob = tpu_b64_decode(b, blen, &n, 0)) == NULL)
		return tpu_error(err, TPU_E_INVALID,
		    "invalid public key of type '%.*s': bad base64", (int)tlen,
		    t);
	/* the blob starts with string(type), which must agree */
	if (n < 4 ||
	    (inner = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 |
	             (uint32_t)blob[2] << 8 | blob[3]) != tlen ||
	    n - 4 < inner || memcmp(blob + 4, t, tlen) != 0) {
		free(blob);
		return tpu_error(err, TPU_E_INVALID,
		    "invalid public key: the key data is not of type '%.*s'",
		    (int)tlen, t);
	}
	memcpy(key->type, t, tlen);
	key->type[tlen] = '\0';
	key->blob = blob;
	key->len = n;
	return 0;
}

void
knownhosts_key_release(struct knownhosts_key *key)
{
	free(key->blob);
	memset(key, 0, sizeof *key);
}

void
knownhosts_fingerprint(
    const unsigned char *blob, size_t len, char out[KNOWNHOSTS_FP_LEN])
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	char *enc;

	if (EVP_Digest(blob, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != sizeof md) {
		snprintf(out, KNOWNHOSTS_FP_LEN, "SHA256:?");
		return;
	}
	enc = tpu_b64_encode(md, sizeof md, TPU_B64_NOPAD);
	snprintf(out, KNOWNHOSTS_FP_LEN, "SHA256:%s", enc);
	free(enc);
}

void
knownhosts_init(struct knownhosts *kh, const char *path)
{
	memset(kh, 0, sizeof *kh);
	if (path != NULL)
		kh->path = xstrdup(path);
}

static void
line_release(struct knownhosts_line *l)
{
	free(l->text);
	free(l->hosts);
	knownhosts_key_release(&l->key);
}

void
knownhosts_release(struct knownhosts *kh)
{
	size_t i;

	for (i = 0; i < kh->n; i++)
		line_release(&kh->v[i]);
	free(kh->v);
	free(kh->path);
	memset(kh, 0, sizeof *kh);
}

/* Is the comment after "keytype base64" exactly KNOWNHOSTS_MARK? */
static int
own_comment(const char *s, size_t len)
{
	const char *f;
	size_t i = 0, flen;

	if (!next_field(s, len, &i, &f, &flen) ||
	    !next_field(s, len, &i, &f, &flen) ||
	    !next_field(s, len, &i, &f, &flen))
		return 0;
	if (flen != strlen(KNOWNHOSTS_MARK) ||
	    strncmp(f, KNOWNHOSTS_MARK, flen) != 0)
		return 0;
	return !next_field(s, len, &i, &f, &flen);
}

static void
add_line(struct knownhosts *kh, const char *s, size_t len)
{
	struct knownhosts_line *l;
	struct tpu_err err;
	const char *h = NULL;
	size_t i = 0, hlen = 0;

	kh->v = xreallocarray(kh->v, kh->n + 1, sizeof *kh->v);
	l = &kh->v[kh->n++];
	memset(l, 0, sizeof *l);
	l->text = xstrndup(s, len);
	len = strlen(l->text); /* stop at an embedded NUL */
	s = l->text;
	if (!next_field(s, len, &i, &h, &hlen) || h[0] == '#' || h[0] == '@' ||
	    h[0] == '|')
		return;
	if (knownhosts_parse_key(s + i, len - i, &l->key, &err) != 0)
		return;
	l->hosts = xstrndup(h, hlen);
	l->own = strchr(l->hosts, ',') == NULL && own_comment(s + i, len - i);
}

void
knownhosts_parse(struct knownhosts *kh, const char *text, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		for (j = i; j < len && text[j] != '\n'; j++)
			;
		if (j > i && text[j - 1] == '\r')
			add_line(kh, text + i, j - i - 1);
		else
			add_line(kh, text + i, j - i);
		i = j + 1;
	}
}

/* path (a file, or a directory when dir) may hold trusted keys: owned by
 * the user or root and writable by nobody else (OpenSSH's StrictModes) */
static int
strict_one(const char *path, int dir, struct tpu_err *err)
{
	struct stat st;

	if ((dir ? stat(path, &st) : lstat(path, &st)) != 0)
		return 0; /* missing: nothing anyone could have planted */
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return tpu_error(err, TPU_E_PERMISSION,
		    "refusing known_hosts '%s': %s '%s' is owned by uid %u, "
		    "not by you or root",
		    dir ? "its directory" : "the file", path, path,
		    (unsigned)st.st_uid);
	if ((st.st_mode & 022) != 0)
		return tpu_error(err, TPU_E_PERMISSION,
		    "refusing known_hosts: %s '%s' is writable by group or "
		    "others (mode %04o), so anyone could pin a host key; "
		    "chmod go-w '%s'",
		    dir ? "directory" : "file", path,
		    (unsigned)(st.st_mode & 07777), path);
	return 0;
}

/* The file, its directory, and each parent up to HOME when under it. */
static int
strict_modes(const char *path, struct tpu_err *err)
{
	const char *home = getenv("HOME");
	size_t hl = home != NULL ? strlen(home) : 0;
	char *d = xstrdup(path), *slash;
	int rc;

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if ((rc = strict_one(path, 0, err)) != 0)
		goto out;
	while ((slash = strrchr(d, '/')) != NULL && slash != d) {
		*slash = '\0';
		if ((rc = strict_one(d, 1, err)) != 0)
			goto out;
		/* stop at HOME, or at once outside it */
		if (hl == 0 || strncmp(d, home, hl) != 0 || d[hl] != '/')
			break;
	}
out:
	free(d);
	return rc;
}

int
knownhosts_load(struct knownhosts *kh, struct tpu_err *err)
{
	struct buf b;
	int rc;

	if (kh->path == NULL)
		return tpu_error(
		    err, TPU_E_INTERNAL, "known_hosts has no path");
	if ((rc = strict_modes(kh->path, err)) != 0)
		return rc;
	buf_init(&b, KNOWNHOSTS_MAX_FILE);
	rc = fsutil_read_file(kh->path, FSUTIL_F_NOFOLLOW, &b, NULL, err);
	if (rc == TPU_E_NOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc != 0)
		goto out;
	knownhosts_parse(kh, b.data, b.len);
out:
	buf_release(&b);
	return rc;
}

/* Does the comma-separated host field name alias exactly? */
static int
hosts_match(const char *hosts, const char *alias)
{
	size_t alen = strlen(alias);
	const char *p = hosts, *c;

	for (;;) {
		c = strchr(p, ',');
		if ((c != NULL ? (size_t)(c - p) : strlen(p)) == alen &&
		    strncmp(p, alias, alen) == 0)
			return 1;
		if (c == NULL)
			return 0;
		p = c + 1;
	}
}

size_t
knownhosts_lookup(const struct knownhosts *kh, const char *alias,
    const struct knownhosts_key **keys, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < kh->n; i++) {
		if (kh->v[i].hosts == NULL ||
		    !hosts_match(kh->v[i].hosts, alias))
			continue;
		if (n < max)
			keys[n] = &kh->v[i].key;
		n++;
	}
	return n;
}

size_t
knownhosts_pinned(const struct knownhosts *kh, const char *alias)
{
	size_t i, n = 0;

	for (i = 0; i < kh->n; i++)
		n += kh->v[i].own && strcmp(kh->v[i].hosts, alias) == 0;
	return n;
}

int
knownhosts_match(const struct knownhosts_key *pinned, size_t n,
    const struct knownhosts_key *presented, size_t *best)
{
	size_t i;

	if (best != NULL)
		*best = 0;
	for (i = 0; i < n; i++)
		if (pinned[i].len == presented->len &&
		    memcmp(pinned[i].blob, presented->blob, presented->len) ==
		        0)
			return 1;
	/* the pinned key of the same type names the mismatch */
	for (i = 0; i < n && best != NULL; i++)
		if (strcmp(pinned[i].type, presented->type) == 0) {
			*best = i;
			break;
		}
	return 0;
}

int
knownhosts_replace(struct knownhosts *kh, const char *alias,
    const char *const *keylines, size_t n, struct tpu_err *err)
{
	struct knownhosts_key *parsed;
	size_t i, j;
	int rc = 0;

	if (alias[0] == '\0' || strpbrk(alias, " \t\r\n,#@|") != NULL)
		return tpu_error(err, TPU_E_INVALID,
		    "invalid known_hosts alias '%.80s'", alias);
	parsed = xcalloc(n == 0 ? 1 : n, sizeof *parsed);
	for (i = 0; i < n; i++)
		if ((rc = knownhosts_parse_key(keylines[i], strlen(keylines[i]),
		         &parsed[i], err)) != 0)
			goto out;
	/* drop the alias's lines, keep everything else in order */
	for (i = j = 0; i < kh->n; i++) {
		if (kh->v[i].hosts != NULL &&
		    strcmp(kh->v[i].hosts, alias) == 0)
			line_release(&kh->v[i]);
		else
			kh->v[j++] = kh->v[i];
	}
	kh->n = j;
	for (i = 0; i < n; i++) {
		struct knownhosts_line *l;
		char *enc;

		kh->v = xreallocarray(kh->v, kh->n + 1, sizeof *kh->v);
		l = &kh->v[kh->n++];
		enc = tpu_b64_encode(parsed[i].blob, parsed[i].len, 0);
		l->text = xasprintf(
		    "%s %s %s %s", alias, parsed[i].type, enc, KNOWNHOSTS_MARK);
		free(enc);
		l->hosts = xstrdup(alias);
		l->own = 1;
		l->key = parsed[i];
		memset(&parsed[i], 0, sizeof parsed[i]);
	}
out:
	for (i = 0; i < n; i++)
		knownhosts_key_release(&parsed[i]);
	free(parsed);
	return rc;
}

char **
knownhosts_lines(const struct knownhosts *kh, const char *alias, size_t *np)
{
	char **v = xcalloc(kh->n + 1, sizeof *v);
	size_t i, n = 0;

	for (i = 0; i < kh->n; i++) {
		char *enc;

		if (!kh->v[i].own || strcmp(kh->v[i].hosts, alias) != 0)
			continue;
		enc = tpu_b64_encode(kh->v[i].key.blob, kh->v[i].key.len, 0);
		v[n++] = xasprintf("%s %s", kh->v[i].key.type, enc);
		free(enc);
	}
	if (np != NULL)
		*np = n;
	return v;
}

void
knownhosts_lines_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

int
knownhosts_save(const struct knownhosts *kh, struct tpu_err *err)
{
	struct buf b;
	char *dir = NULL, *slash;
	size_t i;
	int rc;

	buf_init(&b, BUF_NOCAP);
	if (kh->path == NULL) {
		rc = tpu_error(err, TPU_E_INTERNAL, "known_hosts has no path");
		goto out;
	}
	dir = xstrdup(kh->path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if ((rc = fsutil_mkdir_private(dir, err)) != 0)
			goto out;
	}
	for (i = 0; i < kh->n; i++) {
		buf_puts(&b, kh->v[i].text);
		buf_append(&b, "\n", 1);
	}
	rc = fsutil_write_atomic(kh->path, b.data, b.len, 0600, err);
out:
	free(dir);
	buf_release(&b);
	return rc;
}
