/*
 * Shared plumbing of the Cloud TPU commands.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "cmd.h"
#include "config.h"
#include "endpoint.h"
#include "http.h"
#include "json.h"
#include "retry.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

int
tpucmd_open(
    struct tpu_ctx *ctx, struct tpucmd *tc, int flags, struct tpu_err *err)
{
	struct http *http;
	char *base;
	int rc;

	memset(tc, 0, sizeof *tc);
	tc->project = config_get(ctx->cfg, "core/project");
	if (tc->project == NULL || *tc->project == '\0')
		return tpu_error(err, TPU_E_USAGE,
		    "no project: pass --project, set CLOUDSDK_CORE_PROJECT, "
		    "or run 'tpuctl config set core/project PROJECT'");
	if ((rc = catalog_project_validate(tc->project, err)) != 0)
		return rc;
	if (flags & (TPUCMD_ZONE | TPUCMD_ZONE_ANY)) {
		tc->zone = config_get(ctx->cfg, "compute/zone");
		if (tc->zone == NULL || *tc->zone == '\0')
			return tpu_error(err, TPU_E_USAGE,
			    "no zone: pass --zone, set CLOUDSDK_COMPUTE_ZONE, "
			    "or run 'tpuctl config set compute/zone ZONE'");
		if (strcmp(tc->zone, "-") == 0) {
			if (!(flags & TPUCMD_ZONE_ANY))
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
	return tpu_error(err, TPU_E_INTERRUPTED, "declined: nothing was done");
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

void
tpucmd_wait_opts(struct tpu_ctx *ctx, struct tpucmd *tc, struct tpuapi_wait *w,
    int64_t deadline_ms, const char *what)
{
	memset(w, 0, sizeof *w);
	w->deadline_ms = deadline_ms;
	w->zone = tc->zone;
	w->progress = isatty(STDERR_FILENO);
	w->quiet = ctx->quiet;
	w->what = what;
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
	if (r == NULL || ctx->out.fmt == OUTPUT_TABLE)
		return 0;
	return output_emit(&ctx->out, r, NULL, err);
}

int
tpucmd_filter_match(const cJSON *item, const char *filter)
{
	char *copy, *term, *save = NULL;
	int match = 1;

	if (filter == NULL || *filter == '\0')
		return 1;
	copy = xstrdup(filter);
	for (term = strtok_r(copy, ",", &save); term != NULL && match;
	     term = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(term, '='), buf[64];
		const cJSON *v;
		const char *have;

		*eq = '\0';
		v = json_path(item, term);
		if (cJSON_IsString(v))
			have = v->valuestring;
		else if (cJSON_IsBool(v))
			have = cJSON_IsTrue(v) ? "true" : "false";
		else if (cJSON_IsNumber(v)) {
			snprintf(buf, sizeof buf, "%g", v->valuedouble);
			have = buf;
		} else
			have = NULL;
		if (have == NULL || strcmp(have, eq + 1) != 0)
			match = 0;
	}
	free(copy);
	return match;
}

int
tpucmd_filter_check(const char *filter, struct tpu_err *err)
{
	const char *p = filter;

	if (filter == NULL)
		return 0;
	while (*p != '\0') {
		const char *end = strchr(p, ','), *eq;
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

		eq = memchr(p, '=', n);
		if (n == 0 || eq == NULL || eq == p)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --filter '%s': expected FIELD=VALUE[,...] "
			    "(e.g. state=READY,labels.env=prod)",
			    filter);
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

int
tpucmd_node_verb(struct tpu_ctx *ctx, const struct cmd_entry *e,
    const char *verb, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "async", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct tpuapi_wait w;
	struct tpucmd tc;
	cJSON *op = NULL, *node = NULL, *empty = NULL;
	const char *timeout = NULL;
	char *path = NULL, *what = NULL;
	int64_t deadline;
	int ch, rc, async = 0;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'a')
			async = 1;
		else if (ch == 't')
			timeout = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(e, argc, argv, err)) != 0)
		return rc;
	if ((rc = catalog_node_name_validate(argv[0], err)) != 0)
		return rc;
	if ((rc = tpucmd_deadline(timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, TPUCMD_ZONE, err)) != 0)
		return rc;
	path = xasprintf("projects/%s/locations/%s/nodes/%s:%s", tc.project,
	    tc.zone, argv[0], verb);
	empty = cJSON_CreateObject();
	if ((rc = tpuapi_call(
	         &tc.api, "POST", path, NULL, empty, 0, &op, err)) != 0) {
		if (rc == TPU_E_NOTFOUND)
			tpu_error(err, rc, "node '%s' not found in zone %s",
			    argv[0], tc.zone);
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
	if ((rc = tpuapi_op_wait(&tc.api, json_opt_string(op, "name", ""), &w,
	         &node, err)) != 0)
		goto out;
	if (strcmp(verb, "start") == 0) {
		cJSON_Delete(node);
		node = NULL;
		if ((rc = tpuapi_node_wait_ready(
		         &tc.api, tc.zone, argv[0], &w, &node, err)) != 0)
			goto out;
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

int
tpucmd_list_collection(struct tpu_ctx *ctx, const struct cmd_entry *e,
    const char *collection, const char *field, const char *columns, int zonal,
    int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct tpucmd tc;
	cJSON *items = NULL, *kept = NULL, *view = NULL, *it;
	const char *filter = NULL;
	char *parent;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'f')
			filter = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	if ((rc = cmd_check_operands(e, argc - optind, argv + optind, err)) !=
	    0)
		return rc;
	if ((rc = tpucmd_filter_check(filter, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, zonal ? TPUCMD_ZONE : 0, err)) != 0)
		return rc;
	parent =
	    zonal ? xasprintf("projects/%s/locations/%s", tc.project, tc.zone)
	          : xasprintf("projects/%s", tc.project);
	rc = tpuapi_list(&tc.api, parent, collection, field, &items, err);
	free(parent);
	if (rc != 0)
		goto out;
	kept = cJSON_CreateArray();
	cJSON_ArrayForEach(it, items) if (tpucmd_filter_match(it, filter))
	    cJSON_AddItemToArray(kept, cJSON_Duplicate(it, 1));
	if (ctx->out.fmt == OUTPUT_TABLE) {
		view = tpucmd_table_view(kept);
		rc = output_emit(&ctx->out, view, columns, err);
	} else
		rc = output_emit(&ctx->out, kept, columns, err);
out:
	cJSON_Delete(view);
	cJSON_Delete(kept);
	cJSON_Delete(items);
	tpucmd_close(&tc);
	return rc;
}
