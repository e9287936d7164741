/*
 * The workdir archive of `tpuctl run` (see pack.h): a deterministic
 * ustar/pax stream written while its sha256 is computed, so one pass
 * over the tree gives both the archive and its name.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "buf.h"
#include "fsutil.h"
#include "pack.h"
#include "xmalloc.h"

#define BLOCK 512
#define WBUF (64 * 1024)

struct packer {
	int fd;
	EVP_MD_CTX *md;
	unsigned char *wb;
	size_t wlen;
	uint64_t total;
	const struct pack_opts *opts;
	struct pack_stats st;
	struct tpu_err *err;
};

int
pack_excluded(const struct pack_opts *o, const char *rel)
{
	const char *base = strrchr(rel, '/');
	size_t i;

	base = base != NULL ? base + 1 : rel;
	for (i = 0; o != NULL && i < o->nexcludes; i++)
		if (fnmatch(o->excludes[i], rel, 0) == 0 ||
		    fnmatch(o->excludes[i], base, 0) == 0)
			return 1;
	return 0;
}

static int
flush_out(struct packer *p)
{
	size_t off = 0;

	while (off < p->wlen) {
		ssize_t w = write(p->fd, p->wb + off, p->wlen - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return tpu_error(p->err, TPU_E_IO,
			    "cannot write the workdir archive: %s",
			    strerror(errno));
		}
		off += (size_t)w;
	}
	p->wlen = 0;
	return 0;
}

static int
put(struct packer *p, const void *data, size_t n)
{
	const unsigned char *d = data;
	int rc;

	if (EVP_DigestUpdate(p->md, d, n) != 1)
		return tpu_error(p->err, TPU_E_INTERNAL, "sha256 failed");
	p->total += n;
	while (n > 0) {
		size_t k = WBUF - p->wlen;

		if (k > n)
			k = n;
		memcpy(p->wb + p->wlen, d, k);
		p->wlen += k;
		d += k;
		n -= k;
		if (p->wlen == WBUF && (rc = flush_out(p)) != 0)
			return rc;
	}
	return 0;
}

static int
pad(struct packer *p, uint64_t n)
{
	static const unsigned char zero[BLOCK];
	size_t r = (size_t)(n % BLOCK);

	return r == 0 ? 0 : put(p, zero, BLOCK - r);
}

/* One pax record "LEN key=value\n", LEN counting itself. */
static void
pax_record(struct buf *b, const char *key, const char *value)
{
	size_t body = 1 + strlen(key) + 1 + strlen(value) + 1;
	size_t len = body + 1, digits;

	for (;;) {
		char tmp[24];

		digits = (size_t)snprintf(tmp, sizeof tmp, "%zu", len);
		if (body + digits == len)
			break;
		len = body + digits;
	}
	buf_printf(b, "%zu %s=%s\n", len, key, value);
}

static void
octal(char *field, size_t width, uint64_t v)
{
	/* width - 1 digits and a NUL */
	snprintf(
	    field, width, "%0*llo", (int)(width - 1), (unsigned long long)v);
}

static int
header_block(struct packer *p, const char *name, const char *prefix,
    unsigned mode, uint64_t size, char type, const char *link)
{
	unsigned char h[BLOCK];
	unsigned sum = 0;
	size_t i;

	memset(h, 0, sizeof h);
	memcpy(h, name, strlen(name) > 100 ? 100 : strlen(name));
	octal((char *)h + 100, 8, mode);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, 0);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	if (link != NULL)
		memcpy(h + 157, link, strlen(link) > 100 ? 100 : strlen(link));
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	octal((char *)h + 329, 8, 0);
	octal((char *)h + 337, 8, 0);
	if (prefix != NULL)
		memcpy(h + 345, prefix, strlen(prefix));
	for (i = 0; i < BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
	return put(p, h, BLOCK);
}

/*
 * The header(s) of one entry: name is the archive name (a directory's
 * ends with '/'), link the symlink target or NULL.
 */
static int
entry_header(struct packer *p, const char *name, unsigned mode, uint64_t size,
    char type, const char *link)
{
	size_t len = strlen(name), cut = 0;
	int need_path = 0, need_link = 0, need_size = 0, rc;
	char *prefix = NULL;
	const char *tail = name;

	if (len > 100) {
		/* split at a '/' into prefix (<= 155) and name (1..100) */
		size_t i;

		for (i = len > 101 ? len - 101 : 0; i < len && i <= 155; i++)
			if (name[i] == '/' && len - i - 1 <= 100 &&
			    len - i - 1 > 0) {
				cut = i;
				break;
			}
		if (cut == 0)
			need_path = 1;
		else {
			prefix = xstrndup(name, cut);
			tail = name + cut + 1;
		}
	}
	if (link != NULL && strlen(link) > 100)
		need_link = 1;
	if (size > 077777777777ULL)
		need_size = 1;
	if (need_path || need_link || need_size) {
		struct buf b;
		char sz[24];

		buf_init(&b, BUF_NOCAP);
		if (need_path)
			pax_record(&b, "path", name);
		if (need_link)
			pax_record(&b, "linkpath", link);
		if (need_size) {
			snprintf(
			    sz, sizeof sz, "%llu", (unsigned long long)size);
			pax_record(&b, "size", sz);
		}
		rc = header_block(p, "PaxHeader", NULL, 0644, b.len, 'x', NULL);
		if (rc == 0)
			rc = put(p, b.data, b.len);
		if (rc == 0)
			rc = pad(p, b.len);
		buf_release(&b);
		if (rc != 0) {
			free(prefix);
			return rc;
		}
	}
	rc = header_block(
	    p, tail, prefix, mode, need_size ? 0 : size, type, link);
	free(prefix);
	return rc;
}

static int
pack_file(
    struct packer *p, const char *path, const char *rel, const struct stat *st)
{
	unsigned char *b = NULL;
	uint64_t left = (uint64_t)st->st_size;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return tpu_error(p->err, TPU_E_IO, "cannot read '%s': %s", path,
		    strerror(errno));
	rc = entry_header(
	    p, rel, st->st_mode & 07777, (uint64_t)st->st_size, '0', NULL);
	b = xmalloc(WBUF);
	while (rc == 0 && left > 0) {
		size_t want = left < WBUF ? (size_t)left : WBUF;
		ssize_t r = read(fd, b, want);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = tpu_error(p->err, TPU_E_IO, "cannot read '%s': %s",
			    path, strerror(errno));
			break;
		}
		if (r == 0) {
			rc = tpu_error(p->err, TPU_E_IO,
			    "'%s' changed while it was packed (shorter)", path);
			break;
		}
		rc = put(p, b, (size_t)r);
		left -= (uint64_t)r;
	}
	if (rc == 0 && read(fd, b, 1) > 0)
		rc = tpu_error(p->err, TPU_E_IO,
		    "'%s' changed while it was packed (longer)", path);
	if (rc == 0)
		rc = pad(p, (uint64_t)st->st_size);
	free(b);
	close(fd);
	p->st.files += rc == 0;
	return rc;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
walk(struct packer *p, const char *dir, const char *rel)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if ((d = opendir(dir)) == NULL)
		return tpu_error(p->err, TPU_E_IO,
		    "cannot read directory '%s': %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = xrealloc(names, cap * sizeof *names);
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof *names, cmp_names);
	for (i = 0; i < n && rc == 0; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		char *r = rel[0] != '\0' ? xasprintf("%s/%s", rel, names[i])
		                         : xstrdup(names[i]);
		struct stat st;

		if (pack_excluded(p->opts, r)) {
			p->st.excluded++;
		} else if (lstat(path, &st) != 0) {
			rc = tpu_error(p->err, TPU_E_IO, "cannot stat '%s': %s",
			    path, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			char *dn = xasprintf("%s/", r);

			rc = entry_header(
			    p, dn, st.st_mode & 07777, 0, '5', NULL);
			free(dn);
			p->st.dirs++;
			if (rc == 0)
				rc = walk(p, path, r);
		} else if (S_ISREG(st.st_mode)) {
			rc = pack_file(p, path, r, &st);
		} else if (S_ISLNK(st.st_mode)) {
			char *target = xmalloc((size_t)st.st_size + 2);
			ssize_t k =
			    readlink(path, target, (size_t)st.st_size + 1);

			if (k < 0 || k > st.st_size)
				rc = tpu_error(p->err, TPU_E_IO,
				    "cannot read link '%s': %s", path,
				    k < 0 ? strerror(errno) : "changed");
			else {
				target[k] = '\0';
				rc = entry_header(p, r, 0777, 0, '2', target);
				p->st.links++;
			}
			free(target);
		} else {
			p->st.skipped++;
		}
		free(path);
		free(r);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int
pack_write(const char *dir, const struct pack_opts *opts, int fd,
    char hash[PACK_HASH_LEN + 1], struct pack_stats *stats, struct tpu_err *err)
{
	static const unsigned char zero[2 * BLOCK];
	struct packer p;
	struct stat st;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0, i;
	int rc;

	if (stat(dir, &st) != 0)
		return tpu_error(err,
		    errno == ENOENT ? TPU_E_NOTFOUND : TPU_E_IO,
		    "--workdir '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tpu_error(
		    err, TPU_E_USAGE, "--workdir '%s': not a directory", dir);
	memset(&p, 0, sizeof p);
	p.fd = fd;
	p.opts = opts;
	p.err = err;
	p.md = EVP_MD_CTX_new();
	if (p.md == NULL || EVP_DigestInit_ex(p.md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(p.md);
		return tpu_error(err, TPU_E_INTERNAL, "sha256 unavailable");
	}
	p.wb = xmalloc(WBUF);
	rc = walk(&p, dir, "");
	if (rc == 0)
		rc = put(&p, zero, sizeof zero);
	if (rc == 0)
		rc = flush_out(&p);
	if (rc == 0 && EVP_DigestFinal_ex(p.md, md, &mdlen) != 1)
		rc = tpu_error(err, TPU_E_INTERNAL, "sha256 failed");
	if (rc == 0) {
		for (i = 0; i < mdlen && 2 * i < PACK_HASH_LEN; i++)
			snprintf(hash + 2 * i, 3, "%02x", md[i]);
		hash[PACK_HASH_LEN] = '\0';
		p.st.bytes = p.total;
		if (stats != NULL)
			*stats = p.st;
	}
	EVP_MD_CTX_free(p.md);
	free(p.wb);
	return rc;
}

char *
pack_cache_dir(void)
{
	const char *x;

	if ((x = getenv("XDG_CACHE_HOME")) != NULL && *x == '/')
		return xasprintf("%s/tpuctl/workdirs", x);
	if ((x = getenv("HOME")) == NULL || *x == '\0')
		x = "/tmp";
	return xasprintf("%s/.cache/tpuctl/workdirs", x);
}

int
pack_to_cache(const char *dir, const struct pack_opts *opts,
    const char *cache_dir, char hash[PACK_HASH_LEN + 1], char **path,
    struct pack_stats *stats, struct tpu_err *err)
{
	char *tmp = NULL, *final = NULL;
	int fd, rc;

	*path = NULL;
	if ((rc = fsutil_mkdir_private(cache_dir, err)) != 0)
		return rc;
	tmp = xasprintf("%s/.pack-XXXXXX", cache_dir);
	if ((fd = mkstemp(tmp)) < 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot create '%s': %s", tmp,
		    strerror(errno));
		free(tmp);
		return rc;
	}
	rc = pack_write(dir, opts, fd, hash, stats, err);
	if (close(fd) != 0 && rc == 0)
		rc = tpu_error(err, TPU_E_IO, "cannot write '%s': %s", tmp,
		    strerror(errno));
	if (rc == 0) {
		final = xasprintf("%s/%s.tar", cache_dir, hash);
		if (rename(tmp, final) != 0)
			rc = tpu_error(err, TPU_E_IO, "cannot rename '%s': %s",
			    tmp, strerror(errno));
	}
	if (rc != 0) {
		unlink(tmp);
		free(final);
		final = NULL;
	}
	free(tmp);
	*path = final;
	return rc;
}
