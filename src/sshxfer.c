/* SFTP file transfer to and from workers: see sshxfer.h. */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "log.h"
#include "retry.h"
#include "sshxfer.h"
#include "util.h"
#include "xmalloc.h"

#define XFER_IO_TIMEOUT_MS 30000
#define XFER_LIST_MAX (1u << 20) /* remote files and directories */
#define XFER_DEPTH_MAX 256       /* directory levels */
#define XFER_NAME_MAX 4095       /* bytes of one remote name */

static int
node_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > 63 || s[0] < 'a' || s[0] > 'z' ||
	    s[len - 1] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		        (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/* The id of a full resource name "projects/P/locations/Z/nodes/ID..."
 * (five '/' in), or NULL when arg does not start like one. */
static const char *
full_name_id(const char *arg)
{
	const char *p = arg;
	int i;

	if (strncmp(arg, "projects/", 9) != 0)
		return NULL;
	for (i = 0; i < 5; i++) {
		if ((p = strchr(p, '/')) == NULL)
			return NULL;
		p++;
	}
	return p;
}

int
sshxfer_parse_operand(
    const char *arg, struct sshxfer_operand *op, struct tpu_err *err)
{
	const char *at = strchr(arg, '@'), *rest = arg, *id, *base, *colon,
	           *slash;

	/* USER@NODE:path: the user goes with the node to the command */
	if (at != NULL && strcspn(arg, ":/") > (size_t)(at - arg))
		rest = at + 1;
	id = full_name_id(rest);
	base = id != NULL ? id : rest;
	colon = strchr(base, ':');
	slash = strchr(base, '/');

	memset(op, 0, sizeof *op);
	if (arg[0] == '\0')
		return tpu_error(err, TPU_E_USAGE, "empty file operand");
	if (strchr(arg, '\n') != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "file operand holds a newline: not supported");
	if (colon == NULL || (slash != NULL && slash < colon)) {
		op->path = xstrdup(arg);
		return 0;
	}
	if (rest != arg && at == arg)
		return tpu_error(err, TPU_E_USAGE,
		    "'%s': empty user before '@' (USER@NODE:path)", arg);
	if (!node_name_ok(base, (size_t)(colon - base)))
		return tpu_error(err, TPU_E_USAGE,
		    "'%.*s' in '%s' is not a node name: NODE:path needs a "
		    "lowercase letter, then letters, digits or '-' (at most "
		    "63), before the ':' (write ./%s for a local file)",
		    (int)(colon - base), base, arg, arg);
	op->node = xstrndup(arg, (size_t)(colon - arg));
	colon++;
	/* ~ is the login's home, where SFTP paths start: as scp does */
	if (colon[0] == '~' && colon[1] != '\0' && colon[1] != '/') {
		free(op->node);
		op->node = NULL;
		return tpu_error(err, TPU_E_USAGE,
		    "'%s': only ~ (the login's home) is expanded, not "
		    "~user",
		    arg);
	}
	if (colon[0] == '~')
		for (colon++; *colon == '/'; colon++)
			;
	op->path = xstrdup(colon);
	return 0;
}

void
sshxfer_operand_release(struct sshxfer_operand *op)
{
	free(op->node);
	free(op->path);
	memset(op, 0, sizeof *op);
}

int
sshxfer_relpath_safe(const char *rel)
{
	const char *p = rel, *e;
	size_t n;

	if (rel[0] == '\0' || rel[0] == '/' || strchr(rel, '\n') != NULL)
		return 0;
	for (;;) {
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (e == NULL)
			return 1;
		p = e + 1;
	}
}

char *
sshxfer_basename(const char *path)
{
	size_t end = strlen(path), start;

	while (end > 0 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	return xstrndup(path + start, end - start);
}

char *
sshxfer_join(const char *dir, const char *rel)
{
	size_t n = strlen(dir);

	if (n == 0)
		return xstrdup(rel);
	if (dir[n - 1] == '/')
		return xasprintf("%s%s", dir, rel);
	return xasprintf("%s/%s", dir, rel);
}

void
sshxfer_list_add(struct sshxfer_list *l, const char *rel, const char *src,
    int is_dir, mode_t mode)
{
	struct sshxfer_item *it;

	if (l->n == l->cap) {
		l->cap = l->cap != 0 ? l->cap * 2 : 16;
		l->items = xreallocarray(l->items, l->cap, sizeof *l->items);
	}
	it = &l->items[l->n++];
	it->rel = xstrdup(rel);
	it->src = xstrdup(src);
	it->is_dir = is_dir;
	it->mode = mode & 07777;
}

void
sshxfer_list_release(struct sshxfer_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->items[i].rel);
		free(l->items[i].src);
	}
	free(l->items);
	memset(l, 0, sizeof *l);
}

static int
walk_dir(const char *dir, const char *rel, struct sshxfer_list *l, int depth,
    struct tpu_err *err)
{
	struct dirent **ents = NULL;
	struct stat st, tst;
	int n, i, rc = 0;

	if (depth > 256)
		return tpu_error(err, TPU_E_IO, "'%s': tree too deep", dir);
	if ((n = scandir(dir, &ents, NULL, alphasort)) < 0)
		return tpu_error(err, TPU_E_IO,
		    "cannot read directory '%s': %s", dir, strerror(errno));
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char *src, *r;

		if (rc != 0 || strcmp(name, ".") == 0 ||
		    strcmp(name, "..") == 0) {
			free(ents[i]);
			continue;
		}
		src = sshxfer_join(dir, name);
		r = sshxfer_join(rel, name);
		if (lstat(src, &st) != 0)
			rc = tpu_error(err, TPU_E_IO, "cannot stat '%s': %s",
			    src, strerror(errno));
		else if (S_ISLNK(st.st_mode)) {
			/* a link to a file is copied as the file */
			if (stat(src, &tst) == 0 && S_ISREG(tst.st_mode))
				sshxfer_list_add(l, r, src, 0, tst.st_mode);
			else
				l->skipped++;
		} else if (S_ISREG(st.st_mode))
			sshxfer_list_add(l, r, src, 0, st.st_mode);
		else if (S_ISDIR(st.st_mode)) {
			sshxfer_list_add(l, r, src, 1, st.st_mode);
			rc = walk_dir(src, r, l, depth + 1, err);
		} else
			l->skipped++;
		free(src);
		free(r);
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int
sshxfer_list_local(const char *const *srcs, size_t nsrc, int recurse,
    struct sshxfer_list *l, struct tpu_err *err)
{
	struct stat st;
	size_t i;
	int rc = 0;

	for (i = 0; i < nsrc && rc == 0; i++) {
		char *base = sshxfer_basename(srcs[i]);

		if (stat(srcs[i], &st) != 0)
			rc = tpu_error(err,
			    errno == ENOENT ? TPU_E_NOTFOUND : TPU_E_IO,
			    "cannot read '%s': %s", srcs[i], strerror(errno));
		else if (!sshxfer_relpath_safe(base))
			rc = tpu_error(err, TPU_E_USAGE,
			    "'%s' has no file name to copy under: name the "
			    "directory itself (e.g. ../dir)",
			    srcs[i]);
		else if (S_ISREG(st.st_mode))
			sshxfer_list_add(l, base, srcs[i], 0, st.st_mode);
		else if (S_ISDIR(st.st_mode) && !recurse)
			rc = tpu_error(err, TPU_E_USAGE,
			    "'%s' is a directory: use --recurse", srcs[i]);
		else if (S_ISDIR(st.st_mode)) {
			sshxfer_list_add(l, base, srcs[i], 1, st.st_mode);
			rc = walk_dir(srcs[i], base, l, 0, err);
		} else
			rc = tpu_error(err, TPU_E_USAGE,
			    "'%s' is not a regular file or directory", srcs[i]);
		free(base);
	}
	return rc;
}

int
sshxfer_remote_entry(struct sshxfer_list *l, const char *rel_dir,
    const char *src_dir, const char *name, size_t len, unsigned long perms,
    struct tpu_err *err)
{
	char *nm, *rel, *src;

	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (len == 0 || memchr(name, '/', len) != NULL ||
	    memchr(name, '\0', len) != NULL)
		return tpu_error(err, TPU_E_API,
		    "unsafe name '%.*s' in '%s' on the worker refused (a "
		    "name must be one path component)",
		    (int)(len > 200 ? 200 : len), name, src_dir);
	if (!LIBSSH2_SFTP_S_ISDIR(perms) && !LIBSSH2_SFTP_S_ISREG(perms)) {
		l->skipped++;
		return 0;
	}
	nm = xstrndup(name, len);
	rel = sshxfer_join(rel_dir, nm);
	src = sshxfer_join(src_dir, nm);
	sshxfer_list_add(
	    l, rel, src, LIBSSH2_SFTP_S_ISDIR(perms), (mode_t)(perms & 07777));
	free(nm);
	free(rel);
	free(src);
	return 0;
}

/* ---- remote side ---- */

/* One wait for the socket (200 ms at most); the callers keep deadlines. */
/* A file copied: counted, with its size (the local side's, after). */
static void
count_file(struct sshxfer_result *r, const char *local)
{
	struct stat st;

	r->files++;
	if (stat(local, &st) == 0)
		r->bytes += (int64_t)st.st_size;
}

static void
xwait(struct sshpool_conn *c)
{
	(void)sshpool_conn_wait(c, tpu_now_ms() + 200);
}

static int
xtimeout(int64_t deadline, const char *what, struct tpu_err *err)
{
	if (tpu_now_ms() > deadline)
		return tpu_error(err, TPU_E_TRANSIENT,
		    "sftp: no progress for %d s while %s",
		    XFER_IO_TIMEOUT_MS / 1000, what);
	return 0;
}

static int
xfail(struct sshpool_conn *c, const char *what, const char *path,
    struct tpu_err *err)
{
	LIBSSH2_SESSION *s = c->session;
	unsigned long e =
	    libssh2_session_last_errno(s) == LIBSSH2_ERROR_SFTP_PROTOCOL
	        ? libssh2_sftp_last_error(c->sftp)
	        : 0;

	if ((e == LIBSSH2_FX_NO_SUCH_FILE || e == LIBSSH2_FX_NO_SUCH_PATH) &&
	    c->target != NULL)
		return tpu_error(err, TPU_E_NOTFOUND,
		    "cannot %s '%s' on worker %d: no such file or directory",
		    what, path, c->target->worker);
	if (e == LIBSSH2_FX_NO_SUCH_FILE || e == LIBSSH2_FX_NO_SUCH_PATH)
		return tpu_error(err, TPU_E_NOTFOUND,
		    "cannot %s '%s': no such file or directory", what, path);
	if (e == LIBSSH2_FX_PERMISSION_DENIED)
		return tpu_error(err, TPU_E_PERMISSION,
		    "cannot %s '%s': permission denied", what, path);
	if (e != 0)
		return tpu_error(err, TPU_E_IO,
		    "cannot %s '%s': SFTP status %lu", what, path, e);
	return tpu_error(err, TPU_E_UNREACHABLE,
	    "cannot %s '%s': connection "
	    "lost",
	    what, path);
}

/* stat, lstat (no link followed) or setstat; 0 or an error */
static int
xstat(struct sshpool_conn *c, const char *path, int type,
    LIBSSH2_SFTP_ATTRIBUTES *a, struct tpu_err *err)
{
	int64_t deadline = tpu_now_ms() + XFER_IO_TIMEOUT_MS;
	int rc;

	while ((rc = libssh2_sftp_stat_ex(c->sftp, path, (unsigned)strlen(path),
	            type, a)) == LIBSSH2_ERROR_EAGAIN) {
		if ((rc = xtimeout(deadline, "stat", err)) != 0)
			return rc;
		xwait(c);
	}
	if (rc != 0)
		return xfail(c, type == LIBSSH2_SFTP_SETSTAT ? "chmod" : "stat",
		    path, err);
	return 0;
}

static int
xmkdir(
    struct sshpool_conn *c, const char *path, mode_t mode, struct tpu_err *err)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	int64_t deadline = tpu_now_ms() + XFER_IO_TIMEOUT_MS;
	int rc;

	while (
	    (rc = libssh2_sftp_mkdir_ex(c->sftp, path, (unsigned)strlen(path),
	         (long)(mode | 0700))) == LIBSSH2_ERROR_EAGAIN) {
		if ((rc = xtimeout(deadline, "mkdir", err)) != 0)
			return rc;
		xwait(c);
	}
	if (rc != 0) {
		struct tpu_err e2;

		tpu_err_init(&e2);
		/* an existing directory is fine (not a link to one) */
		if (xstat(c, path, LIBSSH2_SFTP_LSTAT, &a, &e2) == 0 &&
		    (a.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) &&
		    LIBSSH2_SFTP_S_ISDIR(a.permissions))
			return 0;
		return tpu_error(err, TPU_E_IO,
		    "cannot create directory '%s': it exists and is not a "
		    "directory, or cannot be created",
		    path);
	}
	return 0;
}

static int
xchmod(
    struct sshpool_conn *c, const char *path, mode_t mode, struct tpu_err *err)
{
	LIBSSH2_SFTP_ATTRIBUTES a;

	memset(&a, 0, sizeof a);
	a.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
	a.permissions = mode & 07777;
	return xstat(c, path, LIBSSH2_SFTP_SETSTAT, &a, err);
}

/* One name read from a remote directory. */
struct xent {
	char *name;
	size_t len;
	LIBSSH2_SFTP_ATTRIBUTES a;
};

static int
xent_cmp(const void *a, const void *b)
{
	const struct xent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int d = memcmp(x->name, y->name, n);

	if (d != 0)
		return d;
	return x->len < y->len ? -1 : x->len > y->len;
}

static void
xents_free(struct xent *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

/* Every entry of remote directory dir (with "." and ".."), sorted. */
static int
xreaddir(struct sshpool_conn *c, const char *dir, struct xent **out,
    size_t *nout, struct tpu_err *err)
{
	LIBSSH2_SFTP_HANDLE *h;
	int64_t deadline = tpu_now_ms() + XFER_IO_TIMEOUT_MS;
	struct xent *e = NULL;
	size_t n = 0, cap = 0;
	char name[XFER_NAME_MAX + 1];
	int rc = 0, len;

	while ((h = libssh2_sftp_open_ex(c->sftp, dir, (unsigned)strlen(dir), 0,
	            0, LIBSSH2_SFTP_OPENDIR)) == NULL) {
		if (libssh2_session_last_errno(c->session) !=
		    LIBSSH2_ERROR_EAGAIN)
			return xfail(c, "read directory", dir, err);
		if ((rc = xtimeout(deadline, "opening a directory", err)) != 0)
			return rc;
		xwait(c);
	}
	for (;;) {
		if (n == cap) {
			cap = cap != 0 ? cap * 2 : 64;
			e = xreallocarray(e, cap, sizeof *e);
		}
		memset(&e[n], 0, sizeof e[n]);
		len = libssh2_sftp_readdir_ex(
		    h, name, sizeof name, NULL, 0, &e[n].a);
		if (len == LIBSSH2_ERROR_EAGAIN) {
			if ((rc = xtimeout(
			         deadline, "reading a directory", err)) != 0)
				break;
			xwait(c);
			continue;
		}
		if (len == LIBSSH2_ERROR_BUFFER_TOO_SMALL) {
			rc = tpu_error(err, TPU_E_API,
			    "'%s' on the worker holds a name longer than %d "
			    "bytes",
			    dir, XFER_NAME_MAX);
			break;
		}
		if (len < 0) {
			rc = xfail(c, "read directory", dir, err);
			break;
		}
		if (len == 0)
			break;
		if (n >= XFER_LIST_MAX) {
			rc = tpu_error(err, TPU_E_IO,
			    "'%s' on the worker: more than %u entries", dir,
			    XFER_LIST_MAX);
			break;
		}
		/* every byte kept: a NUL in a name is refused later */
		e[n].name = xmalloc((size_t)len + 1);
		memcpy(e[n].name, name, (size_t)len);
		e[n].name[len] = '\0';
		e[n++].len = (size_t)len;
		deadline = tpu_now_ms() + XFER_IO_TIMEOUT_MS;
	}
	deadline = tpu_now_ms() + 5000;
	while (libssh2_sftp_close_handle(h) == LIBSSH2_ERROR_EAGAIN &&
	       tpu_now_ms() < deadline)
		xwait(c);
	if (rc != 0) {
		xents_free(e, n);
		return rc;
	}
	if (n > 1)
		qsort(e, n, sizeof *e, xent_cmp);
	*out = e;
	*nout = n;
	return 0;
}

/*
 * The list of the remote tree under directory src (named rel locally),
 * read over SFTP: directories are walked, never followed through a link.
 */
static int
remote_tree(struct sshpool_conn *c, const char *src, const char *rel, int depth,
    struct sshxfer_list *l, struct tpu_err *err)
{
	LIBSSH2_SFTP_ATTRIBUTES t;
	struct xent *e = NULL;
	struct tpu_err e2;
	size_t n = 0, i, first;
	unsigned long perms;
	int rc;

	if (depth > XFER_DEPTH_MAX)
		return tpu_error(err, TPU_E_IO,
		    "'%s' on the worker: more than %d directory levels", src,
		    XFER_DEPTH_MAX);
	if ((rc = xreaddir(c, src, &e, &n, err)) != 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		perms = (e[i].a.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS)
		            ? e[i].a.permissions
		            : 0;
		/* a link to a regular file is copied as that file */
		if (perms == 0 || LIBSSH2_SFTP_S_ISLNK(perms)) {
			char *p =
			    xasprintf("%s/%.*s", src, (int)e[i].len, e[i].name);

			tpu_err_init(&e2);
			if (memchr(e[i].name, '/', e[i].len) == NULL &&
			    xstat(c, p,
			        perms == 0 ? LIBSSH2_SFTP_LSTAT
			                   : LIBSSH2_SFTP_STAT,
			        &t, &e2) == 0 &&
			    (t.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) &&
			    (perms == 0 || LIBSSH2_SFTP_S_ISREG(t.permissions)))
				perms = t.permissions;
			free(p);
		}
		first = l->n;
		rc = sshxfer_remote_entry(
		    l, rel, src, e[i].name, e[i].len, perms, err);
		if (rc == 0 && l->n > first && l->items[first].is_dir) {
			char *s = xstrdup(l->items[first].src);
			char *r = xstrdup(l->items[first].rel);

			rc = remote_tree(c, s, r, depth + 1, l, err);
			free(s);
			free(r);
		}
		if (rc == 0 && l->n > XFER_LIST_MAX)
			rc = tpu_error(err, TPU_E_IO,
			    "'%s' on the worker: more than %u files and "
			    "directories",
			    src, XFER_LIST_MAX);
	}
	xents_free(e, n);
	return rc;
}

/* The destination of item it: under dst when dst_dir, else renamed. */
static char *
dest_of(const struct sshxfer_item *it, const char *top, const char *dst,
    int dst_dir)
{
	if (dst_dir)
		return sshxfer_join(dst, it->rel);
	return xasprintf("%s%s", dst, it->rel + strlen(top));
}

static int
do_upload(const struct sshxfer_spec *sp, struct sshpool_conn *c,
    const struct sshxfer_list *l, struct sshxfer_result *r)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	struct tpu_err e2;
	int dst_dir, rc;
	size_t i;

	if ((rc = sshpool_sftp_open(c, &r->err)) != 0)
		return rc;
	tpu_err_init(&e2);
	dst_dir = sp->dst[0] == '\0' ||
	          (xstat(c, sp->dst, LIBSSH2_SFTP_STAT, &a, &e2) == 0 &&
	              (a.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) &&
	              LIBSSH2_SFTP_S_ISDIR(a.permissions));
	if (!dst_dir && sp->nsrc > 1) {
		return tpu_error(&r->err, TPU_E_INVALID,
		    "'%s' is not a directory on the worker (needed for "
		    "several sources)",
		    sp->dst);
	}
	for (i = 0; i < l->n && rc == 0; i++) {
		const struct sshxfer_item *it = &l->items[i];
		char *dst = dest_of(it, l->items[0].rel, sp->dst, dst_dir);

		if (sp->abort != NULL && *sp->abort)
			rc =
			    tpu_error(&r->err, retry_interrupt_errc(*sp->abort),
			        "%s", retry_interrupt_name(*sp->abort));
		else if (it->is_dir) {
			rc = xmkdir(c, dst, it->mode, &r->err);
			r->dirs += rc == 0;
		} else {
			rc = sshpool_sftp_put(c, it->src, dst, &r->err);
			if (rc == 0)
				count_file(r, it->src);
		}
		free(dst);
	}
	/* directory modes last, deepest first (read-only dirs) */
	for (i = l->n; i > 0 && rc == 0; i--) {
		const struct sshxfer_item *it = &l->items[i - 1];
		char *dst;

		if (!it->is_dir)
			continue;
		dst = dest_of(it, l->items[0].rel, sp->dst, dst_dir);
		rc = xchmod(c, dst, it->mode, &r->err);
		free(dst);
	}
	return rc;
}

static int
local_dir(const char *path, struct tpu_err *err)
{
	struct stat st;

	if (mkdir(path, 0700) == 0)
		return 0;
	if (errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return tpu_error(err, TPU_E_IO, "cannot create directory '%s': %s",
	    path,
	    errno == EEXIST ? "exists and is not a directory"
	                    : strerror(errno));
}

/* 1 when path holds a wildcard (* ? [): remote_glob refuses one
 * before the last component. */
static int
has_glob(const char *path)
{
	return strpbrk(path, "*?[") != NULL;
}

/*
 * Expand a remote operand whose last component is a wildcard, as the
 * worker's shell would (fnmatch, a leading '.' matched only by a '.'),
 * over SFTP: no command runs, so no name can inject one.  The matches,
 * sorted, are appended to *v.  No match: TPU_E_NOTFOUND naming the
 * pattern and the worker; a wildcard in a directory component:
 * TPU_E_USAGE.
 */
static int
remote_glob(struct sshpool_conn *c, const char *pat, char ***v, size_t *n,
    struct tpu_err *err)
{
	const char *sl = strrchr(pat, '/'), *base = sl != NULL ? sl + 1 : pat;
	char *dir;
	struct xent *e = NULL;
	size_t ne = 0, i, found = 0;
	int rc;

	dir = sl == NULL ? xstrdup("")
	                 : xstrndup(pat, sl == pat ? 1 : (size_t)(sl - pat));
	if (strpbrk(dir, "*?[") != NULL) {
		free(dir);
		return tpu_error(err, TPU_E_USAGE,
		    "'%s': only the last component of a remote path may hold "
		    "a wildcard",
		    pat);
	}
	rc = xreaddir(c, dir[0] != '\0' ? dir : ".", &e, &ne, err);
	for (i = 0; rc == 0 && i < ne; i++) {
		if (strlen(e[i].name) != e[i].len ||
		    strcmp(e[i].name, ".") == 0 ||
		    strcmp(e[i].name, "..") == 0 ||
		    fnmatch(base, e[i].name, FNM_PERIOD) != 0)
			continue;
		*v = xreallocarray(*v, *n + 1, sizeof **v);
		(*v)[(*n)++] = sl == NULL ? xstrdup(e[i].name)
		                          : sshxfer_join(dir, e[i].name);
		found++;
	}
	xents_free(e, ne);
	free(dir);
	if (rc == 0 && found == 0)
		rc = tpu_error(err, TPU_E_NOTFOUND,
		    "no match for %s on worker %d", pat,
		    c->target != NULL ? c->target->worker : 0);
	return rc;
}

static int
do_download(const struct sshxfer_spec *sp, struct sshpool_conn *c,
    const struct sshpool_target *t, struct sshxfer_result *r)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	struct sshxfer_list l;
	struct stat st;
	char *base, **srcs = NULL;
	int dst_dir, rc = 0;
	size_t i, j, nsrcs = 0;

	memset(&l, 0, sizeof l);
	if (sp->per_worker_dirs) {
		base = xasprintf("%s/w%d", sp->dst, t->worker);
		if ((rc = local_dir(base, &r->err)) != 0) {
			free(base);
			return rc;
		}
	} else
		base = xstrdup(sp->dst);
	dst_dir = lstat(base, &st) == 0 && S_ISDIR(st.st_mode);
	if ((rc = sshpool_sftp_open(c, &r->err)) != 0)
		goto out;
	for (i = 0; i < sp->nsrc && rc == 0; i++)
		if (has_glob(sp->srcs[i]))
			rc =
			    remote_glob(c, sp->srcs[i], &srcs, &nsrcs, &r->err);
		else {
			srcs = xreallocarray(srcs, nsrcs + 1, sizeof *srcs);
			srcs[nsrcs++] = xstrdup(sp->srcs[i]);
		}
	if (rc == 0 && !dst_dir && nsrcs > 1) {
		rc = tpu_error(&r->err, TPU_E_INVALID,
		    "'%s' is not a directory (needed for several sources)",
		    base);
		goto out;
	}
	for (i = 0; i < nsrcs && rc == 0; i++) {
		const char *src = srcs[i];
		char *top = sshxfer_basename(src);
		size_t first = l.n;
		int tree = 0, into = dst_dir;

		if (!sshxfer_relpath_safe(top))
			rc = tpu_error(&r->err, TPU_E_USAGE,
			    "remote path '%s' has no file name to copy to",
			    src);
		else if ((rc = xstat(c, src, LIBSSH2_SFTP_STAT, &a, &r->err)) !=
		         0)
			;
		else if (LIBSSH2_SFTP_S_ISDIR(a.permissions)) {
			/* one tree from several workers: DST/w<N>/ is its
			   copy (its contents), not a directory holding it */
			if (sp->per_worker_dirs && nsrcs == 1)
				into = 0;
			if (!sp->recurse)
				rc = tpu_error(&r->err, TPU_E_INVALID,
				    "'%s' is a directory on the worker: use "
				    "--recurse",
				    src);
			else {
				tree = 1;
				sshxfer_list_add(
				    &l, top, src, 1, a.permissions);
				rc = remote_tree(c, src, top, 0, &l, &r->err);
			}
		} else if (LIBSSH2_SFTP_S_ISREG(a.permissions))
			sshxfer_list_add(&l, top, src, 0, a.permissions);
		else
			rc = tpu_error(&r->err, TPU_E_INVALID,
			    "'%s' on the worker is not a regular file or "
			    "directory",
			    src);
		for (j = first; j < l.n && rc == 0; j++) {
			struct sshxfer_item *it = &l.items[j];
			char *dst = dest_of(it, top, base, into);

			if (sp->abort != NULL && *sp->abort)
				rc = tpu_error(&r->err,
				    retry_interrupt_errc(*sp->abort), "%s",
				    retry_interrupt_name(*sp->abort));
			else if (it->is_dir) {
				rc = local_dir(dst, &r->err);
				r->dirs += rc == 0;
			} else {
				/* inside a tree: links are replaced */
				rc = tree ? sshpool_sftp_get_tree(
				                c, it->src, dst, &r->err)
				          : sshpool_sftp_get(
				                c, it->src, dst, &r->err);
				if (rc == 0)
					count_file(r, dst);
			}
			free(dst);
		}
		/* directory modes last, deepest first (read-only dirs) */
		for (j = l.n; j > first && rc == 0; j--) {
			struct sshxfer_item *it = &l.items[j - 1];
			char *dst;

			if (!it->is_dir)
				continue;
			dst = dest_of(it, top, base, into);
			if (chmod(dst, it->mode & 07777) != 0)
				rc = tpu_error(&r->err, TPU_E_IO,
				    "cannot chmod '%s': %s", dst,
				    strerror(errno));
			free(dst);
		}
		free(top);
	}
	r->skipped = l.skipped;
out:
	/* a worker that failed leaves no empty w<N>/ (rmdir: only empty) */
	if (rc != 0 && sp->per_worker_dirs)
		(void)rmdir(base);
	for (i = 0; i < nsrcs; i++)
		free(srcs[i]);
	free(srcs);
	sshxfer_list_release(&l);
	free(base);
	return rc;
}

struct pool {
	const struct sshxfer_spec *sp;
	const struct sshpool_target *targets;
	size_t n, next;
	const struct sshxfer_list *local;
	struct sshxfer_result *results;
	pthread_mutex_t mu;
};

/* Control characters (a newline in a file name) out of a message. */
static void
one_line(char *msg)
{
	for (; *msg != '\0'; msg++)
		if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
			*msg = '?';
}

/* 1 when msg already names "worker N" (e.g. "'P' on worker 2: ..."). */
static int
names_worker(const char *msg, int worker)
{
	char w[32];
	const char *s;
	size_t n;

	n = (size_t)snprintf(w, sizeof w, "worker %d", worker);
	for (s = strstr(msg, w); s != NULL; s = strstr(s + 1, w))
		if (s[n] < '0' || s[n] > '9')
			return 1;
	return 0;
}

static void
one_worker(struct pool *p, size_t idx)
{
	struct sshxfer_result *r = &p->results[idx];
	struct sshpool_result pr;
	struct sshpool_conn c;
	int64_t t0 = tpu_now_ms();

	memset(&pr, 0, sizeof pr);
	if (p->sp->abort != NULL && *p->sp->abort) {
		r->conn = SSHPOOL_S_ABORTED;
		r->rc = tpu_error(&r->err, retry_interrupt_errc(*p->sp->abort),
		    "%s", retry_interrupt_name(*p->sp->abort));
		return;
	}
	if (sshpool_conn_take(p->sp->cache, &p->targets[idx], &c)) {
		struct tpu_err e;

		/* the caller's session: a dead one is dropped, connected
		   again */
		tpu_err_init(&e);
		c.abort = p->sp->abort;
		if (sshpool_sftp_open(&c, &e) == 0) {
			r->rc = 0;
			pr.status = SSHPOOL_S_OK;
			log_debug("worker %d: transfer on its open session",
			    p->targets[idx].worker);
		} else {
			log_debug("worker %d: its open session failed (%s); "
			          "connecting again",
			    p->targets[idx].worker, e.msg);
			sshpool_conn_close(&c);
			r->rc = -1;
		}
	} else
		r->rc = -1;
	if (r->rc != 0) {
		r->rc = sshpool_connect(
		    &p->targets[idx], p->sp->popts, &c, &pr, &r->err);
		r->conn = pr.status;
		sshpool_result_release(&pr);
	}
	if (r->rc == 0) {
		r->conn = SSHPOOL_S_OK;
		c.abort = p->sp->abort; /* checked inside every file too */
		c.on_bytes = p->sp->on_bytes;
		c.bytes_arg = p->sp->arg;
		if (p->sp->upload)
			r->skipped = p->local->skipped;
		r->rc = p->sp->upload
		            ? do_upload(p->sp, &c, p->local, r)
		            : do_download(p->sp, &c, &p->targets[idx], r);
		if (r->rc == 0 && p->sp->cache != NULL)
			sshpool_conn_keep(p->sp->cache, &c);
		else
			sshpool_conn_close(&c);
	}
	/* a file's own error (a local open or read, a remote write) names
	   the worker it happened on, as the connection errors do */
	if (r->rc != 0 && r->conn == SSHPOOL_S_OK &&
	    r->rc != TPU_E_INTERRUPTED && r->rc != TPU_E_TERMINATED &&
	    !names_worker(r->err.msg, p->targets[idx].worker))
		tpu_error_prefix(&r->err, "worker %d", p->targets[idx].worker);
	one_line(r->err.msg);
	r->duration_ms = tpu_now_ms() - t0;
}

static void *
pool_thread(void *arg)
{
	struct pool *p = arg;
	size_t idx;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		idx = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (idx >= p->n)
			return NULL;
		one_worker(p, idx);
	}
}

int
sshxfer_run(const struct sshxfer_spec *sp, const struct sshpool_target *targets,
    size_t n, struct sshxfer_result *results, struct tpu_err *err)
{
	struct sshxfer_list local;
	struct pool p;
	pthread_t *th;
	size_t i, nth, ok = 0, unreachable = 0, started = 0;
	int rc, fanout = sp->popts->fanout > 0 ? sp->popts->fanout : 64;

	memset(&local, 0, sizeof local);
	for (i = 0; i < n; i++) {
		memset(&results[i], 0, sizeof results[i]);
		tpu_err_init(&results[i].err);
	}
	if (n == 0)
		return tpu_error(err, TPU_E_USAGE, "no worker selected");
	if (sp->upload && (rc = sshxfer_list_local(sp->srcs, sp->nsrc,
	                       sp->recurse, &local, err)) != 0) {
		one_line(err->msg);
		sshxfer_list_release(&local);
		return rc;
	}
	if (!sp->upload && sp->per_worker_dirs &&
	    (rc = local_dir(sp->dst, err)) != 0)
		return rc;
	memset(&p, 0, sizeof p);
	p.sp = sp;
	p.targets = targets;
	p.n = n;
	p.local = &local;
	p.results = results;
	pthread_mutex_init(&p.mu, NULL);
	nth = n < (size_t)fanout ? n : (size_t)fanout;
	th = xcalloc(nth, sizeof *th);
	for (i = 0; i < nth && n > 1; i++) {
		if (pthread_create(&th[i], NULL, pool_thread, &p) != 0)
			break;
		started++;
	}
	if (started == 0)
		pool_thread(&p);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
	pthread_mutex_destroy(&p.mu);
	sshxfer_list_release(&local);
	for (i = 0; i < n; i++) {
		if (results[i].rc == 0)
			ok++;
		else if (results[i].conn != SSHPOOL_S_OK &&
		         sshpool_status_unreachable(results[i].conn))
			unreachable++;
	}
	if (ok == n)
		return 0;
	if (sp->abort != NULL && *sp->abort)
		return tpu_error(err, retry_interrupt_errc(*sp->abort), "%s",
		    retry_interrupt_name(*sp->abort));
	if (n == 1) {
		*err = results[0].err;
		return results[0].rc;
	}
	if (unreachable == n)
		return tpu_error(
		    err, TPU_E_UNREACHABLE, "no worker could be reached");
	return tpu_error(
	    err, TPU_E_PARTIAL, "%zu of %zu workers failed", n - ok, n);
}
