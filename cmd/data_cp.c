/*
 * "tpuctl data cp" and "tpuctl data sync": plan the file list (before any
 * transfer; bad operands are refused before anything is sent), then run
 * it on --parallel worker threads, each with its own Cloud Storage handle
 * (keep-alive connections are reused across files), with a progress bar
 * or JSON lines.  The transfers themselves are src/gcsxfer.c.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "crc32c.h"
#include "data_cp.h"
#include "gcs.h"
#include "gcsurl.h"
#include "gcsxfer.h"
#include "http.h"
#include "log.h"
#include "progress.h"
#include "retry.h"
#include "util.h"
#include "xmalloc.h"

enum job_kind { JOB_UP, JOB_DOWN, JOB_COPY, JOB_RM_OBJ, JOB_RM_LOCAL };
enum prog_mode { PROG_AUTO, PROG_NONE, PROG_JSONL };

struct job {
	enum job_kind kind;
	char *local; /* local path (source or destination) */
	char *sbucket, *sname;
	char *dbucket, *dname;
	int64_t size, generation;
	uint32_t crc32c;
	int has_crc32c;
	char *md5;
};

struct plan {
	struct job *v;
	size_t n, cap;
	size_t skipped; /* sync: files already the same on both sides */
	int move;       /* mv: the summary waits for the sources' removal */
	int64_t bytes, elapsed_ms; /* of the run, for that summary */
};

struct prog {
	struct progress p; /* the bytes; p.mu also keeps the counts below */
	enum prog_mode mode;
	int tty;
	int64_t total;
	size_t files, files_done, failed;
	int drawn;
};

struct run {
	struct tpu_ctx *ctx;
	struct gcs *g;
	struct plan *p;
	struct prog *pr;
	struct gcsx_opts o;
	int inner_parallel;
	size_t next;
	int rc;
	struct tpu_err err;
	pthread_mutex_t mu;
};

/* --- plan ----------------------------------------------------------------- */

static struct job *
plan_add(struct plan *p, enum job_kind kind)
{
	struct job *j;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->v = xreallocarray(p->v, p->cap, sizeof *p->v);
	}
	j = &p->v[p->n++];
	memset(j, 0, sizeof *j);
	j->kind = kind;
	return j;
}

static void
plan_release(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].local);
		free(p->v[i].sbucket);
		free(p->v[i].sname);
		free(p->v[i].dbucket);
		free(p->v[i].dname);
		free(p->v[i].md5);
	}
	free(p->v);
	memset(p, 0, sizeof *p);
}

static void
job_set_obj(struct job *j, const struct gcs_object *o)
{
	j->sbucket = xstrdup(o->bucket);
	j->sname = xstrdup(o->name);
	j->size = o->size;
	j->generation = o->generation;
	j->crc32c = o->crc32c;
	j->has_crc32c = o->has_crc32c;
	j->md5 = o->md5_b64 != NULL ? xstrdup(o->md5_b64) : NULL;
}

static const char *
base_name(const char *path)
{
	const char *e = path + strlen(path), *s;

	while (e > path && e[-1] == '/')
		e--;
	for (s = e; s > path && s[-1] != '/'; s--)
		;
	return s;
}

/* path without trailing slashes, its last component only */
static char *
last_component(const char *path)
{
	const char *s = base_name(path);
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		n--;
	return xstrndup(s, n);
}

static char *
join(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (n == 0)
		return xstrdup(b);
	return xasprintf("%s%s%s", a, a[n - 1] == '/' ? "" : "/", b);
}

/* Walk dir (relative names under rel), calling add for regular files. */
static int
walk_local(const char *dir, const char *rel,
    int (*add)(void *, const char *path, const char *rel, int64_t size),
    void *arg, struct tpu_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (d == NULL)
		return tpu_error(
		    err, TPU_E_IO, "open %s: %s", dir, strerror(errno));
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		char *p, *r;
		size_t nl = strlen(de->d_name);

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (nl > strlen(GCSX_TMP_SUFFIX) &&
		    strcmp(de->d_name + nl - strlen(GCSX_TMP_SUFFIX),
		        GCSX_TMP_SUFFIX) == 0)
			continue;
		p = join(dir, de->d_name);
		r = *rel != '\0' ? xasprintf("%s/%s", rel, de->d_name)
		                 : xstrdup(de->d_name);
		if (lstat(p, &st) != 0)
			rc = tpu_error(
			    err, TPU_E_IO, "stat %s: %s", p, strerror(errno));
		else if (S_ISDIR(st.st_mode))
			rc = walk_local(p, r, add, arg, err);
		else if (S_ISREG(st.st_mode))
			rc = add(arg, p, r, st.st_size);
		else
			log_warn("skipping %s: not a regular file or "
			         "directory",
			    p);
		free(p);
		free(r);
	}
	closedir(d);
	return rc;
}

struct upctx {
	struct plan *p;
	const char *bucket;
	const char *prefix; /* object name prefix, "" or ending in '/' */
	struct tpu_err *err;
};

static int
add_upload(void *arg, const char *path, const char *rel, int64_t size)
{
	struct upctx *u = arg;
	char *name = xasprintf("%s%s", u->prefix, rel);
	struct job *j;
	int rc;

	if ((rc = gcs_object_validate(name, u->err)) != 0) {
		free(name);
		return rc;
	}
	j = plan_add(u->p, JOB_UP);
	j->local = xstrdup(path);
	j->dbucket = xstrdup(u->bucket);
	j->dname = name;
	j->size = size;
	return 0;
}

/* "" or s with exactly one trailing '/' */
static char *
as_prefix(const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return xstrdup("");
	return s[n - 1] == '/' ? xstrdup(s) : xasprintf("%s/", s);
}

struct listctx {
	struct plan *p;
	enum job_kind kind;
	const char *strip;             /* removed from each name */
	const char *ldir;              /* JOB_DOWN: local root */
	const char *dbucket, *dprefix; /* JOB_COPY */
	struct tpu_err *err;
	int rc;
};

static int
add_listed(void *arg, const struct gcs_object *o, const char *prefix)
{
	struct listctx *l = arg;
	struct job *j;
	char *lp;
	size_t n;

	if (o == NULL || prefix != NULL)
		return 0;
	n = strlen(o->name);
	if (n > 0 && o->name[n - 1] == '/')
		return 0; /* a "folder" placeholder */
	if (l->kind == JOB_DOWN) {
		if ((lp = gcs_local_path(l->ldir, l->strip, o->name, l->err)) ==
		    NULL) {
			l->rc = l->err->code;
			return l->rc;
		}
		j = plan_add(l->p, JOB_DOWN);
		j->local = lp;
	} else {
		j = plan_add(l->p, JOB_COPY);
		j->dbucket = xstrdup(l->dbucket);
		j->dname =
		    xasprintf("%s%s", l->dprefix, o->name + strlen(l->strip));
	}
	job_set_obj(j, o);
	return 0;
}

/* The part of an object name up to and including its last '/'. */
static char *
name_parent(const char *name)
{
	const char *s = strrchr(name, '/');

	return s == NULL ? xstrdup("") : xstrndup(name, (size_t)(s - name + 1));
}

static int
is_local_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Plan one source of cp. */
struct matches {
	const char *pattern;
	int rec;      /* -r: "directories" match too */
	char **names; /* objects, or with rec the roots matched */
	char *dirs;   /* with rec: names[i] is a "directory" */
	size_t n, cap;
};

static int
add_match(void *arg, const struct gcs_object *o, const char *prefix)
{
	struct matches *m = arg;
	size_t n, k, root = 0;

	(void)prefix;
	if (o == NULL || (n = strlen(o->name)) == 0 || o->name[n - 1] == '/')
		return 0;
	if (m->rec ? (root = gcs_wildcard_root(m->pattern, o->name)) == 0
	           : !gcs_wildcard_match(m->pattern, o->name))
		return 0;
	if (m->rec) {
		/* every object under a matched "directory" names it once */
		for (k = m->n; k-- > 0;)
			if (strncmp(m->names[k], o->name, root) == 0 &&
			    m->names[k][root] == '\0' &&
			    m->dirs[k] == (root < n))
				return 0;
	} else
		root = n;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->names = xreallocarray(m->names, m->cap, sizeof *m->names);
		m->dirs = xreallocarray(m->dirs, m->cap, sizeof *m->dirs);
	}
	m->dirs[m->n] = root < n;
	m->names[m->n++] = xstrndup(o->name, root);
	return 0;
}

static int plan_source(struct gcs *, struct plan *, const char *src,
    const char *dst, int dst_dir, int recursive, int literal, struct tpu_err *);

/*
 * A source with wildcards: list the objects under its literal prefix,
 * each match is a source of its own: one match is copied as a single
 * source would be, several by their last component into the destination
 * directory or prefix (as gsutil does); two matches that would land on
 * one name are refused before anything is copied.  With recursive (cp -r,
 * as gcloud storage cp -r) a "directory" the pattern matches is copied
 * recursively by its last component.
 */
static int
plan_wildcard(struct gcs *g, struct plan *p, const struct gcs_url *su,
    const char *src, const char *dst, int dst_dir, int recursive,
    struct tpu_err *err)
{
	struct gcs_list_opts lo;
	struct matches m;
	char *prefix, *sub;
	size_t i, k;
	int rc;

	memset(&m, 0, sizeof m);
	memset(&lo, 0, sizeof lo);
	m.pattern = su->object;
	m.rec = recursive;
	prefix = xstrndup(su->object, gcs_wildcard_prefix(su->object));
	lo.prefix = prefix;
	rc = gcs_list(g, su->bucket, &lo, add_match, &m, err);
	free(prefix);
	if (rc == 0 && m.n == 0)
		rc = tpu_error(err, TPU_E_NOTFOUND, "no objects match %s", src);
	if (rc == 0 && m.n > 1 && !dst_dir)
		rc = tpu_error(err, TPU_E_USAGE,
		    "%s matches %zu objects: the destination %s must be a "
		    "directory or prefix (end it with '/')",
		    src, m.n, dst);
	for (i = 0; rc == 0 && i < m.n; i++)
		for (k = i + 1; rc == 0 && k < m.n; k++)
			if (strcmp(base_name(m.names[i]),
			        base_name(m.names[k])) == 0)
				rc = tpu_error(err, TPU_E_USAGE,
				    "%s: gs://%s/%s and gs://%s/%s would both "
				    "be copied to %s: use -r on their prefix",
				    src, su->bucket, m.names[i], su->bucket,
				    m.names[k], base_name(m.names[i]));
	for (i = 0; rc == 0 && i < m.n; i++) {
		sub = xasprintf("gs://%s/%s", su->bucket, m.names[i]);
		rc = plan_source(
		    g, p, sub, dst, dst_dir, m.rec && m.dirs[i], 1, err);
		free(sub);
	}
	for (i = 0; i < m.n; i++)
		free(m.names[i]);
	free(m.names);
	free(m.dirs);
	return rc;
}

static int
plan_source(struct gcs *g, struct plan *p, const char *src, const char *dst,
    int dst_dir, int recursive, int literal, struct tpu_err *err)
{
	struct gcs_url su, du;
	int rc = 0;

	memset(&su, 0, sizeof su);
	memset(&du, 0, sizeof du);
	if (gcs_is_url(dst) && (rc = gcs_url_parse(dst, &du, err)) != 0)
		return rc;
	if (!gcs_is_url(src)) {
		struct stat st;
		char *prefix;

		if (!gcs_is_url(dst)) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "'%s' and '%s' are both local: use cp(1)", src,
			    dst);
			goto out;
		}
		if (stat(src, &st) != 0) {
			rc = tpu_error(err, TPU_E_NOTFOUND, "%s: %s", src,
			    strerror(errno));
			goto out;
		}
		prefix = dst_dir ? as_prefix(du.object) : NULL;
		if (S_ISDIR(st.st_mode)) {
			struct upctx u;
			char *c = last_component(src), *pre;

			if (!recursive) {
				free(c);
				free(prefix);
				rc = tpu_error(err, TPU_E_USAGE,
				    "%s is a directory: use -r", src);
				goto out;
			}
			pre = xasprintf("%s%s/", prefix, c);
			u.p = p;
			u.bucket = du.bucket;
			u.prefix = pre;
			u.err = err;
			rc = walk_local(src, "", add_upload, &u, err);
			free(pre);
			free(c);
		} else if (S_ISREG(st.st_mode)) {
			struct job *j;
			char *name =
			    dst_dir ? xasprintf("%s%s", prefix, base_name(src))
			            : xstrdup(du.object);

			if ((rc = gcs_object_validate(name, err)) != 0) {
				free(name);
				free(prefix);
				goto out;
			}
			j = plan_add(p, JOB_UP);
			j->local = xstrdup(src);
			j->dbucket = xstrdup(du.bucket);
			j->dname = name;
			j->size = st.st_size;
		} else
			rc = tpu_error(err, TPU_E_USAGE,
			    "%s: not a regular file or directory", src);
		free(prefix);
		goto out;
	}
	if ((rc = gcs_url_parse(src, &su, err)) != 0)
		goto out;
	if (!literal && gcs_has_wildcard(su.object)) {
		rc =
		    plan_wildcard(g, p, &su, src, dst, dst_dir, recursive, err);
		goto out;
	}
	if (recursive) {
		struct gcs_list_opts lo;
		struct listctx l;
		char *lpre = as_prefix(su.object), *c, *strip, *droot = NULL,
		     *dpre = NULL;
		size_t before = p->n;

		c = *su.object != '\0' ? last_component(su.object)
		                       : xstrdup(su.bucket);
		/* keep the prefix's last component: strip its parent */
		{
			size_t n = strlen(lpre);
			const char *q = lpre + (n > 0 ? n - 1 : 0);

			while (q > lpre && q[-1] != '/')
				q--;
			strip = xstrndup(lpre, (size_t)(q - lpre));
		}
		memset(&l, 0, sizeof l);
		l.p = p;
		l.strip = strip;
		l.err = err;
		if (gcs_is_url(dst)) {
			l.kind = JOB_COPY;
			l.dbucket = du.bucket;
			dpre = as_prefix(du.object);
			if (*su.object == '\0') {
				/* a whole bucket: keep names as they are */
				free(strip);
				strip = xstrdup("");
				l.strip = strip;
				droot = xstrdup(dpre);
			} else
				droot = xstrdup(dpre);
			l.dprefix = droot;
		} else {
			l.kind = JOB_DOWN;
			if (*su.object == '\0') {
				droot = join(dst, c);
				l.ldir = droot;
			} else
				l.ldir = dst;
		}
		memset(&lo, 0, sizeof lo);
		lo.prefix = lpre;
		rc = gcs_list(g, su.bucket, &lo, add_listed, &l, err);
		if (rc == 0 && l.rc != 0)
			rc = l.rc;
		if (rc == 0 && p->n == before)
			rc = tpu_error(
			    err, TPU_E_NOTFOUND, "no objects under %s", src);
		free(lpre);
		free(c);
		free(strip);
		free(droot);
		free(dpre);
		goto out;
	}
	{
		struct gcs_object o;
		struct job *j;

		if (*su.object == '\0' ||
		    su.object[strlen(su.object) - 1] == '/') {
			rc = tpu_error(err, TPU_E_USAGE,
			    "%s names a prefix, not an object: use -r", src);
			goto out;
		}
		memset(&o, 0, sizeof o);
		if ((rc = gcs_stat(g, su.bucket, su.object, 0, &o, err)) != 0)
			goto out;
		if (gcs_is_url(dst)) {
			j = plan_add(p, JOB_COPY);
			j->dbucket = xstrdup(du.bucket);
			if (dst_dir) {
				char *pre = as_prefix(du.object);

				j->dname = xasprintf(
				    "%s%s", pre, base_name(su.object));
				free(pre);
			} else
				j->dname = xstrdup(du.object);
		} else {
			char *parent = name_parent(su.object), *lp;

			lp = dst_dir
			         ? gcs_local_path(dst, parent, su.object, err)
			         : xstrdup(dst);
			free(parent);
			if (lp == NULL) {
				gcs_object_release(&o);
				rc = err->code;
				goto out;
			}
			j = plan_add(p, JOB_DOWN);
			j->local = lp;
		}
		job_set_obj(j, &o);
		gcs_object_release(&o);
	}
out:
	gcs_url_release(&su);
	gcs_url_release(&du);
	return rc;
}

/* --- progress ------------------------------------------------------------- */

static void
prog_draw(void *arg, int final)
{
	struct prog *pr = arg;
	int64_t now = tpu_now_ms(), el = now - pr->p.start_ms;
	double rate = progress_rate(&pr->p, now);
	double eta = rate > 0 ? (double)(pr->total - pr->p.done) / rate : 0;

	if (pr->mode == PROG_JSONL) {
		fprintf(stderr,
		    "{\"event\":\"%s\",\"bytes\":%" PRId64
		    ",\"total_bytes\":%" PRId64 ",\"files\":%zu,"
		    "\"total_files\":%zu,\"failed\":%zu,"
		    "\"bytes_per_second\":%.0f,\"eta_seconds\":%.1f,"
		    "\"elapsed_seconds\":%.3f}\n",
		    final ? "done" : "progress", pr->p.done, pr->total,
		    pr->files_done, pr->files, pr->failed, rate,
		    final ? 0.0 : eta, (double)el / 1000.0);
		fflush(stderr);
	} else if (pr->tty) {
		char d[32], t[32], r[32];
		int pct =
		    pr->total > 0 ? (int)(pr->p.done * 100 / pr->total) : 100;

		tpu_human_size((double)pr->p.done, d, sizeof d);
		tpu_human_size((double)pr->total, t, sizeof t);
		tpu_human_size(rate, r, sizeof r);
		fprintf(stderr,
		    "\r\033[K%3d%% %s / %s  %s/s  %zu/%zu files  ETA %ds", pct,
		    d, t, r, pr->files_done, pr->files,
		    final ? 0 : (int)(eta + 0.5));
		if (final)
			fputc('\n', stderr);
		fflush(stderr);
		pr->drawn = 1;
	}
}

static void
prog_bytes(void *arg, int64_t delta)
{
	struct prog *pr = arg;

	progress_add(&pr->p, delta);
}

/* --- run ---------------------------------------------------------------- */

static int
mkdir_parents(const char *path, struct tpu_err *err)
{
	char *d = xstrdup(path), *s;
	int rc = 0;

	for (s = d + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(d, 0777) != 0 && errno != EEXIST) {
			rc = tpu_error(
			    err, TPU_E_IO, "mkdir %s: %s", d, strerror(errno));
			break;
		}
		*s = '/';
	}
	free(d);
	return rc;
}

/* --no-clobber's 412, in the user's terms (exit 4). */
static int
exists_error(const struct job *j, struct tpu_err *err)
{
	return tpu_error(err, TPU_E_PRECONDITION,
	    "gs://%s/%s exists: not overwritten (--no-clobber)", j->dbucket,
	    j->dname);
}

static int
run_job(struct run *r, struct gcs *g, struct job *j, struct tpu_err *err)
{
	struct gcsx_opts o = r->o;
	struct gcs_object obj, out;
	int rc = 0;

	o.parallel = r->inner_parallel;
	memset(&out, 0, sizeof out);
	switch (j->kind) {
	case JOB_UP:
		rc = gcsx_upload(
		    g, j->local, j->dbucket, j->dname, &o, &out, err);
		if (rc == TPU_E_PRECONDITION && r->o.if_generation_match == 0)
			rc = exists_error(j, err);
		else if (rc != 0)
			tpu_error_prefix(err, "cp %s gs://%s/%s", j->local,
			    j->dbucket, j->dname);
		break;
	case JOB_DOWN:
		if (r->o.if_generation_match == 0 &&
		    access(j->local, F_OK) == 0) {
			rc = tpu_error(err, TPU_E_PRECONDITION,
			    "%s exists (--no-clobber)", j->local);
			break;
		}
		memset(&obj, 0, sizeof obj);
		obj.bucket = j->sbucket;
		obj.name = j->sname;
		obj.size = j->size;
		obj.generation = j->generation;
		obj.crc32c = j->crc32c;
		obj.has_crc32c = j->has_crc32c;
		obj.md5_b64 = j->md5;
		if ((rc = mkdir_parents(j->local, err)) == 0)
			rc = gcsx_download(g, &obj, j->local, &o, err);
		if (rc != 0)
			tpu_error_prefix(err, "cp gs://%s/%s %s", j->sbucket,
			    j->sname, j->local);
		break;
	case JOB_COPY:
		rc = gcs_rewrite(g, j->sbucket, j->sname, j->generation,
		    j->dbucket, j->dname, r->o.if_generation_match, &out, err);
		if (rc == 0 && j->has_crc32c && out.has_crc32c &&
		    out.crc32c != j->crc32c && out.name != NULL)
			rc = tpu_error(err, TPU_E_INTEGRITY,
			    "the copy's crc32c differs from the source's");
		if (rc == 0)
			prog_bytes(r->pr, j->size);
		if (rc == TPU_E_PRECONDITION && r->o.if_generation_match == 0)
			rc = exists_error(j, err);
		else if (rc != 0)
			tpu_error_prefix(err, "cp gs://%s/%s gs://%s/%s",
			    j->sbucket, j->sname, j->dbucket, j->dname);
		break;
	case JOB_RM_OBJ:
		rc = gcs_delete(g, j->sbucket, j->sname, j->generation, err);
		if (rc == TPU_E_PRECONDITION) /* 412: pinned to the listing */
			rc = tpu_error(err, rc,
			    "gs://%s/%s changed since it was listed: not "
			    "deleted (run the sync again)",
			    j->sbucket, j->sname);
		else if (rc != 0)
			tpu_error_prefix(
			    err, "delete gs://%s/%s", j->sbucket, j->sname);
		break;
	case JOB_RM_LOCAL:
		if (unlink(j->local) != 0 && errno != ENOENT)
			rc = tpu_error(err, TPU_E_IO, "delete %s: %s", j->local,
			    strerror(errno));
		break;
	}
	gcs_object_release(&out);
	return rc;
}

static void *
worker(void *arg)
{
	struct run *r = arg;
	struct gcs *g = NULL;
	struct tpu_err err;
	size_t i;
	int rc;

	tpu_err_init(&err);
	if ((rc = gcs_clone(r->g, &g, &err)) != 0) {
		pthread_mutex_lock(&r->mu);
		if (r->rc == 0) {
			r->rc = rc;
			r->err = err;
		}
		r->next = r->p->n;
		pthread_mutex_unlock(&r->mu);
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(&r->mu);
		i = retry_interrupted ? r->p->n : r->next++;
		pthread_mutex_unlock(&r->mu);
		if (i >= r->p->n)
			break;
		tpu_err_init(&err);
		rc = run_job(r, g, &r->p->v[i], &err);
		pthread_mutex_lock(&r->pr->p.mu);
		r->pr->files_done++;
		if (rc != 0)
			r->pr->failed++;
		pthread_mutex_unlock(&r->pr->p.mu);
		if (rc == 0)
			continue;
		pthread_mutex_lock(&r->mu);
		if (r->rc == 0) {
			r->rc = rc;
			r->err = err;
		} else
			log_warn("%s", err.msg);
		pthread_mutex_unlock(&r->mu);
	}
	gcs_close(g);
	return NULL;
}

/*
 * The one line a successful run ends with, on stderr:
 * "Copied 12 files (3.4 MiB) in 1.2 s (2.8 MiB/s); deleted 2; 5 up to
 * date", or "Nothing to copy: 5 files up to date".
 */
static void
summary(const struct plan *p, int64_t bytes, int64_t el)
{
	char d[32], rt[32], tail[96] = "";
	size_t i, nrm = 0, ncp;
	int len = 0;

	for (i = 0; i < p->n; i++)
		nrm +=
		    p->v[i].kind == JOB_RM_OBJ || p->v[i].kind == JOB_RM_LOCAL;
	ncp = p->n - nrm;
	if (nrm > 0)
		len = snprintf(tail, sizeof tail, "; deleted %zu", nrm);
	if (p->skipped > 0 && len >= 0 && (size_t)len < sizeof tail)
		snprintf(tail + len, sizeof tail - (size_t)len,
		    "; %zu up to date", p->skipped);
	if (ncp == 0 && nrm == 0) {
		fprintf(stderr, "Nothing to copy: %zu file%s up to date\n",
		    p->skipped, p->skipped == 1 ? "" : "s");
		return;
	}
	tpu_human_size((double)bytes, d, sizeof d);
	tpu_human_size(
	    el > 0 ? (double)bytes * 1000.0 / (double)el : 0, rt, sizeof rt);
	if (ncp == 0)
		fprintf(stderr, "Deleted %zu file%s%s\n", nrm,
		    nrm == 1 ? "" : "s", p->skipped > 0 ? tail + len : "");
	else
		fprintf(stderr, "%s %zu file%s (%s) in %.1f s (%s/s)%s\n",
		    p->move ? "Moved" : "Copied", ncp, ncp == 1 ? "" : "s", d,
		    (double)el / 1000.0, rt, tail);
}

static int
run_plan(struct tpu_ctx *ctx, struct gcs *g, struct plan *p,
    const struct gcsx_opts *o, int parallel, enum prog_mode mode,
    struct tpu_err *err)
{
	pthread_t th[64];
	struct prog pr;
	struct run r;
	size_t i, nth;
	int64_t big = 0, every;

	memset(&pr, 0, sizeof pr);
	pr.mode = ctx->quiet && mode == PROG_AUTO ? PROG_NONE : mode;
	pr.tty = mode == PROG_AUTO && !ctx->quiet && isatty(STDERR_FILENO);
	/* JSON lines every 500 ms, the terminal line every 200 ms, else
	   only the count; the first bytes draw at once (last_ms 0) */
	if (pr.mode == PROG_JSONL)
		every = 500;
	else
		every = pr.tty ? 200 : 0;
	progress_init(&pr.p, tpu_now_ms(), every, prog_draw, &pr);
	pr.p.last_ms = 0;
	pr.files = p->n;
	for (i = 0; i < p->n; i++) {
		if (p->v[i].kind != JOB_RM_OBJ && p->v[i].kind != JOB_RM_LOCAL)
			pr.total += p->v[i].size;
		if (p->v[i].size > big)
			big = p->v[i].size;
	}
	memset(&r, 0, sizeof r);
	r.ctx = ctx;
	r.g = g;
	r.p = p;
	r.pr = &pr;
	r.o = *o;
	r.o.progress = prog_bytes;
	r.o.progress_arg = &pr;
	tpu_err_init(&r.err);
	pthread_mutex_init(&r.mu, NULL);
	/* SIGINT and SIGTERM stop the transfers through their error paths
	 * (exit 130 or 143): a download removes its DEST.tpuctl-tmp, an
	 * upload keeps its tracker for the rerun. */
	retry_install_signals();
	nth = (size_t)parallel < p->n ? (size_t)parallel : p->n;
	/* one file (or one big one among few): its parts go in parallel */
	r.inner_parallel = p->n <= 1 ? parallel : 1;
	if (nth > nitems(th))
		nth = nitems(th);
	for (i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, worker, &r) != 0)
			TPU_BUG("pthread_create");
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	if (pr.mode == PROG_JSONL || pr.drawn)
		prog_draw(&pr, 1);
	p->bytes = pr.p.done;
	p->elapsed_ms = tpu_now_ms() - pr.p.start_ms;
	if (r.rc == 0 && pr.mode == PROG_AUTO && !ctx->quiet && !p->move)
		summary(p, p->bytes, p->elapsed_ms);
	pthread_mutex_destroy(&r.mu);
	progress_release(&pr.p);
	if (r.rc != 0) {
		*err = r.err;
		if (pr.failed > 1) {
			size_t n = strlen(err->msg);

			snprintf(err->msg + n, sizeof err->msg - n,
			    " (and %zu more failures above)", pr.failed - 1);
		}
	}
	return r.rc;
}

/* --- options ------------------------------------------------------------ */

struct cpopts {
	int recursive, no_clobber, delete_extra, parallel;
	const char *content_type;
	enum prog_mode mode;
};

static int
parse_opts(const struct cmd_entry *e, int sync, int argc, char **argv,
    struct cpopts *c, struct tpu_err *err)
{
	static const struct option cp_opts[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "no-clobber", no_argument, NULL, 'n' },
		{ "content-type", required_argument, NULL, 'T' },
		{ "parallel", required_argument, NULL, 'P' },
		{ "progress", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option sync_opts[] = {
		{ "delete", no_argument, NULL, 'd' },
		{ "parallel", required_argument, NULL, 'P' },
		{ "progress", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *es;
	int ch;

	memset(c, 0, sizeof *c);
	c->parallel = 8;
	while ((ch = getopt_long(argc, argv, sync ? "" : "r",
	            sync ? sync_opts : cp_opts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			c->recursive = 1;
			break;
		case 'n':
			c->no_clobber = 1;
			break;
		case 'd':
			c->delete_extra = 1;
			break;
		case 'T':
			if (*optarg == '\0' || strpbrk(optarg, "\r\n") ||
			    strlen(optarg) > 127)
				return tpu_error(err, TPU_E_USAGE,
				    "invalid --content-type '%s': a media "
				    "type such as text/plain",
				    optarg);
			c->content_type = optarg;
			break;
		case 'P':
			c->parallel = (int)tpu_strtonum(optarg, 1, 64, &es);
			if (es != NULL)
				return tpu_error(err, TPU_E_USAGE,
				    "invalid --parallel '%s': an integer "
				    "from 1 to 64",
				    optarg);
			break;
		case 'p':
			if (strcmp(optarg, "auto") == 0)
				c->mode = PROG_AUTO;
			else if (strcmp(optarg, "none") == 0)
				c->mode = PROG_NONE;
			else if (strcmp(optarg, "jsonl") == 0)
				c->mode = PROG_JSONL;
			else
				return tpu_error(err, TPU_E_USAGE,
				    "invalid --progress '%s': auto, none or "
				    "jsonl",
				    optarg);
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	}
	return cmd_check_operands(e, argc - optind, argv + optind, err);
}

/* Check every operand before anything is sent (R12). */
static int
check_operand(const char *s, struct tpu_err *err)
{
	struct gcs_url u;
	int rc;

	if (*s == '\0')
		return tpu_error(err, TPU_E_USAGE, "empty path operand");
	if (!gcs_is_url(s))
		return 0;
	if ((rc = gcs_url_parse(s, &u, err)) != 0)
		return rc;
	if (*u.object != '\0' && u.object[strlen(u.object) - 1] != '/')
		rc = gcs_object_validate(u.object, err);
	gcs_url_release(&u);
	return rc;
}

/*
 * mv: after every copy succeeded, remove each source, pinned to the
 * generation copied (a source written meanwhile is kept and named).  A
 * failed copy removes nothing: the sources stay where they were.
 */
static int
remove_sources(struct gcs *g, const struct plan *p, struct tpu_err *err)
{
	size_t i;
	int rc, first = 0;

	for (i = 0; i < p->n; i++) {
		const struct job *j = &p->v[i];
		struct tpu_err e;

		tpu_err_init(&e);
		rc = 0;
		if (j->kind == JOB_UP && http_dry_run(gcs_http(g))) {
			printf("would remove %s\n", j->local);
		} else if (j->kind == JOB_UP) {
			if (unlink(j->local) != 0 && errno != ENOENT)
				rc = tpu_error(&e, TPU_E_IO, "remove %s: %s",
				    j->local, strerror(errno));
		} else if (j->kind == JOB_COPY || j->kind == JOB_DOWN) {
			rc = gcs_delete(
			    g, j->sbucket, j->sname, j->generation, &e);
			if (rc == TPU_E_PRECONDITION)
				rc = tpu_error(&e, rc,
				    "gs://%s/%s changed after it was copied: "
				    "kept",
				    j->sbucket, j->sname);
			else if (rc == TPU_E_NOTFOUND)
				rc = 0; /* gone already: moved all the same */
			else if (rc != 0)
				tpu_error_prefix(&e, "remove gs://%s/%s",
				    j->sbucket, j->sname);
		}
		if (rc != 0) {
			if (first != 0)
				log_warn("%s", e.msg);
			else {
				first = rc;
				*err = e;
			}
		}
	}
	return first;
}

static int
data_copy(
    struct tpu_ctx *ctx, int argc, char **argv, int move, struct tpu_err *err)
{
	const struct cmd_entry *e = cmd_current();
	struct cpopts c;
	struct gcsx_opts o;
	struct plan p;
	struct gcs *g = NULL;
	const char *dst;
	int i, nsrc, dst_dir, rc;

	if ((rc = parse_opts(e, 0, argc, argv, &c, err)) != 0)
		return rc;
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(e, argc, argv, err)) != 0)
		return rc;
	nsrc = argc - 1;
	dst = argv[nsrc];
	for (i = 0; i < argc; i++)
		if ((rc = check_operand(argv[i], err)) != 0)
			return rc;
	if (gcs_is_url(dst)) {
		struct gcs_url du;

		if ((rc = gcs_url_parse(dst, &du, err)) != 0)
			return rc;
		dst_dir = nsrc > 1 || c.recursive || *du.object == '\0' ||
		          du.object[strlen(du.object) - 1] == '/';
		gcs_url_release(&du);
	} else {
		dst_dir = nsrc > 1 || c.recursive ||
		          dst[strlen(dst) - 1] == '/' || is_local_dir(dst);
		if ((nsrc > 1 || c.recursive) && !is_local_dir(dst) &&
		    access(dst, F_OK) == 0)
			return tpu_error(err, TPU_E_USAGE,
			    "destination %s is not a directory", dst);
	}
	gcsx_opts_init(&o);
	o.content_type = c.content_type;
	o.if_generation_match = c.no_clobber ? 0 : -1;
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		return rc;
	memset(&p, 0, sizeof p);
	for (i = 0; i < nsrc && rc == 0; i++)
		rc = plan_source(
		    g, &p, argv[i], dst, dst_dir, c.recursive, 0, err);
	if (rc == 0 && !gcs_is_url(dst) && dst_dir && !is_local_dir(dst) &&
	    !ctx->dry_run && mkdir(dst, 0777) != 0 && errno != EEXIST)
		rc = tpu_error(
		    err, TPU_E_IO, "mkdir %s: %s", dst, strerror(errno));
	p.move = move;
	if (rc == 0)
		rc = run_plan(ctx, g, &p, &o, c.parallel, c.mode, err);
	if (rc == 0 && move) {
		rc = remove_sources(g, &p, err);
		if (rc == 0 && c.mode == PROG_AUTO && !ctx->quiet)
			summary(&p, p.bytes, p.elapsed_ms);
	}
	plan_release(&p);
	gcs_close(g);
	return rc;
}

int
cmd_data_cp(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return data_copy(ctx, argc, argv, 0, err);
}

int
cmd_data_mv(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	return data_copy(ctx, argc, argv, 1, err);
}

/* --- sync --------------------------------------------------------------- */

struct entry {
	char *key; /* relative name */
	char *path;
	struct gcs_object obj; /* remote side: fields owned here */
	int64_t size;
	int seen;
};

struct side {
	struct entry *v;
	size_t n, cap;
};

static struct entry *
side_add(struct side *s, const char *key)
{
	struct entry *x;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = xreallocarray(s->v, s->cap, sizeof *s->v);
	}
	x = &s->v[s->n++];
	memset(x, 0, sizeof *x);
	x->key = xstrdup(key);
	return x;
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(
	    ((const struct entry *)a)->key, ((const struct entry *)b)->key);
}

static void
side_release(struct side *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].path);
		free(s->v[i].obj.bucket);
		free(s->v[i].obj.name);
		free(s->v[i].obj.md5_b64);
	}
	free(s->v);
}

static int
add_local_entry(void *arg, const char *path, const char *rel, int64_t size)
{
	struct entry *x = side_add(arg, rel);

	x->path = xstrdup(path);
	x->size = size;
	return 0;
}

struct remctx {
	struct side *s;
	const char *prefix;
	const char *pattern; /* a wildcard source: what it matches */
};

static int
add_remote_entry(void *arg, const struct gcs_object *o, const char *prefix)
{
	struct remctx *r = arg;
	struct entry *x;
	size_t n;

	if (o == NULL || prefix != NULL)
		return 0;
	n = strlen(o->name);
	if (n == 0 || o->name[n - 1] == '/')
		return 0;
	if (r->pattern != NULL && gcs_wildcard_root(r->pattern, o->name) == 0)
		return 0;
	x = side_add(r->s, o->name + strlen(r->prefix));
	x->obj.bucket = xstrdup(o->bucket);
	x->obj.name = xstrdup(o->name);
	x->obj.size = o->size;
	x->obj.generation = o->generation;
	x->obj.crc32c = o->crc32c;
	x->obj.has_crc32c = o->has_crc32c;
	x->obj.md5_b64 = o->md5_b64 != NULL ? xstrdup(o->md5_b64) : NULL;
	x->size = o->size;
	return 0;
}

/* 1 when the local file at path has the object's size and crc32c. */
static int
same_content(const char *path, const struct gcs_object *o)
{
	uint32_t crc;
	int64_t size;
	struct tpu_err e;

	tpu_err_init(&e);
	if (!o->has_crc32c)
		return 0;
	if (gcsx_file_crc32c(path, &crc, &size, &e) != 0)
		return 0;
	return size == o->size && crc == o->crc32c;
}

static struct entry *
side_find(struct side *s, const char *key)
{
	struct entry k;

	if (s->n == 0)
		return NULL;
	k.key = (char *)(uintptr_t)key;
	return bsearch(&k, s->v, s->n, sizeof *s->v, entry_cmp);
}

/*
 * --delete of a download from a wildcard source: only local files the
 * pattern covers (as the object root + key would be) are removed.
 */
static int
sync_covers(const char *pattern, const char *root, const char *key)
{
	char *name;
	int hit;

	if (pattern == NULL)
		return 1;
	name = xasprintf("%s%s", root, key);
	hit = gcs_wildcard_root(pattern, name) != 0;
	free(name);
	return hit;
}

int
cmd_data_sync(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	const struct cmd_entry *e = cmd_current();
	struct cpopts c;
	struct gcsx_opts o;
	struct gcs_list_opts lo;
	struct gcs_url u;
	struct side loc, rem;
	struct remctx rc_;
	struct plan p;
	struct gcs *g = NULL;
	const char *ldir, *url;
	char *prefix = NULL, *lit_prefix = NULL;
	int up, rc;
	size_t i;

	if ((rc = parse_opts(e, 1, argc, argv, &c, err)) != 0)
		return rc;
	argv += optind;
	up = !gcs_is_url(argv[0]) && gcs_is_url(argv[1]);
	if (!up && !(gcs_is_url(argv[0]) && !gcs_is_url(argv[1])))
		return tpu_error(err, TPU_E_USAGE,
		    "sync needs one local directory and one gs:// URL");
	ldir = up ? argv[0] : argv[1];
	url = up ? argv[1] : argv[0];
	if ((rc = gcs_url_parse(url, &u, err)) != 0)
		return rc;
	if (up && !is_local_dir(ldir)) {
		gcs_url_release(&u);
		return tpu_error(
		    err, TPU_E_USAGE, "%s is not a directory", ldir);
	}
	if (!up && access(ldir, F_OK) == 0 && !is_local_dir(ldir)) {
		gcs_url_release(&u);
		return tpu_error(
		    err, TPU_E_USAGE, "%s is not a directory", ldir);
	}
	if (gcs_has_wildcard(u.object) && up) {
		gcs_url_release(&u);
		return tpu_error(err, TPU_E_USAGE,
		    "%s: wildcards are not allowed in a sync destination", url);
	}
	memset(&rc_, 0, sizeof rc_);
	if (gcs_has_wildcard(u.object)) {
		/* the objects (and "directories") the pattern matches, by
		   their names under the pattern's literal parent */
		char *lit = xstrndup(u.object, gcs_wildcard_prefix(u.object));

		prefix = name_parent(lit);
		free(lit);
		rc_.pattern = u.object;
	} else
		prefix = as_prefix(u.object);
	memset(&loc, 0, sizeof loc);
	memset(&rem, 0, sizeof rem);
	memset(&p, 0, sizeof p);
	gcsx_opts_init(&o);
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	if (is_local_dir(ldir) &&
	    (rc = walk_local(ldir, "", add_local_entry, &loc, err)) != 0)
		goto out;
	memset(&lo, 0, sizeof lo);
	lo.prefix = prefix;
	if (rc_.pattern != NULL)
		lo.prefix = lit_prefix =
		    xstrndup(u.object, gcs_wildcard_prefix(u.object));
	rc_.s = &rem;
	rc_.prefix = prefix;
	if ((rc = gcs_list(g, u.bucket, &lo, add_remote_entry, &rc_, err)) != 0)
		goto out;
	if (loc.n > 1)
		qsort(loc.v, loc.n, sizeof *loc.v, entry_cmp);
	if (rem.n > 1)
		qsort(rem.v, rem.n, sizeof *rem.v, entry_cmp);
	if (up) {
		for (i = 0; i < loc.n; i++) {
			struct entry *x = &loc.v[i],
			             *r = side_find(&rem, x->key);
			struct job *j;
			char *name;

			if (r != NULL) {
				r->seen = 1;
				if (r->size == x->size &&
				    same_content(x->path, &r->obj)) {
					p.skipped++;
					continue;
				}
			}
			name = xasprintf("%s%s", prefix, x->key);
			if ((rc = gcs_object_validate(name, err)) != 0) {
				free(name);
				goto out;
			}
			j = plan_add(&p, JOB_UP);
			j->local = xstrdup(x->path);
			j->dbucket = xstrdup(u.bucket);
			j->dname = name;
			j->size = x->size;
		}
		for (i = 0; c.delete_extra && i < rem.n; i++) {
			struct job *j;

			if (rem.v[i].seen)
				continue;
			j = plan_add(&p, JOB_RM_OBJ);
			j->sbucket = xstrdup(rem.v[i].obj.bucket);
			j->sname = xstrdup(rem.v[i].obj.name);
			j->generation = rem.v[i].obj.generation;
		}
	} else {
		for (i = 0; i < rem.n; i++) {
			struct entry *r = &rem.v[i], *x;
			struct job *j;
			char *lp;

			if ((lp = gcs_local_path(
			         ldir, prefix, r->obj.name, err)) == NULL) {
				rc = err->code;
				goto out;
			}
			if ((x = side_find(&loc, r->key)) != NULL) {
				x->seen = 1;
				if (x->size == r->size &&
				    same_content(x->path, &r->obj)) {
					free(lp);
					p.skipped++;
					continue;
				}
			}
			j = plan_add(&p, JOB_DOWN);
			j->local = lp;
			job_set_obj(j, &r->obj);
		}
		for (i = 0; c.delete_extra && i < loc.n; i++) {
			struct job *j;

			if (loc.v[i].seen ||
			    !sync_covers(rc_.pattern, prefix, loc.v[i].key))
				continue;
			j = plan_add(&p, JOB_RM_LOCAL);
			j->local = xstrdup(loc.v[i].path);
		}
	}
	if (ctx->dry_run) {
		for (i = 0; i < p.n; i++) {
			struct job *j = &p.v[i];

			if (j->kind == JOB_UP)
				printf("upload %s gs://%s/%s\n", j->local,
				    j->dbucket, j->dname);
			else if (j->kind == JOB_DOWN)
				printf("download gs://%s/%s %s\n", j->sbucket,
				    j->sname, j->local);
			else if (j->kind == JOB_RM_OBJ)
				printf("delete gs://%s/%s\n", j->sbucket,
				    j->sname);
			else
				printf("delete %s\n", j->local);
		}
		goto out;
	}
	if (!up && !is_local_dir(ldir) && mkdir(ldir, 0777) != 0) {
		rc = tpu_error(
		    err, TPU_E_IO, "mkdir %s: %s", ldir, strerror(errno));
		goto out;
	}
	rc = run_plan(ctx, g, &p, &o, c.parallel, c.mode, err);
out:
	plan_release(&p);
	side_release(&loc);
	side_release(&rem);
	free(prefix);
	free(lit_prefix);
	gcs_url_release(&u);
	gcs_close(g);
	return rc;
}
