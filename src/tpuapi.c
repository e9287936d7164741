/*
 * Cloud TPU API calls over src/http, page following and the
 * long-running-operation wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "endpoint.h"
#include "gcsurl.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "retry.h"
#include "tpuapi.h"
#include "util.h"
#include "xmalloc.h"

/* A reply larger than this is not a TPU API reply. */
#define TPUAPI_MAX_REPLY (32 << 20)

void
tpuapi_init(struct tpuapi *api, struct http *http, const char *base,
    const char *project)
{
	api->http = http;
	api->base = xstrdup(base);
	api->project = xstrdup(project);
	api->version = "v2";
}

void
tpuapi_release(struct tpuapi *api)
{
	free(api->base);
	free(api->project);
	api->base = api->project = NULL;
}

char *
tpuapi_node_path(const struct tpuapi *api, const char *zone, const char *node)
{
	return xasprintf(
	    "projects/%s/locations/%s/nodes/%s", api->project, zone, node);
}

const char *
tpuapi_basename(const char *name)
{
	const char *s = strrchr(name, '/');

	return s != NULL ? s + 1 : name;
}

int
tpuapi_call(struct tpuapi *api, const char *method, const char *path,
    const char *query, const cJSON *body, int idempotent, cJSON **out,
    struct tpu_err *err)
{
	struct http_request req;
	struct http_response resp;
	char *url = NULL, *rel = NULL, *text = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	rel = xasprintf("%s/%s%s%s", api->version, path,
	    query != NULL && *query != '\0' ? "?" : "",
	    query != NULL ? query : "");
	url = endpoint_join(api->base, rel);
	memset(&req, 0, sizeof req);
	req.method = method;
	req.url = url;
	if (body != NULL) {
		text = json_print(body, 0);
		req.body = text;
		req.body_len = strlen(text);
		req.content_type = "application/json";
	}
	if (idempotent || strcmp(method, "GET") == 0 ||
	    strcmp(method, "DELETE") == 0)
		req.flags |= HTTP_F_IDEMPOTENT;
	else
		req.flags |= HTTP_F_ONCE; /* a create is never sent twice */
	req.max_response = TPUAPI_MAX_REPLY;
	http_response_init(&resp);
	if ((rc = http_request(api->http, &req, &resp, err)) != 0)
		goto out;
	if (resp.dry_run || out == NULL)
		goto out;
	if (resp.body.len == 0) {
		*out = cJSON_CreateObject();
		goto out;
	}
	if ((*out = json_parse(
	         resp.body.data, resp.body.len, "TPU API reply", err)) == NULL)
		rc = err->code;
out:
	http_response_release(&resp);
	if (text != NULL)
		cJSON_free(text);
	free(rel);
	free(url);
	return rc;
}

int
tpuapi_list(struct tpuapi *api, const char *parent, const char *collection,
    const char *field, cJSON **out, struct tpu_err *err)
{
	return tpuapi_list_paged(api, parent, collection, field, 0, out, err);
}

int
tpuapi_list_paged(struct tpuapi *api, const char *parent,
    const char *collection, const char *field, int page_size, cJSON **out,
    struct tpu_err *err)
{
	cJSON *all = cJSON_CreateArray(), *page = NULL;
	char *token = NULL, *path = NULL, *query = NULL;
	int rc = 0, pages = 0;

	path = xasprintf("%s/%s", parent, collection);
	for (;;) {
		const cJSON *items, *it, *next;

		free(query);
		query = NULL;
		if (token != NULL) {
			char *enc = gcs_pct_encode(token);

			query = page_size > 0
			            ? xasprintf("pageSize=%d&pageToken=%s",
			                  page_size, enc)
			            : xasprintf("pageToken=%s", enc);
			free(enc);
		} else if (page_size > 0)
			query = xasprintf("pageSize=%d", page_size);
		if ((rc = tpuapi_call(
		         api, "GET", path, query, NULL, 1, &page, err)) != 0)
			goto out;
		items = cJSON_GetObjectItemCaseSensitive(page, field);
		if (items != NULL && !cJSON_IsArray(items)) {
			rc = tpu_error(err, TPU_E_API,
			    "list reply: field '%s' is not an array", field);
			goto out;
		}
		cJSON_ArrayForEach(it, items)
		    cJSON_AddItemToArray(all, cJSON_Duplicate(it, 1));
		next = cJSON_GetObjectItemCaseSensitive(page, "nextPageToken");
		free(token);
		token = NULL;
		if (cJSON_IsString(next) && *next->valuestring != '\0')
			token = xstrdup(next->valuestring);
		cJSON_Delete(page);
		page = NULL;
		if (token == NULL)
			break;
		if (++pages > 10000) {
			rc = tpu_error(err, TPU_E_API,
			    "list of %s did not end after 10000 pages", path);
			goto out;
		}
	}
	*out = all;
	all = NULL;
out:
	cJSON_Delete(all);
	cJSON_Delete(page);
	free(token);
	free(query);
	free(path);
	return rc;
}

int
tpuapi_zones(struct tpuapi *api, cJSON **out, struct tpu_err *err)
{
	cJSON *locs = NULL, *zones;
	const cJSON *it;
	char *parent;
	int rc;

	parent = xasprintf("projects/%s", api->project);
	rc = tpuapi_list(api, parent, "locations", "locations", &locs, err);
	free(parent);
	if (rc != 0)
		return rc;
	zones = cJSON_CreateArray();
	cJSON_ArrayForEach(it, locs)
	{
		const char *id = json_opt_string(it, "locationId", NULL);

		if (id == NULL)
			id = tpuapi_basename(json_opt_string(it, "name", ""));
		if (*id != '\0')
			cJSON_AddItemToArray(zones, cJSON_CreateString(id));
	}
	cJSON_Delete(locs);
	*out = zones;
	return 0;
}

/* The wait's progress hook, with the time since the wait began. */
struct progress {
	const struct tpuapi_wait *w;
	int64_t start;
};

static void
progress_begin(struct progress *p, const struct tpuapi_wait *w)
{
	p->w = w;
	p->start = tpu_now_ms();
	if (w->progress != NULL)
		w->progress(w->arg, TPUAPI_WAIT_BEGIN, NULL, 0);
}

static void
progress_show(struct progress *p, const char *state)
{
	if (p->w->progress != NULL)
		p->w->progress(p->w->arg, TPUAPI_WAIT_STATE, state,
		    tpu_now_ms() - p->start);
}

static void
progress_end(struct progress *p)
{
	if (p->w->progress != NULL)
		p->w->progress(
		    p->w->arg, TPUAPI_WAIT_END, NULL, tpu_now_ms() - p->start);
}

/* The resume hint ("check with '...'") from the hook, or NULL. */
static char *
resume_hint(const struct tpuapi_wait *w, enum tpuapi_wait_kind kind,
    const char *name, const char *zone)
{
	return w->resume != NULL ? w->resume(w->arg, kind, name, zone) : NULL;
}

static int
timed_out(struct tpu_err *err, const char *what, const char *resume)
{
	if (resume == NULL)
		return tpu_error(err, TPU_E_TIMEOUT,
		    "timed out waiting for %s; it may still succeed", what);
	return tpu_error(err, TPU_E_TIMEOUT,
	    "timed out waiting for %s; it may still succeed: check with '%s'",
	    what, resume);
}

static int
stopped(struct tpu_err *err, int rc, const char *what, const char *resume)
{
	if (resume == NULL)
		return tpu_error(err, (enum tpu_errc)rc,
		    "stopped waiting for %s (nothing was cancelled)", what);
	return tpu_error(err, (enum tpu_errc)rc,
	    "stopped waiting for %s (nothing was cancelled); resume with '%s'",
	    what, resume);
}

/*
 * Sleep until the next poll, within the deadline.  Returns 0, or
 * TPU_E_TIMEOUT / TPU_E_INTERRUPTED with a message naming what to resume.
 */
static int
poll_sleep(const struct tpuapi_wait *w, int64_t *interval, const char *what,
    const char *resume, struct tpu_err *err)
{
	int64_t wait = *interval, now = tpu_now_ms();
	int rc;

	if (w->deadline_ms > 0) {
		if (now >= w->deadline_ms)
			return timed_out(err, what, resume);
		if (now + wait > w->deadline_ms)
			wait = w->deadline_ms - now;
	}
	if ((rc = retry_sleep(wait, err)) != 0)
		return stopped(err, rc, what, resume);
	*interval = *interval * 3 / 2;
	if (*interval > 20000)
		*interval = 20000;
	return 0;
}

int
tpuapi_op_wait(struct tpuapi *api, const char *opname,
    const struct tpuapi_wait *w, cJSON **result, struct tpu_err *err)
{
	struct progress p;
	const cJSON *error;
	cJSON *op = NULL;
	char *what = NULL, *resume = NULL;
	int64_t interval = 1000;
	int rc;

	if (result != NULL)
		*result = NULL;
	progress_begin(&p, w);
	what = xasprintf("operation %s", tpuapi_basename(opname));
	resume = resume_hint(
	    w, TPUAPI_WAIT_OPERATION, tpuapi_basename(opname), w->zone);
	for (;;) {
		if ((rc = tpuapi_call(
		         api, "GET", opname, NULL, NULL, 1, &op, err)) != 0) {
			if (rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED)
				stopped(err, rc, what, resume);
			else if (rc == TPU_E_TRANSIENT && w->deadline_ms > 0 &&
			         tpu_now_ms() >= w->deadline_ms)
				rc = timed_out(err, what, resume);
			goto out;
		}
		if (json_opt_bool(op, "done", 0))
			break;
		progress_show(&p, "running");
		cJSON_Delete(op);
		op = NULL;
		if ((rc = poll_sleep(w, &interval, what, resume, err)) != 0)
			goto out;
	}
	progress_end(&p);
	if ((error = cJSON_GetObjectItemCaseSensitive(op, "error")) != NULL) {
		long long code = json_opt_int64(error, "code", 2);

		rc = tpu_error(err, TPU_E_OPERATION,
		    "%s failed%s%s: %s (code %lld)", what,
		    w->zone != NULL ? " in zone " : "",
		    w->zone != NULL ? w->zone : "",
		    json_opt_string(error, "message", "no message"), code);
		goto out;
	}
	if (result != NULL) {
		cJSON *r =
		    cJSON_DetachItemFromObjectCaseSensitive(op, "response");

		*result = r;
	}
	rc = 0;
out:
	if (rc != 0)
		progress_end(&p);
	cJSON_Delete(op);
	free(what);
	free(resume);
	return rc;
}

int
tpuapi_node_wait_ready(struct tpuapi *api, const char *zone, const char *name,
    const struct tpuapi_wait *w, cJSON **nodep, struct tpu_err *err)
{
	struct progress p;
	cJSON *node = NULL;
	char *path, *what, *resume;
	int64_t interval = 1000;
	int rc;

	if (nodep != NULL)
		*nodep = NULL;
	progress_begin(&p, w);
	path = tpuapi_node_path(api, zone, name);
	what = xasprintf("node '%s'", name);
	resume = resume_hint(w, TPUAPI_WAIT_NODE, name, zone);
	for (;;) {
		const char *state, *health;
		char line[96];

		if ((rc = tpuapi_call(
		         api, "GET", path, NULL, NULL, 1, &node, err)) != 0)
			goto out;
		state = json_opt_string(node, "state", "STATE_UNSPECIFIED");
		health = json_opt_string(node, "health", NULL);
		if (strcmp(state, "READY") == 0 &&
		    (health == NULL || strcmp(health, "HEALTHY") == 0))
			break;
		if (strcmp(state, "PREEMPTED") == 0 ||
		    strcmp(state, "TERMINATED") == 0 ||
		    strcmp(state, "STOPPED") == 0 ||
		    strcmp(state, "DELETING") == 0) {
			rc = tpu_error(err, TPU_E_OPERATION,
			    "node '%s' in zone %s is %s instead of READY", name,
			    zone, state);
			goto out;
		}
		snprintf(line, sizeof line, "%s%s%s", state,
		    health != NULL ? ", " : "", health != NULL ? health : "");
		progress_show(&p, line);
		cJSON_Delete(node);
		node = NULL;
		if ((rc = poll_sleep(w, &interval, what, resume, err)) != 0)
			goto out;
	}
	if (nodep != NULL) {
		*nodep = node;
		node = NULL;
	}
out:
	progress_end(&p);
	cJSON_Delete(node);
	free(path);
	free(what);
	free(resume);
	return rc;
}
