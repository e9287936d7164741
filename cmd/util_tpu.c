/*
 * Shared plumbing of the Cloud TPU commands.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "catalog.h"
#include "cmd.h"
#include "config.h"
#include "endpoint.h"
#include "http.h"
#include "json.h"
#include "nodecache.h"
#include "output.h"
#include "resfilter.h"
#include "resproj.h"
#include "log.h"
#include "retry.h"
#include "tpucmd.h"
#include "tpuvalid.h"
#include "util.h"
#include "xmalloc.h"

int
tpucmd_open(struct tpu_ctx *ctx, struct tpucmd *tc, struct tpu_err *err)
{
	struct http *http;
	char *base;
	int rc, flags = cmd_needs();

	memset(tc, 0, sizeof *tc);
	if (!(flags & CMD_NEEDS_AUTH)) /* the API client carries credentials */
		return tpu_error(err, TPU_E_INTERNAL,
		    "'%s' opens the TPU API but its entry does not declare "
		    "CMD_NEEDS_AUTH",
		    cmd_current_path());
	if (!(flags & (CMD_NEEDS_PROJECT | CMD_NEEDS_ZONE)))
		return tpu_error(err, TPU_E_INTERNAL,
		    "'%s' opens the TPU API but its entry declares neither "
		    "CMD_NEEDS_PROJECT nor CMD_NEEDS_ZONE",
		    cmd_current_path());
	tc->project = config_get(ctx->cfg, "core/project");
	if (tc->project == NULL || *tc->project == '\0')
		return tpu_error(err, TPU_E_USAGE,
		    "no project: pass --project, set CLOUDSDK_CORE_PROJECT, "
		    "or run 'tpuctl config set core/project PROJECT'");
	if ((rc = catalog_project_validate(tc->project, err)) != 0)
		return rc;
	if (flags & CMD_NEEDS_ZONE) {
		tc->zone = config_get(ctx->cfg, "compute/zone");
		if (tc->zone == NULL || *tc->zone == '\0')
			return tpu_error(err, TPU_E_USAGE,
			    "no zone: pass --zone, set CLOUDSDK_COMPUTE_ZONE, "
			    "or run 'tpuctl config set compute/zone ZONE'");
		if (strcmp(tc->zone, "-") == 0) {
			if (!(flags & CMD_ZONE_ANY))
				return tpu_error(err, TPU_E_USAGE,
				    "--zone - (every zone) is only valid for "
				    "list commands");
		} else if ((rc = catalog_zone_validate(tc->zone, err)) != 0)
			return rc;
	}
	if ((base = endpoint_base(ctx->cfg, ENDPOINT_TPU, err)) == NULL)
		return err->code;
	if ((rc = ctx_http(ctx, &http, err)) != 0) {
		free(base);
		return rc;
	}
	tpuapi_init(&tc->api, http, base, tc->project);
	free(base);
	tc->opened = 1;
	/* Ctrl-C stops waits and retries cleanly (exit 130), never a
	 * half-printed state; no cloud operation is ever cancelled. */
	retry_install_signals();
	return 0;
}

void
tpucmd_close(struct tpucmd *tc)
{
	if (tc->opened)
		tpuapi_release(&tc->api);
	tc->opened = 0;
}

int
tpucmd_confirm(struct tpu_ctx *ctx, const char *question, struct tpu_err *err)
{
	char line[64];

	if (ctx->quiet || !isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
		return 0;
	fprintf(stderr, "%s [y/N] ", question);
	fflush(stderr);
	if (fgets(line, sizeof line, stdin) != NULL &&
	    (line[0] == 'y' || line[0] == 'Y'))
		return 0;
	return tpu_error(err, TPU_E_DECLINED, "declined: nothing was done");
}

int
tpucmd_deadline(const char *arg, int64_t *deadline_ms, struct tpu_err *err)
{
	long long secs;
	int rc;

	*deadline_ms = 0;
	if (arg == NULL)
		return 0;
	if ((rc = tpu_parse_duration("--timeout", arg, &secs, err)) != 0)
		return rc;
	if (secs == 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid --timeout '%s': must be more than 0", arg);
	*deadline_ms = tpu_now_ms() + secs * 1000;
	return 0;
}

/* The progress hook of a command's wait: drawn on stderr. */
static void
wait_progress(
    void *arg, enum tpuapi_wait_event ev, const char *state, int64_t elapsed_ms)
{
	static const char spin[] = "|/-\\";
	struct tpucmd_wait *w = arg;
	FILE *fp = stderr;
	long long secs = (long long)(elapsed_ms / 1000);

	switch (ev) {
	case TPUAPI_WAIT_BEGIN:
		w->last[0] = '\0';
		w->spun = 0;
		return;
	case TPUAPI_WAIT_END:
		if (w->tty && w->spun > 0 && !w->quiet)
			fprintf(fp, "\r\033[K");
		return;
	case TPUAPI_WAIT_STATE:
		break;
	}
	if (w->quiet || w->what == NULL)
		return;
	if (w->tty) {
		fprintf(fp, "\r%c %s: %s (%llds)\033[K", spin[w->spun++ % 4],
		    w->what, state, secs);
		fflush(fp);
		return;
	}
	if (strcmp(state, w->last) != 0) {
		fprintf(fp, "tpuctl: %s: %s (%llds)\n", w->what, state, secs);
		snprintf(w->last, sizeof w->last, "%s", state);
	}
}

/* The resume hook: the tpuctl command that takes the wait up again. */
static char *
wait_resume(
    void *arg, enum tpuapi_wait_kind kind, const char *name, const char *zone)
{
	(void)arg;
	if (kind == TPUAPI_WAIT_NODE)
		return xasprintf("tpuctl describe %s --zone %s", name,
		    zone != NULL ? zone : "");
	return xasprintf("tpuctl operations wait %s%s%s", name,
	    zone != NULL ? " --zone " : "", zone != NULL ? zone : "");
}

void
tpucmd_wait_opts(struct tpu_ctx *ctx, struct tpucmd *tc, struct tpucmd_wait *w,
    int64_t deadline_ms, const char *what)
{
	memset(w, 0, sizeof *w);
	w->api.deadline_ms = deadline_ms;
	w->api.zone = tc->zone;
	w->api.progress = wait_progress;
	w->api.resume = wait_resume;
	w->api.arg = w;
	w->tty = isatty(STDERR_FILENO);
	w->quiet = ctx->quiet;
	w->what = what;
}

/* Set key from a full name: an explicit flag naming another is an error. */
static int
name_sets(struct tpu_ctx *ctx, const char *key, const char *flag,
    const char *full, const char *v, size_t len, struct tpu_err *err)
{
	const char *cur = config_get(ctx->cfg, key);
	char *val = xstrndup(v, len);

	if (config_layer_of(ctx->cfg, key) == CONFIG_FLAG && cur != NULL &&
	    strcmp(cur, val) != 0) {
		tpu_error(err, TPU_E_USAGE,
		    "'%s' is in %s %s, but %s is %s: give one or make them "
		    "agree",
		    full, flag + 2, val, flag, cur);
		free(val);
		return TPU_E_USAGE;
	}
	config_set_flag(ctx->cfg, key, val);
	free(val);
	return 0;
}

/*
 * A short name given without --zone that the node cache knows in one
 * other zone only (and not in the configured one): use that zone, and
 * say so once.
 */
static void
cached_zone(struct tpu_ctx *ctx, int kinds, const char *name)
{
	const char *project = config_get(ctx->cfg, "core/project");
	const char *zone = config_get(ctx->cfg, "compute/zone");
	cJSON *zones, *qrs = NULL, *it;
	const char *z;

	if (project == NULL ||
	    config_layer_of(ctx->cfg, "compute/zone") == CONFIG_FLAG)
		return;
	zones = nodecache_zones(project, name, 0, NODECACHE_ZONE_TTL_MS);
	if (kinds & TPUCMD_NAME_QR) {
		qrs = nodecache_zones(project, name, 1, NODECACHE_ZONE_TTL_MS);
		while ((it = cJSON_DetachItemFromArray(qrs, 0)) != NULL)
			cJSON_AddItemToArray(zones, it);
	}
	z = cJSON_GetStringValue(cJSON_GetArrayItem(zones, 0));
	if (z != NULL && (zone == NULL || strcmp(z, zone) != 0)) {
		int n = 0, here = 0;

		cJSON_ArrayForEach(it, zones)
		{
			n += strcmp(it->valuestring, z) != 0;
			here |=
			    zone != NULL && strcmp(it->valuestring, zone) == 0;
		}
		if (n == 0 && !here) {
			if (!ctx->quiet)
				fprintf(stderr,
				    "tpuctl: '%s' is in zone %s (node cache): "
				    "using that zone (--zone chooses "
				    "another)\n",
				    name, z);
			config_set_flag(ctx->cfg, "compute/zone", z);
		}
	}
	cJSON_Delete(qrs);
	cJSON_Delete(zones);
}

int
tpucmd_where(struct tpucmd *tc, const char *collection, const char *id,
    const char *not_in, struct buf *out)
{
	struct tpu_err e;
	cJSON *items = NULL, *it, *zones, *z;
	char *parent;
	int rc, n = 0;

	tpu_err_init(&e);
	parent = xasprintf("projects/%s/locations/-", tc->project);
	rc = tpuapi_list(&tc->api, parent, collection, collection, &items, &e);
	free(parent);
	if (rc != 0) {
		log_debug("%s in every zone: not listed (%d)", collection, rc);
		cJSON_Delete(items);
		return 0;
	}
	zones = cJSON_CreateArray();
	cJSON_ArrayForEach(it, items)
	{
		const char *name = json_opt_string(it, "name", "");
		const char *last = strrchr(name, '/');
		char zone[128];
		int i = 0, c = 1;

		if (last == NULL || strcmp(last + 1, id) != 0)
			continue;
		tpucmd_zone_of(name, zone, sizeof zone);
		if (zone[0] == '\0' ||
		    (not_in != NULL && strcmp(zone, not_in) == 0))
			continue;
		cJSON_ArrayForEach(z, zones)
		{
			if ((c = strcmp(z->valuestring, zone)) >= 0)
				break;
			i++;
		}
		if (c != 0)
			cJSON_InsertItemInArray(
			    zones, i, cJSON_CreateString(zone));
	}
	cJSON_ArrayForEach(z, zones)
	{
		buf_printf(out, "%s%s", n++ > 0 ? ", " : "", z->valuestring);
	}
	cJSON_Delete(zones);
	cJSON_Delete(items);
	return n;
}

int
tpucmd_name(
    struct tpu_ctx *ctx, int kinds, const char **name, struct tpu_err *err)
{
	const char *s = *name, *p, *z, *c, *id;
	size_t plen, zlen, clen;
	int rc;

	if (strncmp(s, "projects/", 9) == 0) {
		p = s + 9;
		plen = strcspn(p, "/");
		z = p + plen;
		if (strncmp(z, "/locations/", 11) != 0)
			goto bad;
		z += 11;
		zlen = strcspn(z, "/");
		c = z + zlen;
		if (*c != '/')
			goto bad;
		c++;
		clen = strcspn(c, "/");
		id = c + clen;
		if (*id != '/' || strchr(id + 1, '/') != NULL || plen == 0 ||
		    zlen == 0)
			goto bad;
		id++;
		if (!((kinds & TPUCMD_NAME_NODE) && clen == 5 &&
		        strncmp(c, "nodes", 5) == 0) &&
		    !((kinds & TPUCMD_NAME_QR) && clen == 15 &&
		        strncmp(c, "queuedResources", 15) == 0))
			goto bad;
		if ((rc = name_sets(ctx, "core/project", "--project", s, p,
		         plen, err)) != 0 ||
		    (rc = name_sets(
		         ctx, "compute/zone", "--zone", s, z, zlen, err)) != 0)
			return rc;
		*name = id;
	}
	if ((rc = catalog_node_name_validate(*name, err)) != 0)
		return rc;
	if (kinds & TPUCMD_NAME_CACHED_ZONE)
		cached_zone(ctx, kinds, *name);
	return 0;
bad:
	return tpu_error(err, TPU_E_USAGE,
	    "invalid name '%s': expected an id or projects/PROJECT/locations/"
	    "ZONE/%s/ID",
	    s,
	    kinds == TPUCMD_NAME_QR     ? "queuedResources"
	    : kinds == TPUCMD_NAME_NODE ? "nodes"
	                                : "nodes|queuedResources");
}

int
tpucmd_node_ready(const char *name, const char *state, struct tpu_err *err)
{
	const char *hint;

	if (state == NULL || strcmp(state, "READY") == 0)
		return 0;
	if (strcmp(state, "STOPPED") == 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' is STOPPED: start it with 'tpuctl start %s'",
		    name, name);
	if (strcmp(state, "STOPPING") == 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' is STOPPING: wait until it is STOPPED, then "
		    "'tpuctl start %s'",
		    name, name);
	if (strcmp(state, "PREEMPTED") == 0 || strcmp(state, "TERMINATED") == 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' is %s: it cannot be started again; delete it "
		    "('tpuctl delete %s') and create it anew",
		    name, state, name);
	if (strcmp(state, "DELETING") == 0)
		return tpu_error(err, TPU_E_PRECONDITION,
		    "node '%s' is DELETING: it is going away", name);
	hint = strcmp(state, "CREATING") == 0 ||
	               strcmp(state, "STARTING") == 0 ||
	               strcmp(state, "RESTARTING") == 0 ||
	               strcmp(state, "REPAIRING") == 0 ||
	               strcmp(state, "REIMAGING") == 0 ||
	               strcmp(state, "UNHIDING") == 0
	           ? "wait until it is READY"
	           : "it must be READY";
	return tpu_error(err, TPU_E_PRECONDITION,
	    "node '%s' is %s, not READY: %s ('tpuctl describe %s' "
	    "shows its state)",
	    name, state, hint, name);
}

const char *
tpucmd_zone_of(const char *name, char *buf, size_t len)
{
	const char *p = strstr(name, "/locations/"), *end;

	if (p == NULL) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	p += strlen("/locations/");
	end = strchr(p, '/');
	snprintf(
	    buf, len, "%.*s", end != NULL ? (int)(end - p) : (int)strlen(p), p);
	return buf;
}

cJSON *
tpucmd_table_view(const cJSON *list)
{
	cJSON *copy = cJSON_Duplicate(list, 1), *it;

	cJSON_ArrayForEach(it, copy)
	{
		const char *name = json_opt_string(it, "name", NULL);
		char zone[128];

		if (name == NULL)
			continue;
		tpucmd_zone_of(name, zone, sizeof zone);
		cJSON_DeleteItemFromObjectCaseSensitive(it, "zone");
		cJSON_AddStringToObject(it, "zone", zone);
		cJSON_ReplaceItemInObjectCaseSensitive(
		    it, "name", cJSON_CreateString(tpuapi_basename(name)));
	}
	return copy;
}

int
tpucmd_emit_result(struct tpu_ctx *ctx, const cJSON *r, struct tpu_err *err)
{
	/* the default table says nothing (a summary goes to stderr); a
	 * table(...) of the user's is printed */
	if (r == NULL ||
	    (ctx->out.fmt == OUTPUT_TABLE && ctx->out.nfields == 0))
		return 0;
	return output_emit(&ctx->out, r, NULL, err);
}

int
tpucmd_is_stop(int rc)
{
	return rc == TPU_E_TIMEOUT || rc == TPU_E_INTERRUPTED ||
	       rc == TPU_E_TERMINATED;
}

int
tpucmd_node_verb_open(struct tpu_ctx *ctx, const struct cmd_entry *e,
    int *argcp, char ***argvp, int *async, int64_t *deadline, struct tpucmd *tc,
    struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "async", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *timeout = NULL;
	char **argv = *argvp;
	int ch, i, rc, argc = *argcp;

	*async = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'a')
			*async = 1;
		else if (ch == 't')
			timeout = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	argc -= optind;
	argv += optind;
	*argcp = argc;
	*argvp = argv;
	if ((rc = cmd_check_operands(e, argc, argv, err)) != 0)
		return rc;
	for (i = 0; i < argc; i++) {
		const char *n = argv[i];

		if ((rc = tpucmd_name(ctx, TPUCMD_NAME_NODE, &n, err)) != 0)
			return rc;
		argv[i] += n - argv[i];
	}
	if ((rc = tpucmd_deadline(timeout, deadline, err)) != 0)
		return rc;
	return tpucmd_open(ctx, tc, err);
}

int
tpucmd_node_verb(struct tpu_ctx *ctx, const struct cmd_entry *e,
    const char *verb, int argc, char **argv, struct tpu_err *err)
{
	struct tpucmd_wait w;
	struct tpucmd tc;
	cJSON *op = NULL, *node = NULL, *empty = NULL;
	char *path = NULL, *what = NULL;
	int64_t deadline;
	int rc, async;

	if ((rc = tpucmd_node_verb_open(
	         ctx, e, &argc, &argv, &async, &deadline, &tc, err)) != 0)
		return rc;
	path = xasprintf("projects/%s/locations/%s/nodes/%s:%s", tc.project,
	    tc.zone, argv[0], verb);
	empty = cJSON_CreateObject();
	if (!ctx->dry_run) /* the node changes: the cached entry is stale */
		nodecache_drop(tc.project, tc.zone, argv[0]);
	if ((rc = tpuapi_call(
	         &tc.api, "POST", path, NULL, empty, 0, &op, err)) != 0) {
		if (rc == TPU_E_NOTFOUND) {
			struct buf where;

			buf_init(&where, 4096);
			if (tpucmd_where(
			        &tc, "nodes", argv[0], tc.zone, &where) > 0)
				tpu_error(err, rc,
				    "node '%s' not found in zone %s; exists "
				    "in zones %s (--zone)",
				    argv[0], tc.zone, where.data);
			else
				tpu_error(err, rc,
				    "node '%s' not found in zone %s", argv[0],
				    tc.zone);
			buf_release(&where);
		}
		goto out;
	}
	if (op == NULL) /* --dry-run */
		goto out;
	if (async) {
		rc = output_emit(&ctx->out, op, NULL, err);
		goto out;
	}
	what = xasprintf("%s node '%s'",
	    strcmp(verb, "start") == 0 ? "starting" : "stopping", argv[0]);
	tpucmd_wait_opts(ctx, &tc, &w, deadline, what);
	if ((rc = tpuapi_op_wait(&tc.api, json_opt_string(op, "name", ""),
	         &w.api, &node, err)) != 0)
		goto out;
	if (strcmp(verb, "start") == 0) {
		cJSON_Delete(node);
		node = NULL;
		if ((rc = tpuapi_node_wait_ready(
		         &tc.api, tc.zone, argv[0], &w.api, &node, err)) != 0)
			goto out;
		nodecache_put(tc.project, tc.zone, argv[0], node);
	}
	if (!ctx->quiet)
		fprintf(stderr, "tpuctl: %s node '%s'\n",
		    strcmp(verb, "start") == 0 ? "started" : "stopped",
		    argv[0]);
	rc = tpucmd_emit_result(ctx, node, err);
out:
	cJSON_Delete(empty);
	cJSON_Delete(op);
	cJSON_Delete(node);
	free(path);
	free(what);
	tpucmd_close(&tc);
	return rc;
}

void
tpucmd_drop_qr_cache(const char *project, const char *zone, const char *qr)
{
	cJSON *ids = NULL, *id;

	if (nodecache_qr_get(project, zone, qr, INT64_MAX, &ids) == 0) {
		cJSON_ArrayForEach(id, ids)
		{
			if (cJSON_IsString(id))
				nodecache_drop(project, zone, id->valuestring);
		}
		cJSON_Delete(ids);
	}
	/* its nodes cached without the membership (logs of a submit) */
	nodecache_qr_nodes_drop(project, zone, qr);
	nodecache_qr_drop(project, zone, qr);
}

/* DELETE one resource; *opp gets the operation (NULL on --dry-run).
 * The error, if any, in err. */
static int
delete_send(struct tpu_ctx *ctx, struct tpucmd *tc,
    const struct tpucmd_delete *d, const char *id, cJSON **opp,
    struct tpu_err *err)
{
	char *path;
	int rc;

	path = xasprintf("projects/%s/locations/%s/%s/%s", tc->project,
	    tc->zone, d->collection, id);
	if (!ctx->dry_run) {
		if (d->node_cache)
			nodecache_drop(tc->project, tc->zone, id);
		else
			tpucmd_drop_qr_cache(tc->project, tc->zone, id);
	}
	rc = tpuapi_call(&tc->api, "DELETE", path, d->query, NULL, 1, opp, err);
	if (rc == TPU_E_NOTFOUND)
		tpu_error(err, rc, "%s '%s' not found in zone %s", d->kind, id,
		    tc->zone);
	if (rc != 0 && rc != TPU_E_NOTFOUND && d->force_hint &&
	    strstr(err->msg, "node") != NULL) {
		char *m = xstrdup(err->msg);

		tpu_error(err, (enum tpu_errc)rc,
		    "%s; pass --force to delete its nodes too", m);
		free(m);
	}
	free(path);
	return rc;
}

static int
delete_stops(const struct tpucmd_delete *d, int rc)
{
	return rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED ||
	       (d->timeout_stops && rc == TPU_E_TIMEOUT);
}

/* "a, b, c": the ids that were deleted (ok) or that failed (!ok). */
static void
delete_names(struct buf *b, char **argv, const int *rcs, int argc, int ok)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if ((rcs[i] == 0) != ok)
			continue;
		buf_printf(b, "%s%s", n++ > 0 ? ", " : "", argv[i]);
	}
}

int
tpucmd_delete_each(struct tpu_ctx *ctx, struct tpucmd *tc,
    const struct tpucmd_delete *d, int argc, char **argv, int async,
    int64_t deadline, struct tpu_err *err)
{
	cJSON *ops = cJSON_CreateArray(), **op;
	struct tpu_err *errs;
	struct buf names;
	int i, rc = 0, *rcs, nok = 0, first = -1, stop = 0, waited = 0;

	op = xcalloc((size_t)argc, sizeof *op);
	rcs = xcalloc((size_t)argc, sizeof *rcs);
	errs = xcalloc((size_t)argc, sizeof *errs);
	buf_init(&names, 1 << 20);
	/* Every DELETE first, so the operations run side by side... */
	for (i = 0; i < argc; i++) {
		tpu_err_init(&errs[i]);
		if (stop) {
			rcs[i] = stop;
			tpu_error(&errs[i], (enum tpu_errc)stop,
			    "%s '%s' not deleted: stopped", d->kind, argv[i]);
			continue;
		}
		rcs[i] = delete_send(ctx, tc, d, argv[i], &op[i], &errs[i]);
		if (delete_stops(d, rcs[i]))
			stop = rcs[i];
	}
	/* ...then one wait for all of them: each poll loop finds the
	 * others' operations already running, so the whole takes as long
	 * as the slowest deletion, not the sum. */
	for (i = 0; i < argc; i++) {
		struct tpucmd_wait w;
		char *what;

		if (rcs[i] != 0 || op[i] == NULL || async)
			continue;
		if (stop) {
			rcs[i] = stop;
			tpu_error(&errs[i], (enum tpu_errc)stop,
			    "%s '%s': deletion not waited for (operation %s)",
			    d->kind, argv[i],
			    tpuapi_basename(
			        json_opt_string(op[i], "name", "")));
			continue;
		}
		/* One progress line for all: the first wait stands for
		 * them, the later ones (mostly done by then) are quiet. */
		what = argc == 1
		           ? xasprintf("deleting %s '%s'", d->kind, argv[i])
		           : xasprintf("deleting %d %ss", argc, d->kind);
		tpucmd_wait_opts(ctx, tc, &w, deadline, what);
		w.quiet |= waited++ > 0;
		rcs[i] = tpuapi_op_wait(&tc->api,
		    json_opt_string(op[i], "name", ""), &w.api, NULL, &errs[i]);
		free(what);
		if (rcs[i] == TPU_E_INTERRUPTED || rcs[i] == TPU_E_TERMINATED ||
		    rcs[i] == TPU_E_TIMEOUT)
			stop = rcs[i]; /* the deadline is shared */
	}
	for (i = 0; i < argc; i++) {
		if (rcs[i] == 0) {
			nok++;
			if (async && op[i] != NULL) {
				cJSON_AddItemToArray(ops, op[i]);
				op[i] = NULL;
			}
		} else if (first < 0)
			first = i;
	}
	if (first >= 0 && argc == 1) {
		rc = rcs[0];
		*err = errs[0];
	} else if (first >= 0) {
		/* Each failure in full, then one line naming them all. */
		for (i = 0; i < argc; i++)
			if (rcs[i] != 0)
				log_warn("%s", errs[i].msg);
		if (nok > 0) {
			buf_printf(&names, "deleted %d of %d %ss (", nok, argc,
			    d->kind);
			delete_names(&names, argv, rcs, argc, 1);
			buf_puts(&names, "); failed: ");
		} else
			buf_printf(&names,
			    "none of %d %ss deleted; failed: ", argc, d->kind);
		delete_names(&names, argv, rcs, argc, 0);
		rc = stop != 0 ? stop : nok > 0 ? TPU_E_PARTIAL : rcs[first];
		tpu_error(err, (enum tpu_errc)rc, "%s", names.data);
	} else if (!async && !ctx->dry_run && !ctx->quiet) {
		if (argc == 1)
			fprintf(stderr, "tpuctl: deleted %s '%s'\n", d->kind,
			    argv[0]);
		else {
			delete_names(&names, argv, rcs, argc, 1);
			fprintf(stderr, "tpuctl: deleted %d %ss: %s\n", argc,
			    d->kind, names.data);
		}
	}
	if (async && cJSON_GetArraySize(ops) > 0) {
		int orc = output_emit(&ctx->out, ops, "OPERATION=name", err);

		if (rc == 0)
			rc = orc;
	}
	for (i = 0; i < argc; i++)
		cJSON_Delete(op[i]);
	free(op);
	free(rcs);
	free(errs);
	buf_release(&names);
	cJSON_Delete(ops);
	return rc;
}

int
tpucmd_each_zone(
    struct tpucmd *tc, tpucmd_zone_fn fn, void *arg, struct tpu_err *err)
{
	cJSON *zones = NULL;
	const cJSON *z;
	int rc;

	if (tc->zone == NULL || strcmp(tc->zone, "-") != 0)
		return fn(tc, tc->zone, arg, err);
	if ((rc = tpuapi_zones(&tc->api, &zones, err)) != 0)
		return rc;
	cJSON_ArrayForEach(z, zones)
	{
		if ((rc = fn(tc, z->valuestring, arg, err)) != 0)
			break;
	}
	cJSON_Delete(zones);
	return rc;
}

struct list_arg {
	const struct tpucmd_list *l;
	int page_size;
	cJSON *kept;
};

/* Add the items of one zone (NULL: of the project) to kept. */
static int
list_zone(struct tpucmd *tc, const char *zone, void *arg, struct tpu_err *err)
{
	struct list_arg *a = arg;
	cJSON *items = NULL, *it;
	char *parent;
	int rc;

	parent = zone != NULL
	             ? xasprintf("projects/%s/locations/%s", tc->project, zone)
	             : xasprintf("projects/%s", tc->project);
	rc = tpuapi_list_paged(&tc->api, parent, a->l->collection, a->l->field,
	    a->page_size, &items, err);
	free(parent);
	if (rc == 0) {
		cJSON_ArrayForEach(it, items)
		{
			cJSON_AddItemToArray(a->kept, cJSON_Duplicate(it, 1));
		}
	}
	cJSON_Delete(items);
	return rc;
}

/* A positive count for --limit or --page-size. */
static int
list_count(const char *flag, const char *arg, int *out, struct tpu_err *err)
{
	const char *bad = NULL;
	long long n = tpu_strtonum(arg, 1, 1000000000, &bad);

	if (bad != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid %s '%s': expected a whole number from 1 to "
		    "1000000000",
		    flag, arg);
	*out = (int)n;
	return 0;
}

int
tpucmd_list_run(struct tpu_ctx *ctx, const struct cmd_entry *e,
    const struct tpucmd_list *l, int argc, char **argv, struct tpu_err *err)
{
	enum {
		OPT_FLATTEN = 0x100,
		OPT_LIMIT,
		OPT_PAGE_SIZE,
		OPT_SORT_BY,
		OPT_URI,
	};
	static const struct option opts[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ "flatten", required_argument, NULL, OPT_FLATTEN },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "page-size", required_argument, NULL, OPT_PAGE_SIZE },
		{ "sort-by", required_argument, NULL, OPT_SORT_BY },
		{ "uri", no_argument, NULL, OPT_URI },
		{ NULL, 0, NULL, 0 },
	};
	const char *filter = NULL, *sortby = NULL, *flatten = NULL;
	struct resproj_sortby sb, fl;
	struct resfilter *rf = NULL;
	struct output uri_out, *out = &ctx->out;
	struct list_arg a;
	struct tpucmd tc;
	cJSON *view = NULL, *it, *next;
	int ch, rc, limit = 0, uri = 0, opened = 0, n;

	memset(&a, 0, sizeof a);
	memset(&sb, 0, sizeof sb);
	memset(&fl, 0, sizeof fl);
	output_init(&uri_out);
	a.l = l;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			filter = optarg;
			break;
		case OPT_FLATTEN:
			flatten = optarg;
			break;
		case OPT_LIMIT:
			if ((rc = list_count("--limit", optarg, &limit, err)) !=
			    0)
				goto out;
			break;
		case OPT_PAGE_SIZE:
			if ((rc = list_count("--page-size", optarg,
			         &a.page_size, err)) != 0)
				goto out;
			break;
		case OPT_SORT_BY:
			sortby = optarg;
			break;
		case OPT_URI:
			uri = 1;
			break;
		default:
			rc = cmd_bad_option(argv, ch, err);
			goto out;
		}
	}
	if ((rc = cmd_check_operands(e, argc - optind, argv + optind, err)) !=
	    0)
		goto out;
	/* Every expression is checked before any request. */
	if (flatten != NULL &&
	    (rc = resproj_flatten_parse(&fl, flatten, err)) != 0)
		goto out;
	if (filter != NULL && (rc = resfilter_parse(filter, &rf, err)) != 0)
		goto out;
	if (filter != NULL && tpucmd_old_filter(filter))
		log_warn("--filter '%s': the FIELD=VALUE,... form is gone; "
		         "',' no longer separates terms: use AND "
		         "(see FILTERS in tpuctl(1))",
		    filter);
	if (sortby != NULL &&
	    (rc = resproj_sortby_parse(&sb, sortby, err)) != 0)
		goto out;
	if (uri) {
		/* gcloud's --uri: the resources' URIs, whatever --format */
		if ((rc = output_parse_format(&uri_out, "value(uri())", err)) !=
		    0)
			goto out;
		uri_out.fp = ctx->out.fp;
		out = &uri_out;
	}
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		goto out;
	opened = 1;
	a.kept = cJSON_CreateArray();
	if ((rc = tpucmd_each_zone(&tc, list_zone, &a, err)) != 0)
		goto out;
	/* gcloud's order: --flatten, --filter, --sort-by, --limit */
	if (flatten != NULL) {
		cJSON *flat = resproj_flatten(&fl, a.kept);

		cJSON_Delete(a.kept);
		a.kept = flat;
	}
	for (it = a.kept->child; it != NULL; it = next) {
		next = it->next;
		if (!resfilter_match(rf, it))
			cJSON_Delete(cJSON_DetachItemViaPointer(a.kept, it));
	}
	resproj_sortby_apply(&sb, a.kept);
	for (it = a.kept->child, n = 0; it != NULL; it = next, n++) {
		next = it->next;
		if (limit > 0 && n >= limit)
			cJSON_Delete(cJSON_DetachItemViaPointer(a.kept, it));
	}
	/* as gcloud's list commands, on stderr (stdout stays empty) */
	if (a.kept->child == NULL && !ctx->quiet)
		fprintf(stderr, "Listed 0 items.\n");
	if (out->fmt == OUTPUT_TABLE && out->nfields == 0) {
		/* the command's own table: short names and the zone */
		view = l->view != NULL ? l->view(a.kept)
		                       : tpucmd_table_view(a.kept);
		rc = output_emit(out, view, l->columns, err);
	} else
		rc = output_emit(out, a.kept, l->columns, err);
out:
	cJSON_Delete(view);
	cJSON_Delete(a.kept);
	resfilter_free(rf);
	resproj_sortby_release(&sb);
	resproj_sortby_release(&fl);
	output_release(&uri_out);
	if (opened)
		tpucmd_close(&tc);
	return rc;
}

/* 1 when filter looks like tpuctl's old "state=READY,labels.env=prod". */
int
tpucmd_old_filter(const char *filter)
{
	const char *c = strchr(filter, ','), *p;

	if (c == NULL || strchr(filter, ' ') != NULL ||
	    strchr(filter, '"') != NULL || strchr(filter, '\'') != NULL ||
	    strchr(filter, '(') != NULL)
		return 0;
	for (p = c + 1; *p != '\0' && *p != ','; p++)
		if (*p == '=')
			return 1;
	return 0;
}

int
tpucmd_list_collection(struct tpu_ctx *ctx, const struct cmd_entry *e,
    const char *collection, const char *field, const char *columns, int zonal,
    int argc, char **argv, struct tpu_err *err)
{
	const char *zone = config_get(ctx->cfg, "compute/zone");
	struct tpucmd_list l;
	char *cols = NULL;
	int rc;

	memset(&l, 0, sizeof l);
	l.collection = collection;
	l.field = field;
	l.columns = columns;
	if (zonal) {
		/* --zone -: every zone (one list call each), a ZONE column */
		if (zone != NULL && strcmp(zone, "-") == 0)
			l.columns = cols = xasprintf("%s,ZONE=zone", columns);
	}
	rc = tpucmd_list_run(ctx, e, &l, argc, argv, err);
	free(cols);
	return rc;
}

int
tpucmd_create_post(struct tpucmd *tc, const struct tpucmd_create *c,
    const char *parent, const char *query, const cJSON *body, cJSON **opp,
    struct tpu_err *err)
{
	int rc, attempt, ours;

	for (attempt = 1;; attempt++) {
		rc = tpuapi_call(
		    &tc->api, "POST", parent, query, body, 0, opp, err);
		if (rc == 0)
			return 0;
		if (c->stopped != NULL && tpucmd_is_stop(rc))
			return c->stopped(c->arg, rc, err);
		if (rc != TPU_E_CONFLICT && rc != TPU_E_TRANSIENT &&
		    rc != TPU_E_API)
			return rc;
		/* Ambiguous, or the name is taken: was it us (R4)? */
		ours = c->ours(c->arg, &rc, err);
		if (rc != 0)
			return rc;
		if (ours == 1) {
			log_info("%s '%s' exists with this run's id: the "
			         "creation went through",
			    c->kind, c->id);
			return 0;
		}
		if (ours == 0)
			return tpu_error(err, TPU_E_CONFLICT,
			    "%s '%s' already exists in zone %s and was not "
			    "created by this run",
			    c->kind, c->id, c->zone);
		if (attempt >= 3)
			return tpu_error(err, TPU_E_TRANSIENT,
			    "could not create %s '%s' in %s after %d attempts",
			    c->kind, c->id, c->zone, attempt);
	}
}

int
tpucmd_create_async(struct tpucmd *tc, const char *path, cJSON **opp,
    cJSON **resultp, struct tpu_err *err)
{
	if (*opp == NULL) /* resolved through R4: the resource instead */
		return tpuapi_call(
		    &tc->api, "GET", path, NULL, NULL, 1, resultp, err);
	*resultp = *opp;
	*opp = NULL;
	return 0;
}

int
tpucmd_create_zones(struct tpu_ctx *ctx, struct tpucmd *tc, const char *arg,
    const struct catalog_accel *acc, cJSON **zonesp, struct tpu_err *err)
{
	int rc;

	memset(tc, 0, sizeof *tc);
	*zonesp = NULL;
	if (arg != NULL &&
	    (rc = tpucmd_zones_parse(ctx, arg, zonesp, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, tc, err)) != 0)
		goto fail;
	if (*zonesp == NULL) {
		*zonesp = cJSON_CreateArray();
		cJSON_AddItemToArray(*zonesp, cJSON_CreateString(tc->zone));
	}
	if ((rc = tpucmd_zones_offer(*zonesp, acc, err)) == 0)
		return 0;
	tpucmd_close(tc);
fail:
	cJSON_Delete(*zonesp);
	*zonesp = NULL;
	return rc;
}

/* The node flags shared by "create" and "queued-resources create". */

int
tpucmd_node_opt(
    struct tpucmd_node_opts *o, int ch, const char *optarg, struct tpu_err *err)
{
	switch (ch) {
	case TPUCMD_OPT_ACCEL:
		o->accel = optarg;
		break;
	case TPUCMD_OPT_DISK:
		if (o->ndisks == (int)nitems(o->disks))
			return tpu_error(err, TPU_E_USAGE,
			    "at most %zu --data-disk options",
			    nitems(o->disks));
		o->disks[o->ndisks++] = optarg;
		break;
	case TPUCMD_OPT_DESCRIPTION:
		o->description = optarg;
		break;
	case TPUCMD_OPT_INTERNAL_IPS:
		o->internal_ips = 1;
		break;
	case TPUCMD_OPT_LABELS:
		o->labels = optarg;
		break;
	case TPUCMD_OPT_METADATA:
		o->metadata = optarg;
		break;
	case TPUCMD_OPT_METADATA_FILE:
		o->metadata_files = optarg;
		break;
	case TPUCMD_OPT_METADATA_RAW:
		o->metadata_raw = 1;
		break;
	case TPUCMD_OPT_NETWORK:
		o->network = optarg;
		break;
	case TPUCMD_OPT_SCOPES:
		o->scopes = optarg;
		break;
	case TPUCMD_OPT_SERVICE_ACCOUNT:
		o->service_account = optarg;
		break;
	case TPUCMD_OPT_SUBNETWORK:
		o->subnetwork = optarg;
		break;
	case TPUCMD_OPT_TAGS:
		o->tags = optarg;
		break;
	case TPUCMD_OPT_TOPOLOGY:
		o->topology = optarg;
		break;
	case TPUCMD_OPT_TYPE:
		o->gen = optarg;
		break;
	case TPUCMD_OPT_VERSION:
		o->version = optarg;
		break;
	case TPUCMD_OPT_RANGE:
		o->range = optarg;
		break;
	case TPUCMD_OPT_QUEUE_COUNT:
		o->queue_count = optarg;
		break;
	case TPUCMD_OPT_BOOT_DISK:
		o->boot_disk = optarg;
		break;
	case TPUCMD_OPT_NETWORK_CONFIG:
		o->network_config = optarg;
		o->nnetwork_configs++;
		break;
	case TPUCMD_OPT_SECURE_BOOT:
		o->secure_boot = 1;
		break;
	case TPUCMD_OPT_AUTOCHECKPOINT:
		o->autocheckpoint = 1;
		break;
	default:
		return 0;
	}
	return 1;
}

static cJSON *
csv_array(const char *s)
{
	cJSON *a = cJSON_CreateArray();
	char *copy = xstrdup(s), *it, *save = NULL;

	for (it = strtok_r(copy, ",", &save); it != NULL;
	     it = strtok_r(NULL, ",", &save))
		cJSON_AddItemToArray(a, cJSON_CreateString(it));
	free(copy);
	return a;
}

/* "source=projects/p/zones/z/disks/d,mode=read-only" */
static int
parse_disk(const char *arg, cJSON *disks, struct tpu_err *err)
{
	char *copy = xstrdup(arg), *it, *save = NULL;
	const char *source = NULL, *mode = "READ_WRITE";
	int rc = 0;
	cJSON *d;

	for (it = strtok_r(copy, ",", &save); it != NULL;
	     it = strtok_r(NULL, ",", &save)) {
		if (strncmp(it, "source=", 7) == 0 && it[7] != '\0')
			source = it + 7;
		else if (strcmp(it, "mode=read-write") == 0)
			mode = "READ_WRITE";
		else if (strcmp(it, "mode=read-only") == 0)
			mode = "READ_ONLY";
		else {
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid --data-disk item '%s': expected "
			    "source=DISK and mode=read-write|read-only",
			    it);
			goto out;
		}
	}
	if (source == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "invalid --data-disk '%s': source=DISK is required", arg);
		goto out;
	}
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "sourceDisk", source);
	cJSON_AddStringToObject(d, "mode", mode);
	cJSON_AddItemToArray(disks, d);
out:
	free(copy);
	return rc;
}

static int
node_shape(struct tpucmd_node_opts *o, struct tpu_err *err)
{
	struct catalog_accel *acc = &o->acc;
	int rc;

	if (o->accel != NULL && (o->gen != NULL || o->topology != NULL) &&
	    o->topology == NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "--type goes with --topology, not --accelerator-type");
	if (o->accel != NULL) {
		if ((rc = catalog_accel_parse(o->accel, acc, err)) != 0)
			return rc;
		if (o->topology != NULL)
			return catalog_accel_topology_match(
			    acc, o->topology, err);
		return 0;
	}
	if (o->gen != NULL && o->topology != NULL)
		return catalog_accel_from_topology(
		    o->gen, o->topology, acc, err);
	return tpu_error(err, TPU_E_USAGE,
	    "missing slice shape: pass --accelerator-type TYPE (e.g. v4-32) "
	    "or --type GENERATION --topology AxBxC");
}

/* gcloud: "min(floor(#vCPU / #vNIC), 32) queues" at most. */
#define TPUCMD_MAX_QUEUE_COUNT 32

/* The checks of the flags that are not the shape, labels or metadata. */
static int
node_extra_check(const struct tpucmd_node_opts *o, struct tpu_err *err)
{
	const char *errstr = NULL;

	if (o->nnetwork_configs > 1)
		return tpu_error(err, TPU_E_USAGE,
		    "--network-config given %d times: tpu.v2 and v2alpha1 "
		    "have one networkConfig per node (several networks are "
		    "not in the API tpuctl speaks)",
		    o->nnetwork_configs);
	if (o->network_config != NULL &&
	    (o->network != NULL || o->subnetwork != NULL || o->internal_ips))
		return tpu_error(err, TPU_E_USAGE,
		    "--network-config excludes --network, --subnetwork and "
		    "--internal-ips (it sets all three)");
	if (o->queue_count != NULL) {
		(void)tpu_strtonum(
		    o->queue_count, 1, TPUCMD_MAX_QUEUE_COUNT, &errstr);
		if (errstr != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --queue-count '%s': a number of queues "
			    "from 1 to %d",
			    o->queue_count, TPUCMD_MAX_QUEUE_COUNT);
	}
	if (o->range != NULL)
		return tpuvalid_cidr29("--range", o->range, err);
	return 0;
}

int
tpucmd_provisioning_model(
    const char *arg, int *spot, int *reserved, int *flex, struct tpu_err *err)
{
	char v[32];
	size_t i;

	for (i = 0; arg[i] != '\0' && i + 1 < sizeof v; i++)
		v[i] =
		    arg[i] == '_' ? '-' : (char)tolower((unsigned char)arg[i]);
	v[i] = '\0';
	if (arg[i] == '\0' && strcmp(v, "standard") == 0)
		return 0;
	if (arg[i] == '\0' && strcmp(v, "spot") == 0) {
		*spot = 1;
		return 0;
	}
	if (arg[i] == '\0' && strcmp(v, "reservation-bound") == 0) {
		*reserved = 1;
		return 0;
	}
	if (arg[i] == '\0' && strcmp(v, "flex-start") == 0) {
		if (flex == NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "--provisioning-model=flex-start is not supported "
			    "for a node (SchedulingConfig.provisioningModel "
			    "has "
			    "no FLEX_START): use 'tpuctl queued-resources "
			    "create --provisioning-model flex-start'");
		*flex = 1;
		return 0;
	}
	return tpu_error(err, TPU_E_USAGE,
	    "invalid --provisioning-model '%s': one of standard, spot, "
	    "reservation-bound%s",
	    arg, flex != NULL ? ", flex-start" : "");
}

cJSON *
tpucmd_node_body(
    struct tpucmd_node_opts *o, const char *run_id, struct tpu_err *err)
{
	struct catalog_accel *acc = &o->acc;
	cJSON *node = NULL, *labels = NULL, *md, *x;
	const char *version, *errstr = NULL;
	int i;

	memset(acc, 0, sizeof *acc);
	o->alpha = 0;
	if (node_shape(o, err) != 0)
		return NULL;
	if (o->spot + o->preemptible + o->reserved > 1) {
		tpu_error(err, TPU_E_USAGE,
		    "--spot, --preemptible and --reserved exclude each other");
		return NULL;
	}
	version = o->version != NULL ? o->version : acc->gen->runtimes[0];
	if (o->version == NULL)
		log_info(
		    "no --version given: using %s for %s", version, acc->type);
	else if (!catalog_runtime_known(acc->gen, version))
		log_warn("runtime version '%s' is not known for %s; sending it "
		         "anyway (the server decides)",
		    version, acc->gen->name);

	if (node_extra_check(o, err) != 0)
		return NULL;

	node = cJSON_CreateObject();
	if (o->topology != NULL) {
		x = cJSON_AddObjectToObject(node, "acceleratorConfig");
		cJSON_AddStringToObject(x, "type", acc->gen->config_type);
		cJSON_AddStringToObject(x, "topology", o->topology);
	} else
		cJSON_AddStringToObject(node, "acceleratorType", acc->type);
	cJSON_AddStringToObject(node, "runtimeVersion", version);
	if (o->description != NULL)
		cJSON_AddStringToObject(node, "description", o->description);
	if (o->network_config != NULL) {
		if (tpuvalid_network_config(o->network_config, &x, err) != 0)
			goto fail;
		cJSON_AddItemToObject(node, "networkConfig", x);
	} else if (o->network != NULL || o->subnetwork != NULL ||
	           o->internal_ips || o->queue_count != NULL) {
		x = cJSON_AddObjectToObject(node, "networkConfig");
		if (o->network != NULL)
			cJSON_AddStringToObject(x, "network", o->network);
		if (o->subnetwork != NULL)
			cJSON_AddStringToObject(x, "subnetwork", o->subnetwork);
		cJSON_AddBoolToObject(x, "enableExternalIps", !o->internal_ips);
	}
	if (o->queue_count != NULL)
		cJSON_AddNumberToObject(
		    cJSON_GetObjectItemCaseSensitive(node, "networkConfig"),
		    "queueCount",
		    (double)tpu_strtonum(
		        o->queue_count, 1, TPUCMD_MAX_QUEUE_COUNT, &errstr));
	if (o->range != NULL)
		cJSON_AddStringToObject(node, "cidrBlock", o->range);
	if (o->secure_boot) {
		x = cJSON_AddObjectToObject(node, "shieldedInstanceConfig");
		cJSON_AddBoolToObject(x, "enableSecureBoot", 1);
	}
	if (o->autocheckpoint) {
		cJSON_AddBoolToObject(node, "autocheckpointEnabled", 1);
		o->alpha = 1;
	}
	if (o->boot_disk != NULL) {
		if (tpuvalid_boot_disk(o->boot_disk, &x, err) != 0)
			goto fail;
		cJSON_AddItemToObject(node, "bootDiskConfig", x);
		o->alpha = 1;
	}
	if (o->tags != NULL)
		cJSON_AddItemToObject(node, "tags", csv_array(o->tags));
	if (o->service_account != NULL || o->scopes != NULL) {
		x = cJSON_AddObjectToObject(node, "serviceAccount");
		if (o->service_account != NULL)
			cJSON_AddStringToObject(x, "email", o->service_account);
		if (o->scopes != NULL)
			cJSON_AddItemToObject(x, "scope", csv_array(o->scopes));
	}
	if (o->spot || o->preemptible || o->reserved) {
		x = cJSON_AddObjectToObject(node, "schedulingConfig");
		if (o->spot)
			cJSON_AddBoolToObject(x, "spot", 1);
		if (o->preemptible)
			cJSON_AddBoolToObject(x, "preemptible", 1);
		if (o->reserved)
			cJSON_AddBoolToObject(x, "reserved", 1);
	}
	if (o->labels != NULL) {
		if (catalog_labels_parse(o->labels, &labels, err) != 0)
			goto fail;
		if (run_id != NULL && cJSON_GetObjectItemCaseSensitive(
		                          labels, TPUCMD_RUN_ID_LABEL)) {
			tpu_error(err, TPU_E_USAGE,
			    "label '%s' is reserved for tpuctl",
			    TPUCMD_RUN_ID_LABEL);
			goto fail;
		}
	} else if (run_id != NULL)
		labels = cJSON_CreateObject();
	if (labels != NULL) {
		if (run_id != NULL)
			cJSON_AddStringToObject(
			    labels, TPUCMD_RUN_ID_LABEL, run_id);
		if (catalog_labels_validate(labels, err) != 0)
			goto fail;
		cJSON_AddItemToObject(node, "labels", labels);
		labels = NULL;
	}
	if (o->metadata != NULL || o->metadata_files != NULL) {
		md = cJSON_AddObjectToObject(node, "metadata");
		/* the one parser update uses too: NUL bytes refused */
		if (o->metadata != NULL &&
		    tpuvalid_metadata_parse(
		        o->metadata, 0, o->metadata_raw, md, err) != 0)
			goto fail;
		if (o->metadata_files != NULL &&
		    tpuvalid_metadata_parse(
		        o->metadata_files, 1, o->metadata_raw, md, err) != 0)
			goto fail;
	}
	if (o->ndisks > 0) {
		x = cJSON_AddArrayToObject(node, "dataDisks");
		for (i = 0; i < o->ndisks; i++)
			if (parse_disk(o->disks[i], x, err) != 0)
				goto fail;
	}
	return node;
fail:
	cJSON_Delete(labels);
	cJSON_Delete(node);
	return NULL;
}

int
tpucmd_run_id(char id[17], struct tpu_err *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[8];
	size_t i;
	FILE *fp = fopen("/dev/urandom", "re");

	if (fp == NULL || fread(raw, 1, sizeof raw, fp) != sizeof raw) {
		if (fp != NULL)
			fclose(fp);
		return tpu_error(err, TPU_E_INTERNAL,
		    "cannot read /dev/urandom: %s", strerror(errno));
	}
	fclose(fp);
	for (i = 0; i < sizeof raw; i++) {
		id[2 * i] = hex[raw[i] >> 4];
		id[2 * i + 1] = hex[raw[i] & 15];
	}
	id[16] = '\0';
	return 0;
}

int
tpucmd_zones_parse(
    struct tpu_ctx *ctx, const char *arg, cJSON **out, struct tpu_err *err)
{
	cJSON *zones = cJSON_CreateArray();
	char *copy = xstrdup(arg), *it, *save = NULL;
	int rc = 0;

	*out = NULL;
	for (it = strtok_r(copy, ",", &save); it != NULL;
	     it = strtok_r(NULL, ",", &save)) {
		if ((rc = catalog_zone_validate(it, err)) != 0)
			break;
		cJSON_AddItemToArray(zones, cJSON_CreateString(it));
	}
	free(copy);
	if (rc == 0 && cJSON_GetArraySize(zones) == 0)
		rc = tpu_error(
		    err, TPU_E_USAGE, "--zones needs at least one zone");
	if (rc != 0) {
		cJSON_Delete(zones);
		return rc;
	}
	/* --zones stands in for --zone: tpucmd_open needs one. */
	config_set_flag(ctx->cfg, "compute/zone",
	    cJSON_GetArrayItem(zones, 0)->valuestring);
	*out = zones;
	return 0;
}

int
tpucmd_zones_offer(
    const cJSON *zones, const struct catalog_accel *acc, struct tpu_err *err)
{
	const cJSON *z;

	cJSON_ArrayForEach(z, zones)
	{
		const struct catalog_zone *cz =
		    catalog_zone_find(z->valuestring);

		if (cz != NULL && !catalog_zone_offers(cz, acc->gen))
			return tpu_error(err, TPU_E_USAGE,
			    "zone %s does not offer %s TPUs (accelerator type "
			    "%s); see 'tpuctl accelerator-types list --zone "
			    "%s'",
			    z->valuestring, acc->gen->name, acc->type,
			    z->valuestring);
	}
	return 0;
}
