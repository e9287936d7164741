/*
 * Cloud Storage JSON API client primitives; see gcs.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "endpoint.h"
#include "gcs.h"
#include "gcsurl.h"
#include "http.h"
#include "json.h"
#include "retry.h"
#include "util.h"
#include "xmalloc.h"

/*
 * The token source shared by a handle and its clones.  The caller's
 * source (auth.c's cache, fetching over the caller's http handle) is not
 * thread safe, so every call goes through this mutex.
 */
struct gcs_shared {
	pthread_mutex_t mu;
	http_token_fn fn;
	void *arg;
	int refs;
};

struct gcs {
	struct gcs_shared *sh;
	struct http *http;
	char *base; /* ends in '/' */
	struct http_opts opts;
};

static int
shared_token(void *arg, int force, char **token, struct tpu_err *err)
{
	struct gcs_shared *sh = arg;
	int rc;

	pthread_mutex_lock(&sh->mu);
	rc = sh->fn(sh->arg, force, token, err);
	pthread_mutex_unlock(&sh->mu);
	return rc;
}

static int
handle_new(struct gcs_shared *sh, const char *base, const struct http_opts *o,
    struct gcs **out, struct tpu_err *err)
{
	struct gcs *g = xcalloc(1, sizeof *g);

	g->opts = *o;
	if ((g->http = http_new(&g->opts, err)) == NULL) {
		free(g);
		return err->code;
	}
	http_set_token_source(g->http, shared_token, sh);
	g->base = xstrdup(base);
	g->sh = sh;
	pthread_mutex_lock(&sh->mu);
	sh->refs++;
	pthread_mutex_unlock(&sh->mu);
	*out = g;
	return 0;
}

int
gcs_open(const char *base, const struct http_opts *o, http_token_fn fn,
    void *token_arg, struct gcs **out, struct tpu_err *err)
{
	struct gcs_shared *sh;
	int rc;

	*out = NULL;
	sh = xcalloc(1, sizeof *sh);
	pthread_mutex_init(&sh->mu, NULL);
	sh->fn = fn;
	sh->arg = token_arg;
	rc = handle_new(sh, base, o, out, err);
	if (rc != 0) {
		pthread_mutex_destroy(&sh->mu);
		free(sh);
	}
	return rc;
}

int
gcs_clone(struct gcs *g, struct gcs **out, struct tpu_err *err)
{
	*out = NULL;
	return handle_new(g->sh, g->base, &g->opts, out, err);
}

void
gcs_close(struct gcs *g)
{
	int last;

	if (g == NULL)
		return;
	http_free(g->http);
	free(g->base);
	pthread_mutex_lock(&g->sh->mu);
	last = --g->sh->refs == 0;
	pthread_mutex_unlock(&g->sh->mu);
	if (last) {
		pthread_mutex_destroy(&g->sh->mu);
		free(g->sh);
	}
	free(g);
}

const char *
gcs_base(const struct gcs *g)
{
	return g->base;
}

struct http *
gcs_http(struct gcs *g)
{
	return g->http;
}

void
gcs_object_release(struct gcs_object *o)
{
	if (o == NULL)
		return;
	free(o->bucket);
	free(o->name);
	free(o->content_type);
	free(o->md5_b64);
	free(o->crc32c_b64);
	free(o->etag);
	free(o->updated);
	cJSON_Delete(o->json);
	memset(o, 0, sizeof *o);
}

static char *
opt_dup(const cJSON *j, const char *k)
{
	const char *s = json_opt_string(j, k, NULL);

	return s != NULL ? xstrdup(s) : NULL;
}

static int
int_field(const cJSON *j, const char *k, int64_t *v, struct tpu_err *err)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, k);
	long long n;

	*v = 0;
	if (f == NULL)
		return 0;
	if (json_as_int64(f, &n) != 0 || n < 0)
		return tpu_error(err, TPU_E_API,
		    "object resource: field '%s' is not a non-negative "
		    "integer",
		    k);
	*v = (int64_t)n;
	return 0;
}

int
gcs_object_from_json(const cJSON *j, struct gcs_object *o, struct tpu_err *err)
{
	const char *name, *bucket;
	int rc;

	memset(o, 0, sizeof *o);
	if (!cJSON_IsObject(j))
		return tpu_error(
		    err, TPU_E_API, "object resource: not a JSON object");
	name = json_opt_string(j, "name", NULL);
	bucket = json_opt_string(j, "bucket", NULL);
	if (name == NULL || *name == '\0' || bucket == NULL || *bucket == '\0')
		return tpu_error(err, TPU_E_API,
		    "object resource: missing 'name' or 'bucket'");
	if ((rc = int_field(j, "size", &o->size, err)) != 0 ||
	    (rc = int_field(j, "generation", &o->generation, err)) != 0 ||
	    (rc = int_field(j, "metageneration", &o->metageneration, err)) != 0)
		return rc;
	o->crc32c_b64 = opt_dup(j, "crc32c");
	if (o->crc32c_b64 != NULL) {
		if (crc32c_parse_base64(o->crc32c_b64, &o->crc32c) != 0) {
			rc = tpu_error(err, TPU_E_API,
			    "object resource: bad crc32c '%s'", o->crc32c_b64);
			gcs_object_release(o);
			return rc;
		}
		o->has_crc32c = 1;
	}
	o->name = xstrdup(name);
	o->bucket = xstrdup(bucket);
	o->content_type = opt_dup(j, "contentType");
	o->md5_b64 = opt_dup(j, "md5Hash");
	o->etag = opt_dup(j, "etag");
	o->updated = opt_dup(j, "updated");
	o->json = cJSON_Duplicate(j, 1);
	return 0;
}

char *
gcs_object_url(const char *base, const char *bucket, const char *name)
{
	char *b = gcs_pct_encode(bucket), *n = gcs_pct_encode(name), *u;

	u = xasprintf("%sstorage/v1/b/%s/o/%s", base, b, n);
	free(b);
	free(n);
	return u;
}

char *
gcs_media_url(
    const struct gcs *g, const char *bucket, const char *name, int64_t gen)
{
	char *o = gcs_object_url(g->base, bucket, name), *u;

	if (gen > 0)
		u = xasprintf(
		    "%s?alt=media&generation=%lld", o, (long long)gen);
	else
		u = xasprintf("%s?alt=media", o);
	free(o);
	return u;
}

/* A JSON request; *out (when not NULL) gets the parsed reply. */
static int
call(struct gcs *g, const char *method, const char *url, const cJSON *body,
    int flags, cJSON **out, const char *what, struct tpu_err *err)
{
	struct http_request rq;
	struct http_response rs;
	char *b = body != NULL ? json_print(body, 0) : NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.url = url;
	rq.body = b;
	rq.body_len = b != NULL ? strlen(b) : 0;
	rq.flags = flags;
	http_response_init(&rs);
	rc = http_request(g->http, &rq, &rs, err);
	if (rc == 0 && out != NULL && !rs.dry_run) {
		*out = json_parse(rs.body.data, rs.body.len, what, err);
		if (*out == NULL)
			rc = err->code;
	}
	http_response_release(&rs);
	free(b);
	return rc;
}

int
gcs_stat(struct gcs *g, const char *bucket, const char *name, int64_t gen,
    struct gcs_object *o, struct tpu_err *err)
{
	char *u = gcs_object_url(g->base, bucket, name), *url;
	cJSON *j;
	int rc;

	memset(o, 0, sizeof *o);
	if (gen > 0)
		url = xasprintf("%s?generation=%lld", u, (long long)gen);
	else
		url = xstrdup(u);
	free(u);
	rc = call(g, "GET", url, NULL, HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN, &j,
	    "object resource", err);
	free(url);
	if (rc != 0)
		return rc;
	rc = gcs_object_from_json(j, o, err);
	cJSON_Delete(j);
	return rc;
}

/* maxResults: want when > 0, else TPUCTL_GCS_PAGE_SIZE (tests), else 1000 */
static long long
page_size(int want)
{
	const char *ps = getenv("TPUCTL_GCS_PAGE_SIZE"), *errstr;
	long long page = 1000;

	if (want > 0)
		page = want;
	else if (ps != NULL && *ps != '\0') {
		page = tpu_strtonum(ps, 1, 1000, &errstr);
		if (errstr != NULL)
			page = 1000;
	}
	return page;
}

/*
 * GET one page of a list: u (released here) with "&pageToken=" *token
 * when there is one (*token freed and NULL after); *j the reply.
 */
static int
get_page(struct gcs *g, struct buf *u, char **token, cJSON **j,
    const char *what, struct tpu_err *err)
{
	char *e;
	int rc;

	if (*token != NULL) {
		e = gcs_pct_encode(*token);
		buf_printf(u, "&pageToken=%s", e);
		free(e);
	}
	rc = call(g, "GET", u->data, NULL, HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN,
	    j, what, err);
	buf_release(u);
	free(*token);
	*token = NULL;
	return rc;
}

/* The token of the page after reply j, or NULL on the last page. */
static char *
next_token(const cJSON *j)
{
	const char *next = json_opt_string(j, "nextPageToken", NULL);

	return next != NULL && *next != '\0' ? xstrdup(next) : NULL;
}

/* One page's reply j, handed to a list's caller; non-zero stops the walk. */
typedef int (*page_fn)(void *ctx, const cJSON *j, struct tpu_err *err);

/*
 * Walk every page of the list at url (its query already begun with "?"):
 * fn on each reply, then the next page while there is one.
 */
static int
list_pages(struct gcs *g, const char *url, const char *what, page_fn fn,
    void *ctx, struct tpu_err *err)
{
	char *token = NULL;
	int rc = 0;

	for (;;) {
		struct buf u;
		cJSON *j;

		buf_init(&u, 0);
		buf_puts(&u, url);
		if ((rc = get_page(g, &u, &token, &j, what, err)) != 0)
			break;
		rc = fn(ctx, j, err);
		if (rc == 0)
			token = next_token(j);
		cJSON_Delete(j);
		if (rc != 0 || token == NULL)
			break;
	}
	free(token);
	return rc;
}

struct objects_ctx {
	gcs_list_fn fn;
	void *arg;
};

/* An objects page: its prefixes, then its items. */
static int
objects_page(void *ctx, const cJSON *j, struct tpu_err *err)
{
	struct objects_ctx *c = ctx;
	const cJSON *it;
	int rc;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "prefixes"))
	{
		if (!cJSON_IsString(it))
			continue;
		if ((rc = c->fn(c->arg, NULL, it->valuestring)) != 0)
			return rc;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "items"))
	{
		struct gcs_object o;

		if ((rc = gcs_object_from_json(it, &o, err)) != 0)
			return rc;
		rc = c->fn(c->arg, &o, NULL);
		gcs_object_release(&o);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
gcs_list(struct gcs *g, const char *bucket, const struct gcs_list_opts *lo,
    gcs_list_fn fn, void *arg, struct tpu_err *err)
{
	struct objects_ctx c = { fn, arg };
	char *b = gcs_pct_encode(bucket), *e;
	struct buf u;
	int rc;

	buf_init(&u, 0);
	buf_printf(&u, "%sstorage/v1/b/%s/o?maxResults=%lld", g->base, b,
	    page_size(lo != NULL ? lo->page_size : 0));
	if (lo != NULL && lo->prefix != NULL && *lo->prefix != '\0') {
		e = gcs_pct_encode(lo->prefix);
		buf_printf(&u, "&prefix=%s", e);
		free(e);
	}
	if (lo != NULL && lo->delimiter != NULL) {
		e = gcs_pct_encode(lo->delimiter);
		buf_printf(&u, "&delimiter=%s", e);
		free(e);
	}
	if (lo != NULL && lo->versions)
		buf_puts(&u, "&versions=true");
	rc = list_pages(g, u.data, "objects list", objects_page, &c, err);
	buf_release(&u);
	free(b);
	return rc;
}

/* DELETE of an object, with "?param=gen" when gen >= 0 */
static int
delete_object(struct gcs *g, const char *bucket, const char *name,
    const char *param, int64_t gen, struct tpu_err *err)
{
	char *u = gcs_object_url(g->base, bucket, name), *url;
	int rc;

	/* a retried DELETE that already happened answers 404: the caller
	   sees "not found", which for rm is the truthful end state */
	if (gen >= 0)
		url = xasprintf("%s?%s=%lld", u, param, (long long)gen);
	else
		url = xstrdup(u);
	free(u);
	rc = call(g, "DELETE", url, NULL, HTTP_F_IDEMPOTENT, NULL, NULL, err);
	free(url);
	return rc;
}

int
gcs_delete(struct gcs *g, const char *bucket, const char *name, int64_t ifgen,
    struct tpu_err *err)
{
	return delete_object(g, bucket, name, "ifGenerationMatch", ifgen, err);
}

int
gcs_delete_version(struct gcs *g, const char *bucket, const char *name,
    int64_t generation, struct tpu_err *err)
{
	return delete_object(g, bucket, name, "generation", generation, err);
}

int
gcs_bucket_delete(struct gcs *g, const char *bucket, struct tpu_err *err)
{
	char *b = gcs_pct_encode(bucket), *url;
	int rc;

	url = xasprintf("%sstorage/v1/b/%s", g->base, b);
	rc = call(g, "DELETE", url, NULL, HTTP_F_IDEMPOTENT, NULL, NULL, err);
	free(url);
	free(b);
	return rc;
}

int
gcs_bucket_insert(struct gcs *g, const char *project, const char *bucket,
    const char *location, struct tpu_err *err)
{
	cJSON *body = cJSON_CreateObject();
	char *p = gcs_pct_encode(project), *url;
	int rc;

	cJSON_AddStringToObject(body, "name", bucket);
	if (location != NULL)
		cJSON_AddStringToObject(body, "location", location);
	url = xasprintf("%sstorage/v1/b?project=%s", g->base, p);
	/* a replayed insert that succeeded answers 409: idempotent enough
	   for the caller, which reports "already exists" */
	rc = call(g, "POST", url, body, HTTP_F_IDEMPOTENT, NULL, NULL, err);
	free(url);
	free(p);
	cJSON_Delete(body);
	return rc;
}

struct buckets_ctx {
	gcs_bucket_fn fn;
	void *arg;
};

/* A buckets page: each item, which must have a name. */
static int
buckets_page(void *ctx, const cJSON *j, struct tpu_err *err)
{
	struct buckets_ctx *c = ctx;
	const cJSON *it;
	int rc;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "items"))
	{
		if (json_opt_string(it, "name", NULL) == NULL)
			return tpu_error(err, TPU_E_API,
			    "buckets list: an item has no name");
		if ((rc = c->fn(c->arg, it)) != 0)
			return rc;
	}
	return 0;
}

int
gcs_bucket_list(struct gcs *g, const char *project, gcs_bucket_fn fn, void *arg,
    struct tpu_err *err)
{
	struct buckets_ctx c = { fn, arg };
	char *p = gcs_pct_encode(project), *url;
	int rc;

	url = xasprintf("%sstorage/v1/b?project=%s&maxResults=%lld", g->base, p,
	    page_size(0));
	rc = list_pages(g, url, "buckets list", buckets_page, &c, err);
	free(url);
	free(p);
	return rc;
}

int
gcs_bucket_get(
    struct gcs *g, const char *bucket, cJSON **out, struct tpu_err *err)
{
	char *b = gcs_pct_encode(bucket), *url;
	int rc;

	url = xasprintf("%sstorage/v1/b/%s", g->base, b);
	rc = call(g, "GET", url, NULL, HTTP_F_IDEMPOTENT | HTTP_F_NODRYRUN, out,
	    "bucket resource", err);
	free(url);
	free(b);
	return rc;
}

static int
reply_object(
    cJSON *j, const char *key, struct gcs_object *out, struct tpu_err *err)
{
	const cJSON *r =
	    key != NULL ? cJSON_GetObjectItemCaseSensitive(j, key) : j;

	if (out == NULL)
		return 0;
	return gcs_object_from_json(r, out, err);
}

int
gcs_rewrite(struct gcs *g, const char *sbucket, const char *sname, int64_t sgen,
    const char *dbucket, const char *dname, int64_t ifgen,
    struct gcs_object *out, struct tpu_err *err)
{
	char *src = gcs_object_url(g->base, sbucket, sname), *dst,
	     *token = NULL;
	int rc, flags = ifgen >= 0 ? HTTP_F_IDEMPOTENT : 0;
	cJSON *j = NULL;

	if (out != NULL)
		memset(out, 0, sizeof *out);
	{
		char *db = gcs_pct_encode(dbucket), *dn = gcs_pct_encode(dname);

		dst = xasprintf("/rewriteTo/b/%s/o/%s", db, dn);
		free(db);
		free(dn);
	}
	for (;;) {
		struct buf u;
		const char *t;
		char sep = '?';

		buf_init(&u, 0);
		buf_printf(&u, "%s%s", src, dst);
		if (sgen > 0) {
			buf_printf(&u, "%csourceGeneration=%lld", sep,
			    (long long)sgen);
			sep = '&';
		}
		if (ifgen >= 0) {
			buf_printf(&u, "%cifGenerationMatch=%lld", sep,
			    (long long)ifgen);
			sep = '&';
		}
		if (token != NULL) {
			char *e = gcs_pct_encode(token);

			buf_printf(&u, "%crewriteToken=%s", sep, e);
			free(e);
		}
		rc = call(
		    g, "POST", u.data, NULL, flags, &j, "rewrite reply", err);
		buf_release(&u);
		free(token);
		token = NULL;
		if (rc != 0 || j == NULL)
			break;
		if (json_opt_bool(j, "done", 0)) {
			rc = reply_object(j, "resource", out, err);
			break;
		}
		t = json_opt_string(j, "rewriteToken", NULL);
		if (t == NULL || *t == '\0') {
			rc = tpu_error(err, TPU_E_API,
			    "rewrite reply: not done and no rewriteToken");
			break;
		}
		token = xstrdup(t);
		cJSON_Delete(j);
		j = NULL;
	}
	cJSON_Delete(j);
	free(src);
	free(dst);
	return rc;
}

int
gcs_compose(struct gcs *g, const char *bucket, const char *const *names,
    const int64_t *generations, size_t n, const char *dst,
    const char *content_type, int64_t ifgen, struct gcs_object *out,
    struct tpu_err *err)
{
	cJSON *body, *arr, *dest, *j = NULL;
	char *u, *url;
	size_t i;
	int rc;

	if (out != NULL)
		memset(out, 0, sizeof *out);
	if (n == 0 || n > 32)
		return tpu_error(err, TPU_E_INVALID,
		    "compose: %zu sources (1 to 32 allowed)", n);
	body = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(body, "sourceObjects");
	for (i = 0; i < n; i++) {
		cJSON *s = cJSON_CreateObject();

		cJSON_AddStringToObject(s, "name", names[i]);
		if (generations != NULL && generations[i] > 0) {
			char gen[32];

			snprintf(
			    gen, sizeof gen, "%lld", (long long)generations[i]);
			cJSON_AddStringToObject(s, "generation", gen);
		}
		cJSON_AddItemToArray(arr, s);
	}
	dest = cJSON_AddObjectToObject(body, "destination");
	cJSON_AddStringToObject(dest, "bucket", bucket);
	cJSON_AddStringToObject(dest, "name", dst);
	if (content_type != NULL)
		cJSON_AddStringToObject(dest, "contentType", content_type);
	u = gcs_object_url(g->base, bucket, dst);
	if (ifgen >= 0)
		url = xasprintf(
		    "%s/compose?ifGenerationMatch=%lld", u, (long long)ifgen);
	else
		url = xasprintf("%s/compose", u);
	free(u);
	rc = call(g, "POST", url, body, ifgen >= 0 ? HTTP_F_IDEMPOTENT : 0, &j,
	    "compose reply", err);
	if (rc == 0 && j != NULL)
		rc = reply_object(j, NULL, out, err);
	cJSON_Delete(j);
	cJSON_Delete(body);
	free(url);
	return rc;
}
