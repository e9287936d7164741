/*
 * "tpuctl data ls|rm|mb|stat|cat|du" (and the cp/sync entries of
 * cmd/data_cp.c): Cloud Storage commands on src/gcs.  Every operand is
 * checked (gs:// URL, bucket and object name rules) before anything is
 * sent.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "cmd.h"
#include "config.h"
#include "crc32c.h"
#include "data.h"
#include "gcs.h"
#include "gcsurl.h"
#include "http.h"
#include "json.h"
#include "util.h"
#include "xmalloc.h"

extern const struct cmd_entry data_children[];

enum { D_LS, D_RM, D_MB, D_STAT, D_CAT, D_DU };

/* Parse operand s as a gs:// URL; need_object: an object name is needed. */
static int
parse_operand(
    const char *s, int need_object, struct gcs_url *u, struct tpu_err *err)
{
	int rc;

	memset(u, 0, sizeof *u);
	if (!gcs_is_url(s))
		return tpu_error(err, TPU_E_USAGE,
		    "invalid URL '%s': expected gs://bucket%s", s,
		    need_object ? "/object" : "[/prefix]");
	/* bucket and object names are checked there */
	if ((rc = gcs_url_parse(s, u, err)) != 0)
		return rc;
	if (need_object) {
		size_t n = strlen(u->object);

		if (n == 0 || u->object[n - 1] == '/') {
			gcs_url_release(u);
			return tpu_error(err, TPU_E_USAGE,
			    "invalid URL '%s': expected gs://bucket/object "
			    "(an object name, not a bucket or prefix)",
			    s);
		}
	}
	return 0;
}

/* Check every operand before any request; *urls gets them parsed. */
static int
parse_all(int argc, char **argv, int need_object, struct gcs_url **urls,
    struct tpu_err *err)
{
	struct gcs_url *u = xcalloc((size_t)argc + 1, sizeof *u);
	int i, rc;

	for (i = 0; i < argc; i++)
		if ((rc = parse_operand(argv[i], need_object, &u[i], err)) !=
		    0) {
			while (i-- > 0)
				gcs_url_release(&u[i]);
			free(u);
			return rc;
		}
	*urls = u;
	return 0;
}

static void
free_all(struct gcs_url *u, int n)
{
	int i;

	for (i = 0; i < n && u != NULL; i++)
		gcs_url_release(&u[i]);
	free(u);
}

static int
object_err(struct tpu_err *err, const char *bucket, const char *name)
{
	if (err->code == TPU_E_NOTFOUND)
		return tpu_error(
		    err, TPU_E_NOTFOUND, "gs://%s/%s: not found", bucket, name);
	return tpu_error_prefix(err, "gs://%s/%s", bucket, name);
}

/* The configured project, validated (buckets are created and listed in
 * it). */
static int
data_project(struct tpu_ctx *ctx, const char **out, struct tpu_err *err)
{
	const char *project = config_get(ctx->cfg, "core/project");

	if (project == NULL || *project == '\0')
		return tpu_error(err, TPU_E_USAGE,
		    "no project: pass --project, set CLOUDSDK_CORE_PROJECT, "
		    "or run 'tpuctl config set core/project PROJECT'");
	*out = project;
	return catalog_project_validate(project, err);
}

/* ---- ls ---- */

struct ls_state {
	struct tpu_ctx *ctx;
	const char *bucket;
	const char *want;    /* -r: only names == want or under want/ */
	const char *pattern; /* wildcards: only names it matches */
	int long_fmt, json;  /* -l; --format other than table */
	int versions;        /* -a: URL#GENERATION (and metageneration) */
	cJSON *arr;          /* json: the collected resources */
	int64_t nobj, nbytes;
	int matched;
};

static int
ls_keep(const struct ls_state *st, const char *name)
{
	size_t n;

	if (st->pattern != NULL)
		return gcs_wildcard_match(st->pattern, name);
	if (st->want == NULL)
		return 1;
	n = strlen(st->want);
	return strncmp(name, st->want, n) == 0 &&
	       (name[n] == '\0' || name[n] == '/');
}

static int
ls_cb(void *arg, const struct gcs_object *o, const char *prefix)
{
	struct ls_state *st = arg;
	FILE *fp = st->ctx->out.fp;
	char *shown;

	if (o != NULL && !ls_keep(st, o->name))
		return 0;
	if (prefix != NULL && !ls_keep(st, prefix))
		return 0;
	st->matched++;
	if (st->json) {
		if (o != NULL)
			cJSON_AddItemToArray(
			    st->arr, cJSON_Duplicate(o->json, 1));
		else {
			cJSON *p = cJSON_CreateObject();

			cJSON_AddStringToObject(p, "kind", "storage#prefix");
			cJSON_AddStringToObject(p, "bucket", st->bucket);
			cJSON_AddStringToObject(p, "prefix", prefix);
			cJSON_AddItemToArray(st->arr, p);
		}
		return 0;
	}
	/* names are anyone's bytes: control characters shown escaped
	 * (the json form carries them as they are) */
	if (prefix != NULL) {
		char *shown = tpu_show_dup(prefix, 0);

		if (st->long_fmt)
			fprintf(fp, "%32s gs://%s/%s\n", "", st->bucket, shown);
		else
			fprintf(fp, "gs://%s/%s\n", st->bucket, shown);
		free(shown);
		return 0;
	}
	st->nobj++;
	st->nbytes += o->size;
	shown = tpu_show_dup(o->name, 0);
	if (st->long_fmt) {
		char t[24] = "-";

		/* "2026-12-01T01:02:03.456Z" -> "2026-12-01T01:02:03Z" */
		if (o->updated != NULL && strlen(o->updated) >= 19)
			snprintf(t, sizeof t, "%.19sZ", o->updated);
		fprintf(fp, "%10" PRId64 "  %-20s  gs://%s/%s", o->size, t,
		    st->bucket, shown);
	} else
		fprintf(fp, "gs://%s/%s", st->bucket, shown);
	free(shown);
	/* -a: gsutil's "URL#GENERATION" (-l: "  metageneration=M") */
	if (st->versions)
		fprintf(fp, "#%" PRId64, o->generation);
	if (st->versions && st->long_fmt)
		fprintf(fp, "  metageneration=%" PRId64, o->metageneration);
	fputc('\n', fp);
	return 0;
}

static void
human(int64_t n, char *buf, size_t len)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int i = 0;

	while (v >= 1024.0 && i < 4) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%" PRId64 " B", n);
	else
		snprintf(buf, len, "%.2f %s", v, u[i]);
}

static int
ls_one(struct gcs *g, struct ls_state *st, const struct gcs_url *u, int rec,
    int versions, struct tpu_err *err)
{
	struct gcs_list_opts lo;
	size_t n = strlen(u->object);
	char *dir = NULL;
	int rc;

	memset(&lo, 0, sizeof lo);
	lo.versions = versions;
	st->bucket = u->bucket;
	st->want = NULL;
	st->pattern = NULL;
	st->matched = 0;
	if (gcs_has_wildcard(u->object)) {
		/* one flat listing under the literal prefix, the objects
		   the pattern matches ('*' stays within one part) */
		dir = xstrndup(u->object, gcs_wildcard_prefix(u->object));
		lo.prefix = dir;
		st->pattern = u->object;
		rc = gcs_list(g, u->bucket, &lo, ls_cb, st, err);
		st->pattern = NULL;
	} else if (rec) {
		lo.prefix = u->object;
		if (n > 0 && u->object[n - 1] != '/')
			st->want = u->object;
		rc = gcs_list(g, u->bucket, &lo, ls_cb, st, err);
	} else {
		lo.delimiter = "/";
		if (n == 0 || u->object[n - 1] == '/') {
			lo.prefix = u->object;
			rc = gcs_list(g, u->bucket, &lo, ls_cb, st, err);
		} else {
			/* "dir" lists dir/ when it is a prefix, else the
			   object of that exact name */
			dir = xasprintf("%s/", u->object);
			lo.prefix = dir;
			rc = gcs_list(g, u->bucket, &lo, ls_cb, st, err);
			if (rc == 0 && st->matched == 0) {
				lo.prefix = u->object;
				st->want = u->object;
				rc =
				    gcs_list(g, u->bucket, &lo, ls_cb, st, err);
			}
		}
	}
	free(dir);
	if (rc != 0)
		return tpu_error_prefix(
		    err, "gs://%s/%s", u->bucket, u->object);
	if (st->matched == 0 && n > 0)
		return tpu_error(err, TPU_E_NOTFOUND,
		    "gs://%s/%s: matched no objects", u->bucket, u->object);
	return 0;
}

/* "data ls gs://": the project's buckets (buckets.list). */
struct lsb_state {
	FILE *fp;
	int long_fmt;
	cJSON *arr; /* json: the bucket resources */
	int64_t n;
};

static int
lsb_cb(void *arg, const cJSON *b)
{
	struct lsb_state *st = arg;
	const char *created = json_opt_string(b, "timeCreated", NULL);
	char t[24] = "-", *shown;

	st->n++;
	if (st->arr != NULL) {
		cJSON_AddItemToArray(st->arr, cJSON_Duplicate(b, 1));
		return 0;
	}
	shown = tpu_show_dup(json_opt_string(b, "name", ""), 0);
	if (st->long_fmt) {
		if (created != NULL && strlen(created) >= 19)
			snprintf(t, sizeof t, "%.19sZ", created);
		fprintf(st->fp, "%-20s  %-12s  %-10s  gs://%s/\n", t,
		    json_opt_string(b, "location", "-"),
		    json_opt_string(b, "storageClass", "-"), shown);
	} else
		fprintf(st->fp, "gs://%s/\n", shown);
	free(shown);
	return 0;
}

static int
ls_buckets(struct tpu_ctx *ctx, int lng, struct tpu_err *err)
{
	struct lsb_state st;
	struct gcs *g = NULL;
	const char *project = NULL;
	int rc;

	memset(&st, 0, sizeof st);
	st.fp = ctx->out.fp;
	st.long_fmt = lng;
	if ((rc = data_project(ctx, &project, err)) != 0)
		return rc;
	if (ctx->out.fmt != OUTPUT_TABLE)
		st.arr = cJSON_CreateArray();
	if ((rc = ctx_gcs_open(ctx, &g, err)) == 0)
		rc = gcs_bucket_list(g, project, lsb_cb, &st, err);
	if (rc != 0)
		tpu_error_prefix(err, "buckets of project %s", project);
	/* as gcloud's list commands, on stderr (stdout stays empty) */
	if (rc == 0 && st.n == 0 && !ctx->quiet)
		fprintf(stderr, "Listed 0 items.\n");
	if (rc == 0 && st.arr != NULL)
		rc = output_emit(&ctx->out, st.arr, NULL, err);
	else if (rc == 0 && lng)
		fprintf(st.fp, "TOTAL: %" PRId64 " bucket%s\n", st.n,
		    st.n == 1 ? "" : "s");
	cJSON_Delete(st.arr);
	gcs_close(g);
	return rc;
}

static int
data_ls(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "long", no_argument, NULL, 'l' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "all-versions", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct ls_state st;
	struct gcs_url *urls = NULL;
	struct gcs *g = NULL;
	int ch, lng = 0, rec = 0, ver = 0, i, nu, rc;

	while ((ch = getopt_long(argc, argv, "lra", opts, NULL)) != -1)
		switch (ch) {
		case 'l':
			lng = 1;
			break;
		case 'r':
			rec = 1;
			break;
		case 'a':
			ver = 1;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&data_children[D_LS], argc, argv, err)) !=
	    0)
		return rc;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "gs://") != 0)
			continue;
		if (argc > 1 || rec || ver)
			return tpu_error(err, TPU_E_USAGE,
			    "gs:// lists the project's buckets: give it alone, "
			    "without -r or -a");
		return ls_buckets(ctx, lng, err);
	}
	if ((rc = parse_all(argc, argv, 0, &urls, err)) != 0)
		return rc;
	nu = argc;
	memset(&st, 0, sizeof st);
	st.ctx = ctx;
	st.long_fmt = lng;
	st.versions = ver;
	st.json = ctx->out.fmt != OUTPUT_TABLE;
	if (st.json)
		st.arr = cJSON_CreateArray();
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	for (i = 0; i < nu && rc == 0; i++)
		rc = ls_one(g, &st, &urls[i], rec, ver, err);
	if (rc == 0 && st.json)
		rc = output_emit(&ctx->out, st.arr, NULL, err);
	else if (rc == 0 && lng) {
		char h[32];

		human(st.nbytes, h, sizeof h);
		fprintf(ctx->out.fp,
		    "TOTAL: %" PRId64 " object%s, %" PRId64 " bytes (%s)\n",
		    st.nobj, st.nobj == 1 ? "" : "s", st.nbytes, h);
	}
out:
	gcs_close(g);
	cJSON_Delete(st.arr);
	free_all(urls, nu);
	return rc;
}

/* ---- rm ---- */

struct rm_item {
	char *name;
	int64_t generation;
};

struct rm_job {
	pthread_mutex_t mu;
	struct gcs *g0;
	const char *bucket;
	struct rm_item *items;
	size_t n, next, failed;
	int first_rc;
	struct tpu_err first_err;
	int quiet;
	int versions; /* items are versions: deleted by generation=N */
	FILE *out;
};

struct rm_list {
	struct rm_item *items;
	size_t n, cap;
	const char *want;    /* names == want or under want/ */
	int exact;           /* names == want only */
	const char *pattern; /* wildcards: names it matches */
	int rec;             /* ... or under a "directory" it matches */
};

static int
rm_collect(void *arg, const struct gcs_object *o, const char *prefix)
{
	struct rm_list *l = arg;
	size_t n;

	(void)prefix;
	if (o == NULL)
		return 0;
	if (l->want != NULL) {
		n = strlen(l->want);
		if (strncmp(o->name, l->want, n) != 0 ||
		    (o->name[n] != '\0' && (l->exact || o->name[n] != '/')))
			return 0;
	}
	if (l->pattern != NULL &&
	    (l->rec ? gcs_wildcard_root(l->pattern, o->name) == 0
	            : !gcs_wildcard_match(l->pattern, o->name)))
		return 0;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->items = xreallocarray(l->items, l->cap, sizeof *l->items);
	}
	l->items[l->n].name = xstrdup(o->name);
	l->items[l->n].generation = o->generation;
	l->n++;
	return 0;
}

static void
rm_report(struct rm_job *j, const struct rm_item *it, int rc, struct tpu_err *e)
{
	pthread_mutex_lock(&j->mu);
	if (rc == 0 || rc == TPU_E_NOTFOUND) {
		/* 404: deleted meanwhile (or by an earlier attempt) */
		char ver[32] = "";

		if (j->versions)
			snprintf(ver, sizeof ver, "#%" PRId64, it->generation);
		if (!j->quiet) {
			char *shown = tpu_show_dup(it->name, 0);

			fprintf(stderr, "Removing gs://%s/%s%s\n", j->bucket,
			    shown, ver);
			free(shown);
		}
	} else {
		char *shown = tpu_show_dup(it->name, 0);
		char *msg;

		/* 412: the delete was pinned to the listed generation */
		if (rc == TPU_E_PRECONDITION)
			tpu_error(e, rc,
			    "changed since it was listed: not removed (run "
			    "the command again to remove the new version)");
		msg = tpu_show_dup(e->msg, 0);

		fprintf(
		    stderr, "tpuctl: gs://%s/%s: %s\n", j->bucket, shown, msg);
		free(shown);
		free(msg);
		if (j->failed++ == 0) {
			j->first_rc = rc;
			j->first_err = *e;
		}
	}
	pthread_mutex_unlock(&j->mu);
}

static void *
rm_worker(void *arg)
{
	struct rm_job *j = arg;
	struct tpu_err e;
	struct gcs *g = NULL;
	int rc;

	tpu_err_init(&e);
	if ((rc = gcs_clone(j->g0, &g, &e)) != 0) {
		pthread_mutex_lock(&j->mu);
		if (j->failed++ == 0) {
			j->first_rc = rc;
			j->first_err = e;
		}
		pthread_mutex_unlock(&j->mu);
		return NULL;
	}
	for (;;) {
		struct rm_item *it;

		pthread_mutex_lock(&j->mu);
		it = j->next < j->n ? &j->items[j->next++] : NULL;
		pthread_mutex_unlock(&j->mu);
		if (it == NULL)
			break;
		tpu_err_init(&e);
		/* pinned to the listed generation: a precondition (or that
		   very version), so retrying is safe (R6) and a newer object
		   is never lost */
		if (j->versions)
			rc = gcs_delete_version(
			    g, j->bucket, it->name, it->generation, &e);
		else
			rc = gcs_delete(
			    g, j->bucket, it->name, it->generation, &e);
		rm_report(j, it, rc, &e);
	}
	gcs_close(g);
	return NULL;
}

/*
 * Delete the listed items of l (freed here), by DATA_RM_PARALLEL
 * requests, each pinned to its listed generation; what names the URL's
 * object part (a prefix, a pattern) and note is added to the failure line.
 */
static int
rm_run(struct tpu_ctx *ctx, struct gcs *g, const char *bucket,
    struct rm_list *l, int versions, const char *what, const char *note,
    struct tpu_err *err)
{
	struct rm_job j;
	pthread_t th[DATA_RM_PARALLEL];
	size_t i, nth;

	memset(&j, 0, sizeof j);
	pthread_mutex_init(&j.mu, NULL);
	j.g0 = g;
	j.bucket = bucket;
	j.items = l->items;
	j.n = l->n;
	j.quiet = ctx->quiet;
	j.versions = versions;
	nth = l->n < DATA_RM_PARALLEL ? l->n : DATA_RM_PARALLEL;
	for (i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, rm_worker, &j) != 0)
			break;
	if (i == 0) /* no thread: do it here */
		rm_worker(&j);
	nth = i;
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.mu);
	for (i = 0; i < l->n; i++)
		free(l->items[i].name);
	free(l->items);
	l->items = NULL;
	l->n = l->cap = 0;
	if (j.failed > 0) {
		/* some deleted, some not: partial (exit 8) */
		*err = j.first_err;
		return tpu_error(err,
		    j.failed < j.n ? TPU_E_PARTIAL : j.first_rc,
		    "%zu of %zu object%s %s gs://%s/%s not removed%s "
		    "(first: %s)",
		    j.failed, j.n, j.n == 1 ? "" : "s",
		    gcs_has_wildcard(what) ? "matching" : "under", bucket, what,
		    note, j.first_err.msg);
	}
	return 0;
}

/*
 * "rm -r": every object under u's prefix; the bare bucket (gs://b,
 * gs://b/) is every object, noncurrent versions included (a bucket with
 * any left cannot be deleted), and then the bucket, deleted only when
 * every object deletion succeeded.  With versions (-a), every version of
 * what matches; with exact (-a without -r), of the one object u names.
 */
static int
rm_tree(struct tpu_ctx *ctx, struct gcs *g, const struct gcs_url *u,
    int versions, int exact, struct tpu_err *err)
{
	struct gcs_list_opts lo;
	struct rm_list l;
	size_t n = strlen(u->object);
	int rc, bucket = n == 0;

	memset(&lo, 0, sizeof lo);
	memset(&l, 0, sizeof l);
	lo.prefix = u->object;
	lo.versions = versions || bucket;
	if (n > 0 && u->object[n - 1] != '/' && *lo.prefix != '\0')
		l.want = u->object;
	l.exact = exact;
	if ((rc = gcs_list(g, u->bucket, &lo, rm_collect, &l, err)) != 0)
		return tpu_error_prefix(
		    err, "gs://%s/%s", u->bucket, u->object);
	if (l.n == 0 && bucket)
		goto bucket;
	if (l.n == 0 && exact)
		return tpu_error(err, TPU_E_NOTFOUND, "gs://%s/%s: not found",
		    u->bucket, u->object);
	if (l.n == 0)
		return tpu_error(err, TPU_E_NOTFOUND,
		    "gs://%s/%s: matched no objects", u->bucket, u->object);
	if ((rc = rm_run(ctx, g, u->bucket, &l, lo.versions, u->object,
	         bucket ? ", bucket kept" : "", err)) != 0)
		return rc;
	if (!bucket)
		return 0;
bucket:
	/* a 404: a retried DELETE that already happened, or another
	   client was first; either way the bucket is gone */
	if ((rc = gcs_bucket_delete(g, u->bucket, err)) == TPU_E_NOTFOUND) {
		tpu_err_init(err);
		rc = 0;
	}
	if (rc != 0)
		return tpu_error_prefix(
		    err, "gs://%s: bucket not removed", u->bucket);
	if (!ctx->quiet)
		fprintf(stderr, "Removing gs://%s/\n", u->bucket);
	return 0;
}

/*
 * The objects a URL with wildcards matches (with rec, also everything
 * under the "directories" it matches; with versions, every version), from
 * one listing under its literal prefix, into l.
 */
static int
rm_expand(struct gcs *g, const struct gcs_url *u, int rec, int versions,
    struct rm_list *l, struct tpu_err *err)
{
	struct gcs_list_opts lo;
	char *prefix = xstrndup(u->object, gcs_wildcard_prefix(u->object));
	int rc;

	memset(&lo, 0, sizeof lo);
	lo.prefix = prefix;
	lo.versions = versions;
	l->pattern = u->object;
	l->rec = rec;
	rc = gcs_list(g, u->bucket, &lo, rm_collect, l, err);
	free(prefix);
	if (rc != 0)
		return tpu_error_prefix(
		    err, "gs://%s/%s", u->bucket, u->object);
	return 0;
}

static int
data_rm(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "all-versions", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct gcs_url *urls = NULL;
	struct rm_list *wl = NULL;
	struct gcs *g = NULL;
	struct buf none;
	int ch, rec = 0, all = 0, i, nu, rc;

	while ((ch = getopt_long(argc, argv, "ar", opts, NULL)) != -1)
		switch (ch) {
		case 'a':
			all = 1;
			break;
		case 'r':
			rec = 1;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&data_children[D_RM], argc, argv, err)) !=
	    0)
		return rc;
	if ((rc = parse_all(argc, argv, 0, &urls, err)) != 0)
		return rc;
	nu = argc;
	for (i = 0; i < nu && !rec; i++) {
		if (*urls[i].object == '\0') {
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid URL '%s': expected gs://bucket/object; "
			    "'data rm -r gs://%s' deletes the bucket and "
			    "every object in it",
			    argv[i], urls[i].bucket);
			goto out;
		}
		if (urls[i].object[strlen(urls[i].object) - 1] == '/') {
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid URL '%s': expected gs://bucket/object; "
			    "'data rm -r' deletes every object under a "
			    "prefix",
			    argv[i]);
			goto out;
		}
	}
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	/* wildcards first: a pattern matching nothing is refused before
	   anything is deleted (gsutil: "No URLs matched") */
	wl = xcalloc((size_t)nu, sizeof *wl);
	buf_init(&none, 4096);
	for (i = 0; i < nu && rc == 0; i++)
		if (gcs_has_wildcard(urls[i].object) &&
		    (rc = rm_expand(g, &urls[i], rec, all, &wl[i], err)) == 0 &&
		    wl[i].n == 0)
			buf_printf(&none, "%sgs://%s/%s", none.len ? ", " : "",
			    urls[i].bucket, urls[i].object);
	if (rc == 0 && none.len > 0)
		rc = tpu_error(err, TPU_E_NOTFOUND, "no URLs matched: %.*s",
		    (int)none.len, none.data);
	buf_release(&none);
	for (i = 0; i < nu && rc == 0; i++) {
		if (gcs_has_wildcard(urls[i].object)) {
			rc = rm_run(ctx, g, urls[i].bucket, &wl[i], all,
			    urls[i].object, "", err);
			continue;
		}
		if (rec || all) {
			rc = rm_tree(ctx, g, &urls[i], all, !rec, err);
			continue;
		}
		rc = gcs_delete(g, urls[i].bucket, urls[i].object, -1, err);
		if (rc != 0)
			rc = object_err(err, urls[i].bucket, urls[i].object);
		else if (!ctx->quiet) {
			char *shown = tpu_show_dup(urls[i].object, 0);

			fprintf(stderr, "Removing gs://%s/%s\n", urls[i].bucket,
			    shown);
			free(shown);
		}
	}
out:
	for (i = 0; wl != NULL && i < nu; i++) {
		size_t k;

		for (k = 0; k < wl[i].n; k++)
			free(wl[i].items[k].name);
		free(wl[i].items);
	}
	free(wl);
	gcs_close(g);
	free_all(urls, nu);
	return rc;
}

/* ---- mb ---- */

static int
data_mb(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "location", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	const char *loc = NULL, *project = NULL, *p;
	struct gcs_url u;
	struct gcs *g = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		switch (ch) {
		case 'L':
			loc = optarg;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&data_children[D_MB], argc, argv, err)) !=
	    0)
		return rc;
	if (loc != NULL) {
		for (p = loc; *p != '\0'; p++)
			if (!((*p >= 'a' && *p <= 'z') ||
			        (*p >= 'A' && *p <= 'Z') ||
			        (*p >= '0' && *p <= '9') || *p == '-'))
				break;
		if (*loc == '\0' || *p != '\0' || strlen(loc) > 64)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid location '%s': letters, digits and '-' "
			    "only (e.g. US, us-central1)",
			    loc);
	}
	if ((rc = parse_operand(argv[0], 0, &u, err)) != 0)
		return rc;
	if (*u.object != '\0') {
		rc = tpu_error(err, TPU_E_USAGE,
		    "invalid URL '%s': expected gs://bucket (no object name)",
		    argv[0]);
		goto out;
	}
	if ((rc = data_project(ctx, &project, err)) != 0)
		goto out;
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	rc = gcs_bucket_insert(g, project, u.bucket, loc, err);
	if (rc == TPU_E_CONFLICT)
		rc = tpu_error(err, TPU_E_CONFLICT,
		    "gs://%s: already exists (bucket names are global)",
		    u.bucket);
	else if (rc != 0)
		tpu_error_prefix(err, "gs://%s", u.bucket);
	else if (!ctx->quiet)
		fprintf(stderr, "Created gs://%s\n", u.bucket);
out:
	gcs_close(g);
	gcs_url_release(&u);
	return rc;
}

/* ---- stat ---- */

static void
stat_row(FILE *fp, const char *k, const char *v)
{
	if (v != NULL) {
		char *shown = tpu_show_dup(v, 0);

		fprintf(fp, "    %-24s%s\n", k, shown);
		free(shown);
	}
}

static void
stat_table(FILE *fp, const struct gcs_object *o)
{
	char n[32];

	{
		char *shown = tpu_show_dup(o->name, 0);

		fprintf(fp, "gs://%s/%s:\n", o->bucket, shown);
		free(shown);
	}
	stat_row(fp,
	    "Creation time:", json_opt_string(o->json, "timeCreated", NULL));
	stat_row(fp, "Update time:", o->updated);
	stat_row(fp,
	    "Storage class:", json_opt_string(o->json, "storageClass", NULL));
	snprintf(n, sizeof n, "%" PRId64, o->size);
	stat_row(fp, "Content-Length:", n);
	stat_row(fp, "Content-Type:", o->content_type);
	stat_row(fp, "Content-Encoding:",
	    json_opt_string(o->json, "contentEncoding", NULL));
	stat_row(fp, "Hash (crc32c):", o->crc32c_b64);
	stat_row(fp, "Hash (md5):", o->md5_b64);
	stat_row(fp, "ETag:", o->etag);
	snprintf(n, sizeof n, "%" PRId64, o->generation);
	stat_row(fp, "Generation:", n);
	snprintf(n, sizeof n, "%" PRId64, o->metageneration);
	stat_row(fp, "Metageneration:", n);
}

/* ---- du ---- */

struct du_state {
	const char *pattern; /* wildcards: names it matches */
	const char *want;    /* names == want or under want/ (NULL: all) */
	const char *bucket;
	int summary; /* -s: one line per URL */
	int json;    /* --format other than table */
	cJSON *arr;
	FILE *fp;
	int64_t bytes, n;
};

static int
du_cb(void *arg, const struct gcs_object *o, const char *prefix)
{
	struct du_state *d = arg;
	size_t n;

	(void)prefix;
	if (o == NULL)
		return 0;
	if (d->pattern != NULL && !gcs_wildcard_match(d->pattern, o->name))
		return 0;
	if (d->pattern == NULL && d->want != NULL) {
		n = strlen(d->want);
		if (strncmp(o->name, d->want, n) != 0 ||
		    (o->name[n] != '\0' && o->name[n] != '/'))
			return 0;
	}
	d->bytes += o->size;
	d->n++;
	if (d->summary)
		return 0;
	if (d->json) {
		cJSON *it = cJSON_CreateObject();
		char *url = xasprintf("gs://%s/%s", d->bucket, o->name);

		cJSON_AddStringToObject(it, "url", url);
		cJSON_AddNumberToObject(it, "bytes", (double)o->size);
		cJSON_AddItemToArray(d->arr, it);
		free(url);
	} else {
		char *shown = tpu_show_dup(o->name, 0);

		fprintf(d->fp, "%-12" PRId64 " gs://%s/%s\n", o->size,
		    d->bucket, shown);
		free(shown);
	}
	return 0;
}

/*
 * "du [-s] url ...": the bytes of every object under each URL (a bucket,
 * a prefix, an object, a wildcard pattern), as gsutil du; -s one total
 * per URL.  A URL that matches nothing is exit 4.
 */
static int
data_du(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "summarize", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct gcs_url *urls = NULL;
	struct gcs *g = NULL;
	struct du_state d;
	int ch, i, nu, rc, summary = 0;

	while ((ch = getopt_long(argc, argv, "s", opts, NULL)) != -1)
		if (ch == 's')
			summary = 1;
		else
			return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&data_children[D_DU], argc, argv, err)) !=
	    0)
		return rc;
	if ((rc = parse_all(argc, argv, 0, &urls, err)) != 0)
		return rc;
	nu = argc;
	memset(&d, 0, sizeof d);
	d.summary = summary;
	d.json = ctx->out.fmt != OUTPUT_TABLE;
	d.fp = ctx->out.fp;
	if (d.json)
		d.arr = cJSON_CreateArray();
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	for (i = 0; i < nu && rc == 0; i++) {
		struct gcs_list_opts lo;
		const char *obj = urls[i].object;
		size_t n = strlen(obj);
		char *pre = NULL;

		memset(&lo, 0, sizeof lo);
		d.bucket = urls[i].bucket;
		d.pattern = NULL;
		d.want = NULL;
		d.bytes = d.n = 0;
		if (gcs_has_wildcard(obj)) {
			pre = xstrndup(obj, gcs_wildcard_prefix(obj));
			lo.prefix = pre;
			d.pattern = obj;
		} else {
			lo.prefix = obj;
			if (n > 0 && obj[n - 1] != '/')
				d.want = obj;
		}
		rc = gcs_list(g, urls[i].bucket, &lo, du_cb, &d, err);
		free(pre);
		if (rc != 0) {
			tpu_error_prefix(err, "%s", argv[i]);
			break;
		}
		if (d.n == 0 && n > 0) {
			rc = tpu_error(err, TPU_E_NOTFOUND,
			    "%s: matched no objects", argv[i]);
			break;
		}
		if (summary && d.json) {
			cJSON *it = cJSON_CreateObject();

			cJSON_AddStringToObject(it, "url", argv[i]);
			cJSON_AddNumberToObject(it, "bytes", (double)d.bytes);
			cJSON_AddNumberToObject(it, "objects", (double)d.n);
			cJSON_AddItemToArray(d.arr, it);
		} else if (summary)
			fprintf(d.fp, "%-12" PRId64 " %s\n", d.bytes, argv[i]);
	}
	if (rc == 0 && d.json)
		rc = output_emit(&ctx->out, d.arr, NULL, err);
out:
	gcs_close(g);
	cJSON_Delete(d.arr);
	free_all(urls, nu);
	return rc;
}

static int
data_stat(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	struct gcs_url *urls = NULL;
	struct gcs *g = NULL;
	cJSON *arr = NULL;
	int ch, i, nu, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(
	         &data_children[D_STAT], argc, argv, err)) != 0)
		return rc;
	if ((rc = parse_all(argc, argv, 1, &urls, err)) != 0)
		return rc;
	nu = argc;
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	if (ctx->out.fmt != OUTPUT_TABLE)
		arr = cJSON_CreateArray();
	for (i = 0; i < nu && rc == 0; i++) {
		struct gcs_object o;

		if ((rc = gcs_stat(
		         g, urls[i].bucket, urls[i].object, 0, &o, err)) != 0) {
			rc = object_err(err, urls[i].bucket, urls[i].object);
			break;
		}
		if (arr != NULL)
			cJSON_AddItemToArray(arr, cJSON_Duplicate(o.json, 1));
		else
			stat_table(ctx->out.fp, &o);
		gcs_object_release(&o);
	}
	if (rc == 0 && arr != NULL)
		rc = output_emit(&ctx->out,
		    nu == 1 ? cJSON_GetArrayItem(arr, 0) : arr, NULL, err);
out:
	cJSON_Delete(arr);
	gcs_close(g);
	free_all(urls, nu);
	return rc;
}

/* ---- cat ---- */

struct cat_state {
	FILE *fp;
	uint32_t crc;
	int64_t got;
	int64_t size;
	int epipe, werr;
	char range[64];
	const char *hdrs[2];
};

static size_t
cat_write(const char *p, size_t n, void *arg)
{
	struct cat_state *c = arg;

	if (n == 0)
		return 0;
	if (fwrite(p, 1, n, c->fp) != n) {
		if (errno == EPIPE)
			c->epipe = 1;
		else
			c->werr = errno != 0 ? errno : EIO;
		return n + 1; /* anything but n aborts */
	}
	c->crc = crc32c_update(c->crc, p, n);
	c->got += (int64_t)n;
	return n;
}

/* A retry resumes where the bytes stopped (RELIABILITY.md R3). */
static int
cat_before_retry(void *arg, int *progressed, struct tpu_err *err)
{
	struct cat_state *c = arg;

	(void)err;
	if (c->got > 0) {
		snprintf(c->range, sizeof c->range, "Range: bytes=%" PRId64 "-",
		    c->got);
		c->hdrs[0] = c->range;
		c->hdrs[1] = NULL;
		*progressed = 1;
	}
	return 0;
}

static int
cat_one(struct tpu_ctx *ctx, struct gcs *g, const struct gcs_url *u, int *epipe,
    struct tpu_err *err)
{
	struct gcs_object o;
	struct http_request rq;
	struct http_response rs;
	struct cat_state c;
	char *url;
	int rc;

	if ((rc = gcs_stat(g, u->bucket, u->object, 0, &o, err)) != 0)
		return object_err(err, u->bucket, u->object);
	memset(&c, 0, sizeof c);
	c.fp = ctx->out.fp;
	c.size = o.size;
	memset(&rq, 0, sizeof rq);
	url = gcs_media_url(g, u->bucket, u->object, o.generation);
	rq.method = "GET";
	rq.url = url;
	rq.flags = HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN;
	rq.headers = c.hdrs;
	rq.write_cb = cat_write;
	rq.write_arg = &c;
	rq.before_retry = cat_before_retry;
	rq.retry_arg = &c;
	http_response_init(&rs);
	if (o.size > 0)
		rc = http_request(gcs_http(g), &rq, &rs, err);
	http_response_release(&rs);
	free(url);
	if (c.epipe) {
		*epipe = 1;
		rc = 0;
	} else if (c.werr != 0)
		rc = tpu_error(err, TPU_E_IO,
		    "write error on standard output: %s", strerror(c.werr));
	else if (rc != 0)
		rc = object_err(err, u->bucket, u->object);
	else if (c.got != o.size)
		rc = tpu_error(err, TPU_E_INTEGRITY,
		    "gs://%s/%s: got %" PRId64 " bytes, expected %" PRId64,
		    u->bucket, u->object, c.got, o.size);
	else if (o.has_crc32c && c.crc != o.crc32c) {
		char want[16], got[16];

		crc32c_base64(o.crc32c, want);
		crc32c_base64(c.crc, got);
		rc = tpu_error(err, TPU_E_INTEGRITY,
		    "gs://%s/%s: crc32c mismatch: the object has %s, the "
		    "bytes received have %s (the output is corrupt)",
		    u->bucket, u->object, want, got);
	}
	gcs_object_release(&o);
	return rc;
}

static int
data_cat(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 },
	};
	struct gcs_url *urls = NULL;
	struct gcs *g = NULL;
	int ch, i, nu, rc, epipe = 0;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		return cmd_bad_option(argv, ch, err);
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&data_children[D_CAT], argc, argv, err)) !=
	    0)
		return rc;
	if ((rc = parse_all(argc, argv, 1, &urls, err)) != 0)
		return rc;
	nu = argc;
	if ((rc = ctx_gcs_open(ctx, &g, err)) != 0)
		goto out;
	for (i = 0; i < nu && rc == 0 && !epipe; i++)
		rc = cat_one(ctx, g, &urls[i], &epipe, err);
out:
	gcs_close(g);
	free_all(urls, nu);
	if (epipe) {
		/* main's final flush sees EPIPE and ends quietly by
		   SIGPIPE, like any filter writing to a closed pipe */
		errno = EPIPE;
		return 0;
	}
	return rc;
}

const struct cmd_entry data_children[] = {
	[D_LS] = {
	    .name = "ls",
	    .usage = "data ls [-alr] url ...",
	    .summary = "list buckets' objects and prefixes",
	    .min_args = 1,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = data_ls,
	},
	[D_RM] = {
	    .name = "rm",
	    .usage = "data rm [-ar] url ...",
	    .summary = "delete objects (-r: under a prefix, or a bucket)",
	    .min_args = 1,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = data_rm,
	},
	[D_MB] = {
	    .name = "mb",
	    .usage = "data mb [--location location] url",
	    .summary = "create a bucket in the configured project",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_PROJECT,
	    .exec = data_mb,
	},
	[D_STAT] = {
	    .name = "stat",
	    .usage = "data stat url ...",
	    .summary = "show objects' metadata",
	    .min_args = 1,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = data_stat,
	},
	[D_CAT] = {
	    .name = "cat",
	    .usage = "data cat url ...",
	    .summary = "write objects to standard output (crc32c checked)",
	    .min_args = 1,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = data_cat,
	},
	[D_DU] = {
	    .name = "du",
	    .usage = "data du [-s] url ...",
	    .summary = "bytes used by objects (-s: one total per URL)",
	    .min_args = 1,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = data_du,
	},
	{
	    .name = "cp",
	    .usage = DATA_CP_USAGE,
	    .summary = "copy files and objects (local, gs://, gs:// to gs://)",
	    .min_args = 2,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = cmd_data_cp,
	},
	{
	    .name = "mv",
	    .usage = DATA_MV_USAGE,
	    .summary = "move files and objects (cp, then remove the sources)",
	    .min_args = 2,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = cmd_data_mv,
	},
	{
	    .name = "sync",
	    .usage = DATA_SYNC_USAGE,
	    .summary = "make a prefix or directory mirror another",
	    .min_args = 2,
	    .max_args = 2,
	    .flags = CMD_NEEDS_AUTH,
	    .exec = cmd_data_sync,
	},
	{ .name = NULL },
};

const struct cmd_entry cmd_data_entry = {
	.name = "data",
	.alias = NULL,
	.usage = "data ls|rm|mb|stat|cat|du|cp|mv|sync ...",
	.summary = "stage data in Cloud Storage buckets",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = data_children,
};
