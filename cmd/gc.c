/*
 * "tpuctl gc": find what holds quota and does nothing useful, and delete
 * it after confirmation.  That is: nodes PREEMPTED or TERMINATED (they
 * keep their quota until deleted) and queued resources FAILED or
 * SUSPENDED (deleted with force, so their nodes go too; a node that
 * belongs to such a queued resource is not deleted on its own).  Every
 * DELETE is sent first, then the operations are awaited, so a long list
 * takes as long as its slowest item.  Each item is reported; the exit
 * status is 0 when all were deleted, 8 when only some were.
 *
 * --dry-run is tpuctl's global flag (cmd/main.c takes it out of argv
 * before gc runs): with it gc lists, sending only GET requests (the http
 * layer sends reads under --dry-run and prints the rest), and deletes
 * nothing.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "log.h"
#include "nodecache.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

#define GC_COLUMNS                                                             \
	"KIND=kind,NAME=name,ZONE=zone,STATE=state,"                           \
	"ACCELERATOR_TYPE=acceleratorType"

static int
state_in(const char *s, const char *a, const char *b)
{
	return strcmp(s, a) == 0 || strcmp(s, b) == 0;
}

static void
add_item(cJSON *items, const char *kind, const char *zone, const char *full,
    const char *state, const char *type)
{
	cJSON *it = cJSON_CreateObject();

	cJSON_AddStringToObject(it, "kind", kind);
	cJSON_AddStringToObject(it, "name", tpuapi_basename(full));
	cJSON_AddStringToObject(it, "zone", zone);
	cJSON_AddStringToObject(it, "state", state);
	cJSON_AddStringToObject(it, "acceleratorType", type);
	cJSON_AddStringToObject(it, "resource", full);
	cJSON_AddItemToArray(items, it);
}

/* 1 if qr (full name) is among the queued resources of items. */
static int
qr_listed(const cJSON *items, const char *qr)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, items)
	{
		if (strcmp(json_opt_string(it, "kind", ""),
		        "queued-resource") == 0 &&
		    strcmp(json_opt_string(it, "resource", ""), qr) == 0)
			return 1;
	}
	return 0;
}

/* The accelerator type of a queued resource's first node spec. */
static const char *
qr_type(const cJSON *qr)
{
	const cJSON *spec =
	    cJSON_GetArrayItem(json_path(qr, "tpu.nodeSpec"), 0);
	const char *t = json_opt_string(spec, "node.acceleratorType", NULL);

	if (t == NULL)
		t = json_opt_string(
		    spec, "node.acceleratorConfig.topology", "");
	return t;
}

/* Add the candidates of one zone to items (arg). */
static int
gc_zone(struct tpucmd *tc, const char *zone, void *arg, struct tpu_err *err)
{
	cJSON *items = arg, *nodes = NULL, *qrs = NULL;
	const cJSON *it;
	char *parent;
	int rc;

	parent = xasprintf("projects/%s/locations/%s", tc->project, zone);
	rc = tpuapi_list(
	    &tc->api, parent, "queuedResources", "queuedResources", &qrs, err);
	if (rc == 0)
		rc = tpuapi_list(
		    &tc->api, parent, "nodes", "nodes", &nodes, err);
	free(parent);
	if (rc != 0)
		goto out;
	cJSON_ArrayForEach(it, qrs)
	{
		const char *st = json_opt_string(it, "state.state", "");

		if (state_in(st, "FAILED", "SUSPENDED"))
			add_item(items, "queued-resource", zone,
			    json_opt_string(it, "name", ""), st, qr_type(it));
	}
	cJSON_ArrayForEach(it, nodes)
	{
		const char *st = json_opt_string(it, "state", "");
		const char *qr = json_opt_string(it, "queuedResource", "");

		if (!state_in(st, "PREEMPTED", "TERMINATED"))
			continue;
		if (*qr != '\0' && qr_listed(items, qr)) {
			log_info("node '%s' goes with queued resource '%s'",
			    tpuapi_basename(json_opt_string(it, "name", "")),
			    tpuapi_basename(qr));
			continue;
		}
		add_item(items, "node", zone, json_opt_string(it, "name", ""),
		    st, json_opt_string(it, "acceleratorType", ""));
	}
out:
	cJSON_Delete(nodes);
	cJSON_Delete(qrs);
	return rc;
}

static void
set_result(cJSON *it, const char *result)
{
	cJSON_DeleteItemFromObjectCaseSensitive(it, "result");
	cJSON_AddStringToObject(it, "result", result);
}

/* How the deletions went. */
struct gc_tally {
	struct tpu_err first; /* the first failure */
	int ok, failed;
	int stop, stop_rc; /* Ctrl-C, SIGTERM or --timeout: no more waits */
};

/* Item it could not be deleted (rc, e2): record, report, maybe stop. */
static void
gc_failed(struct gc_tally *t, cJSON *it, int rc, const struct tpu_err *e2,
    int timeout_stops)
{
	set_result(it, e2->msg);
	log_warn("could not delete %s '%s' in %s: %s",
	    json_opt_string(it, "kind", ""), json_opt_string(it, "name", ""),
	    json_opt_string(it, "zone", ""), e2->msg);
	if (t->failed++ == 0)
		t->first = *e2;
	if (rc == TPU_E_INTERRUPTED || rc == TPU_E_TERMINATED ||
	    (timeout_stops && rc == TPU_E_TIMEOUT)) {
		if (!t->stop)
			t->stop_rc = rc;
		t->stop = 1;
	}
}

/* Send the DELETE of one item; the operation (or NULL) into "_op". */
static int
gc_send(struct tpucmd *tc, cJSON *it, struct tpu_err *err)
{
	const char *kind = json_opt_string(it, "kind", "");
	int qr = strcmp(kind, "queued-resource") == 0;
	cJSON *op = NULL;
	int rc;

	rc =
	    tpuapi_call(&tc->api, "DELETE", json_opt_string(it, "resource", ""),
	        qr ? "force=true" : NULL, NULL, 1, &op, err);
	if (rc == TPU_E_NOTFOUND) {
		/* Gone meanwhile: what we wanted. */
		cJSON_Delete(op);
		return 0;
	}
	if (rc == 0 && op != NULL)
		cJSON_AddItemToObject(it, "_op", op);
	else
		cJSON_Delete(op);
	return rc;
}

static int
gc_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct gc_tally t;
	struct tpucmd tc;
	cJSON *items = NULL, *it;
	const char *timeout = NULL;
	char q[128];
	int64_t deadline;
	int ch, rc, n;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 't')
			timeout = optarg;
		else
			return cmd_bad_option(argv, ch, err);
	}
	if ((rc = cmd_check_operands(
	         &cmd_gc_entry, argc - optind, argv + optind, err)) != 0)
		return rc;
	if ((rc = tpucmd_deadline(timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	items = cJSON_CreateArray();
	if ((rc = tpucmd_each_zone(&tc, gc_zone, items, err)) != 0)
		goto out;
	n = cJSON_GetArraySize(items);
	if (n == 0) {
		if (!ctx->quiet)
			fprintf(stderr,
			    "tpuctl: nothing to collect in %s: no PREEMPTED or "
			    "TERMINATED node, no FAILED or SUSPENDED queued "
			    "resource\n",
			    strcmp(tc.zone, "-") == 0 ? "any zone" : tc.zone);
		if (ctx->out.fmt != OUTPUT_TABLE)
			rc = output_emit(&ctx->out, items, GC_COLUMNS, err);
		goto out;
	}
	if (ctx->out.fmt == OUTPUT_TABLE &&
	    (rc = output_emit(&ctx->out, items, GC_COLUMNS, err)) != 0)
		goto out;
	if (ctx->dry_run) {
		cJSON_ArrayForEach(it, items) set_result(it, "would delete");
		if (!ctx->quiet)
			fprintf(stderr,
			    "tpuctl: dry run: would delete %d resource%s; "
			    "nothing was deleted\n",
			    n, n == 1 ? "" : "s");
		goto emit;
	}
	if (n == 1)
		snprintf(q, sizeof q, "Delete this resource holding quota?");
	else
		snprintf(
		    q, sizeof q, "Delete these %d resources holding quota?", n);
	if ((rc = tpucmd_confirm(ctx, q, err)) != 0)
		goto out;
	memset(&t, 0, sizeof t);
	tpu_err_init(&t.first);
	/* Every DELETE first, then the waits. */
	cJSON_ArrayForEach(it, items)
	{
		struct tpu_err e2;

		tpu_err_init(&e2);
		if (t.stop) {
			set_result(it, "not attempted");
			continue;
		}
		if ((rc = gc_send(&tc, it, &e2)) != 0)
			gc_failed(&t, it, rc, &e2, 0);
	}
	cJSON_ArrayForEach(it, items)
	{
		struct tpucmd_wait w;
		struct tpu_err e2;
		const cJSON *op;
		char *what;

		if (cJSON_GetObjectItemCaseSensitive(it, "result") != NULL)
			continue;
		op = cJSON_GetObjectItemCaseSensitive(it, "_op");
		tpu_err_init(&e2);
		rc = 0;
		if (op != NULL && !t.stop) {
			what = xasprintf("deleting %s '%s'",
			    json_opt_string(it, "kind", ""),
			    json_opt_string(it, "name", ""));
			tpucmd_wait_opts(ctx, &tc, &w, deadline, what);
			w.api.zone = json_opt_string(it, "zone", "");
			rc = tpuapi_op_wait(&tc.api,
			    json_opt_string(op, "name", ""), &w.api, NULL, &e2);
			free(what);
		} else if (t.stop)
			rc = tpu_error(&e2, (enum tpu_errc)t.stop_rc,
			    "deletion requested, not awaited; check with "
			    "'tpuctl gc --dry-run --zone %s'",
			    json_opt_string(it, "zone", ""));
		cJSON_DeleteItemFromObjectCaseSensitive(it, "_op");
		if (rc == 0) {
			t.ok++;
			set_result(it, "deleted");
			if (strcmp(json_opt_string(it, "kind", ""), "node") ==
			    0)
				nodecache_drop(tc.project,
				    json_opt_string(it, "zone", ""),
				    json_opt_string(it, "name", ""));
			else
				tpucmd_drop_qr_cache(tc.project,
				    json_opt_string(it, "zone", ""),
				    json_opt_string(it, "name", ""));
			if (!ctx->quiet)
				fprintf(stderr,
				    "tpuctl: deleted %s '%s' in %s (%s)\n",
				    json_opt_string(it, "kind", ""),
				    json_opt_string(it, "name", ""),
				    json_opt_string(it, "zone", ""),
				    json_opt_string(it, "state", ""));
			continue;
		}
		/* --timeout is one deadline for all: the rest is not
		 * awaited either. */
		gc_failed(&t, it, rc, &e2, 1);
	}
	rc = 0;
	if (t.stop)
		rc = tpu_error(err, (enum tpu_errc)t.stop_rc,
		    "%s after deleting %d of %d resource%s (%s): nothing was "
		    "cancelled; run 'tpuctl gc' again to finish",
		    t.stop_rc == TPU_E_TIMEOUT ? "timed out" : "interrupted",
		    t.ok, n, n == 1 ? "" : "s", t.first.msg);
	else if (t.failed > 0 && t.ok > 0)
		rc = tpu_error(err, TPU_E_PARTIAL,
		    "deleted %d of %d resources; %d failed (first: %s)", t.ok,
		    t.ok + t.failed, t.failed, t.first.msg); /* both > 0 */
	else if (t.failed > 0) {
		*err = t.first;
		rc = t.first.code;
	}
emit:
	if (ctx->out.fmt != OUTPUT_TABLE) {
		int orc = output_emit(&ctx->out, items, GC_COLUMNS, err);

		if (rc == 0)
			rc = orc;
	}
out:
	cJSON_Delete(items);
	tpucmd_close(&tc);
	return rc;
}

const struct cmd_entry cmd_gc_entry = {
	.name = "gc",
	.alias = NULL,
	.usage = "gc [--dry-run] [--quiet] [--timeout duration] "
	         "[--zone zone|-]",
	.summary = "delete preempted nodes and failed queued resources that "
	           "hold quota",
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_ZONE_ANY,
	.exec = gc_exec,
};
