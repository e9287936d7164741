/*
 * "tpuctl queued-resources create|list|describe|delete|reset": queued
 * resources of the Cloud TPU API v2 (a request for one node or a
 * multislice of nodes that the service fills when capacity frees up).
 *
 * create checks every value before any request, waits until the queued
 * resource is ACTIVE and its nodes READY with every worker healthy, and
 * with --cancel-on-interrupt (the default) deletes the queued resource it
 * created itself when the wait ends by Ctrl-C or --timeout: a request
 * left queued could be filled hours later and hold quota nobody uses.
 * --zones a,b,c moves on to the next zone after a stockout.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "nodecache.h"
#include "retry.h"
#include "sshsel.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

#define QR_COLUMNS                                                             \
	"NAME=name,ZONE=zone,ACCELERATOR_TYPE=acceleratorType,NODES=nodes,"    \
	"TIER=tier,STATE=state"
#define MAX_SLICES 256

static int qr_create(struct tpu_ctx *, int, char **, struct tpu_err *);
static int qr_list(struct tpu_ctx *, int, char **, struct tpu_err *);
static int qr_describe(struct tpu_ctx *, int, char **, struct tpu_err *);
static int qr_delete(struct tpu_ctx *, int, char **, struct tpu_err *);
static int qr_reset(struct tpu_ctx *, int, char **, struct tpu_err *);

static const struct cmd_entry qr_children[] = {
	{
	    .name = "create",
	    .usage =
	        "queued-resources create [--async] "
	        "[--autocheckpoint-enabled] [--internal-ips] "
	        "[--metadata-raw] [--no-cancel-on-interrupt] "
	        "[--shielded-secure-boot] "
	        "[--best-effort | --guaranteed [--min-duration duration] | "
	        "--reserved [--reservation name] | --reservation name | "
	        "--spot | "
	        "--provisioning-model model] "
	        "[--accelerator-type type | --type generation --topology "
	        "AxBxC] "
	        "[--node-id id | --node-count count [--node-prefix prefix] "
	        "[--workload-type type]] "
	        "[--boot-disk confidential-compute=bool,kms-key=key] "
	        "[--data-disk source=disk,mode=mode] [--description text] "
	        "[--labels k=v,...] [--max-run-duration duration] "
	        "[--metadata k=v,...] "
	        "[--metadata-from-file k=file,...] [--network network] "
	        "[--network-config network=n,subnetwork=s,external-ips=bool] "
	        "[--queue-count n] [--range cidr] "
	        "[--scopes scope,...] [--service-account email] "
	        "[--subnetwork subnetwork] [--tags tag,...] "
	        "[--timeout duration] "
	        "[--valid-after-duration duration | --valid-after-time time] "
	        "[--valid-until-duration duration | --valid-until-time time] "
	        "[--version runtime] [--zone zone] [--zones zone,...] "
	        "queued-resource",
	    .summary = "request TPU nodes and wait until they are ready",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = qr_create,
	},
	{
	    .name = "list",
	    .usage = "queued-resources list " TPUCMD_LIST_USAGE " "
	             "[--zone zone|-]",
	    .summary = "list queued resources in a zone, or in every zone",
	    .min_args = 0,
	    .max_args = 0,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE | CMD_ZONE_ANY,
	    .exec = qr_list,
	},
	{
	    .name = "describe",
	    .usage = "queued-resources describe [--zone zone] queued-resource",
	    .summary = "show a queued resource",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = qr_describe,
	},
	{
	    .name = "delete",
	    .usage = "queued-resources delete [--async] [--force] "
	             "[--timeout duration] [--zone zone] queued-resource ...",
	    .summary = "delete queued resources (--force: with their nodes)",
	    .min_args = 1,
	    .max_args = -1,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = qr_delete,
	},
	{
	    .name = "reset",
	    .usage = "queued-resources reset [--async] [--timeout duration] "
	             "[--zone zone] queued-resource",
	    .summary = "queue a FAILED or SUSPENDED queued resource again",
	    .min_args = 1,
	    .max_args = 1,
	    .flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	    .exec = qr_reset,
	},
	{ .name = NULL },
};

/* Values. */

static int
check_time(const char *flag, const char *arg, time_t *t, struct tpu_err *err)
{
	if (tpu_parse_rfc3339(arg, t) != 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid %s '%s': expected an RFC 3339 time such as "
		    "2026-12-01T18:00:00Z",
		    flag, arg);
	return 0;
}

/* A duration flag: more than 0; *secs set. */
static int
check_duration(
    const char *flag, const char *arg, long long *secs, struct tpu_err *err)
{
	int rc;

	if ((rc = tpu_parse_duration(flag, arg, secs, err)) != 0)
		return rc;
	if (*secs <= 0)
		return tpu_error(err, TPU_E_USAGE,
		    "invalid %s '%s': must be more than 0", flag, arg);
	return 0;
}

/* A reservation: a short id or projects/P/locations/Z/reservations/R. */
static int
check_reservation(const char *arg, struct tpu_err *err)
{
	struct tpu_err e2;
	char project[128], zone[128], id[128], tail;
	const char *p;

	tpu_err_init(&e2);
	for (p = arg; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
		    *p != '/' && *p != '.' && *p != ':')
			goto bad;
	if (strchr(arg, '/') == NULL) {
		if (catalog_node_name_validate(arg, &e2) == 0)
			return 0;
		goto bad;
	}
	if (strlen(arg) < 300 &&
	    sscanf(arg,
	        "projects/%127[^/]/locations/%127[^/]/reservations/"
	        "%127[^/]%c",
	        project, zone, id, &tail) == 3 &&
	    catalog_project_validate(project, &e2) == 0 &&
	    catalog_zone_validate(zone, &e2) == 0 &&
	    catalog_node_name_validate(id, &e2) == 0)
		return 0;
bad:
	return tpu_error(err, TPU_E_USAGE,
	    "invalid --reservation '%s': expected a reservation id or "
	    "projects/PROJECT/locations/ZONE/reservations/ID",
	    arg);
}

/* Options of create. */
struct qr_opts {
	struct tpucmd_node_opts node;
	const char *node_id, *node_count, *node_prefix, *reservation;
	const char *min_duration, *until_dur, *until_time, *after_dur;
	const char *after_time, *timeout, *zones, *provisioning_model;
	const char *max_run, *workload;
	int spot, guaranteed, reserved, best_effort, async, cancel, alpha;
	int flex;
	long long count, until_secs, after_secs, min_secs, run_secs;
};

/* Every check of create's flags; nothing is sent. */
static int
qr_validate(struct qr_opts *o, const char *id, struct tpu_err *err)
{
	const char *errstr;
	time_t now = time(NULL), until = 0, after = 0;
	int rc;

	if ((rc = catalog_node_name_validate(id, err)) != 0)
		return tpu_error_prefix(err, "queued resource id");
	if (o->node_id != NULL && (o->node_count || o->node_prefix))
		return tpu_error(err, TPU_E_USAGE,
		    "--node-id names a single node; --node-count and "
		    "--node-prefix are for a multislice");
	if (o->node_id == NULL && o->node_count == NULL) {
		if (o->node_prefix != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "--node-prefix goes with --node-count");
		return tpu_error(err, TPU_E_USAGE,
		    "pass --node-id ID (one node) or --node-count N "
		    "[--node-prefix P] (a multislice of N nodes)");
	}
	if (o->node_id != NULL &&
	    (rc = catalog_node_name_validate(o->node_id, err)) != 0)
		return tpu_error_prefix(err, "--node-id");
	if (o->node_count != NULL) {
		char last[96];

		o->count = tpu_strtonum(o->node_count, 2, MAX_SLICES, &errstr);
		if (errstr != NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --node-count '%s': a multislice has 2 to "
			    "%d nodes (use --node-id for one node)",
			    o->node_count, MAX_SLICES);
		if (o->node_prefix == NULL)
			o->node_prefix = id;
		if ((rc = catalog_node_name_validate(o->node_prefix, err)) != 0)
			return tpu_error_prefix(err, "--node-prefix");
		/* The last node id must be valid too: "prefix-N". */
		snprintf(last, sizeof last, "%.70s-%lld", o->node_prefix,
		    o->count - 1);
		if (catalog_node_name_validate(last, err) != 0)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --node-prefix '%s': node id '%s' would "
			    "be longer than 63 characters",
			    o->node_prefix, last);
	}
	if (o->workload != NULL) {
		if (o->node_count == NULL)
			return tpu_error(err, TPU_E_USAGE,
			    "--workload-type goes with --node-count");
		/* gcloud passes the API's enum name through
		 * (AVAILABILITY_OPTIMIZED): both spellings work */
		if (strcmp(o->workload, "throughput-optimized") == 0 ||
		    strcmp(o->workload, "THROUGHPUT_OPTIMIZED") == 0)
			o->workload = "THROUGHPUT_OPTIMIZED";
		else if (strcmp(o->workload, "availability-optimized") == 0 ||
		         strcmp(o->workload, "AVAILABILITY_OPTIMIZED") == 0)
			o->workload = "AVAILABILITY_OPTIMIZED";
		else
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --workload-type '%s': one of "
			    "throughput-optimized, availability-optimized "
			    "(or THROUGHPUT_OPTIMIZED, AVAILABILITY_OPTIMIZED)",
			    o->workload);
	}
	if (o->provisioning_model != NULL) {
		if (o->spot || o->guaranteed || o->reserved || o->best_effort)
			return tpu_error(err, TPU_E_USAGE,
			    "--provisioning-model excludes --spot, "
			    "--guaranteed, --reserved and --best-effort");
		if ((rc = tpucmd_provisioning_model(o->provisioning_model,
		         &o->spot, &o->reserved, &o->flex, err)) != 0)
			return rc;
	}
	if (o->spot + o->guaranteed + o->reserved + o->best_effort > 1)
		return tpu_error(err, TPU_E_USAGE,
		    "--spot, --guaranteed, --reserved and --best-effort "
		    "exclude each other");
	/* a named reservation is reserved capacity (gcloud sends the name
	 * alone): --reservation implies --reserved */
	if (o->reservation != NULL && !o->reserved) {
		if (o->spot || o->guaranteed || o->best_effort || o->flex)
			return tpu_error(err, TPU_E_USAGE,
			    "--reservation is reserved capacity: it excludes "
			    "--spot, --guaranteed, --best-effort and "
			    "--provisioning-model spot/flex-start");
		o->reserved = 1;
	}
	if (o->reservation != NULL &&
	    (rc = check_reservation(o->reservation, err)) != 0)
		return rc;
	if (o->min_duration != NULL && !o->guaranteed)
		return tpu_error(
		    err, TPU_E_USAGE, "--min-duration goes with --guaranteed");
	if (o->min_duration != NULL &&
	    (rc = check_duration(
	         "--min-duration", o->min_duration, &o->min_secs, err)) != 0)
		return rc;
	if (o->max_run != NULL && (rc = check_duration("--max-run-duration",
	                               o->max_run, &o->run_secs, err)) != 0)
		return rc;
	if (o->until_dur != NULL && o->until_time != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "--valid-until-duration and --valid-until-time exclude "
		    "each other");
	if (o->after_dur != NULL && o->after_time != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "--valid-after-duration and --valid-after-time exclude "
		    "each other");
	if (o->until_dur != NULL) {
		if ((rc = check_duration("--valid-until-duration", o->until_dur,
		         &o->until_secs, err)) != 0)
			return rc;
		until = now + (time_t)o->until_secs;
	}
	if (o->after_dur != NULL) {
		if ((rc = check_duration("--valid-after-duration", o->after_dur,
		         &o->after_secs, err)) != 0)
			return rc;
		after = now + (time_t)o->after_secs;
	}
	if (o->until_time != NULL) {
		if ((rc = check_time("--valid-until-time", o->until_time,
		         &until, err)) != 0)
			return rc;
		if (until <= now)
			return tpu_error(err, TPU_E_USAGE,
			    "invalid --valid-until-time '%s': it is in the "
			    "past",
			    o->until_time);
	}
	if (o->after_time != NULL && (rc = check_time("--valid-after-time",
	                                  o->after_time, &after, err)) != 0)
		return rc;
	if (until != 0 && after != 0 && until <= after)
		return tpu_error(err, TPU_E_USAGE,
		    "the queued resource would expire (--valid-until-*) "
		    "before it may start (--valid-after-*)");
	return 0;
}

/* The QueuedResource body for one zone. */
static cJSON *
qr_body(const struct qr_opts *o, const cJSON *node, const char *project,
    const char *zone)
{
	cJSON *qr = cJSON_CreateObject(), *tpu, *specs, *spec, *x;
	char buf[64], *parent;

	tpu = cJSON_AddObjectToObject(qr, "tpu");
	specs = cJSON_AddArrayToObject(tpu, "nodeSpec");
	spec = cJSON_CreateObject();
	cJSON_AddItemToArray(specs, spec);
	parent = xasprintf("projects/%s/locations/%s", project, zone);
	cJSON_AddStringToObject(spec, "parent", parent);
	free(parent);
	if (o->node_id != NULL)
		cJSON_AddStringToObject(spec, "nodeId", o->node_id);
	else {
		/* v2's multisliceParams is v2alpha1's multiNodeParams */
		x = cJSON_AddObjectToObject(
		    spec, o->alpha ? "multiNodeParams" : "multisliceParams");
		cJSON_AddNumberToObject(x, "nodeCount", (double)o->count);
		cJSON_AddStringToObject(x, "nodeIdPrefix", o->node_prefix);
		if (o->workload != NULL) /* v2alpha1 only */
			cJSON_AddStringToObject(x, "workloadType", o->workload);
	}
	cJSON_AddItemToObject(spec, "node", cJSON_Duplicate(node, 1));
	if (o->spot)
		cJSON_AddObjectToObject(qr, "spot");
	if (o->best_effort) /* tpu.v2alpha1 QueuedResource.bestEffort */
		cJSON_AddObjectToObject(qr, "bestEffort");
	if (o->guaranteed) {
		x = cJSON_AddObjectToObject(qr, "guaranteed");
		if (o->min_duration != NULL) {
			snprintf(buf, sizeof buf, "%llds", o->min_secs);
			cJSON_AddStringToObject(x, "minDuration", buf);
		}
	}
	if (o->reservation != NULL) {
		if (strchr(o->reservation, '/') != NULL)
			cJSON_AddStringToObject(
			    qr, "reservationName", o->reservation);
		else {
			char *r = xasprintf(
			    "projects/%s/locations/%s/reservations/%s", project,
			    zone, o->reservation);

			cJSON_AddStringToObject(qr, "reservationName", r);
			free(r);
		}
	}
	if (o->flex) /* tpu.v2alpha1 QueuedResource.provisioningModel */
		cJSON_AddStringToObject(qr, "provisioningModel", "FLEX_START");
	if (o->max_run != NULL) { /* tpu.v2alpha1 QueuedResource.runDuration */
		x = cJSON_AddObjectToObject(qr, "runDuration");
		snprintf(buf, sizeof buf, "%llds", o->run_secs);
		cJSON_AddStringToObject(x, "maxRunDuration", buf);
	}
	if (o->until_dur || o->until_time || o->after_dur || o->after_time) {
		x = cJSON_AddObjectToObject(qr, "queueingPolicy");
		if (o->until_dur != NULL) {
			snprintf(buf, sizeof buf, "%llds", o->until_secs);
			cJSON_AddStringToObject(x, "validUntilDuration", buf);
		}
		if (o->until_time != NULL)
			cJSON_AddStringToObject(
			    x, "validUntilTime", o->until_time);
		if (o->after_dur != NULL) {
			snprintf(buf, sizeof buf, "%llds", o->after_secs);
			cJSON_AddStringToObject(x, "validAfterDuration", buf);
		}
		if (o->after_time != NULL)
			cJSON_AddStringToObject(
			    x, "validAfterTime", o->after_time);
	}
	return qr;
}

/* Waiting. */

struct qr_run {
	struct tpu_ctx *ctx;
	struct tpucmd *tc;
	const struct qr_opts *o;
	const char *id, *zone, *run_id;
	char *path; /* projects/P/locations/Z/queuedResources/ID */
	int64_t deadline;
	int created; /* this run made the queued resource */
};

static char *
qr_path(struct tpucmd *tc, const char *zone, const char *id)
{
	return xasprintf("projects/%s/locations/%s/queuedResources/%s",
	    tc->project, zone, id);
}

/* 1 when the queued resource carries this run's id, 0 when not, -1 when
 * absent; *rcp gets other errors. */
static int
qr_is_ours(struct qr_run *r, int *rcp, struct tpu_err *err)
{
	cJSON *qr = NULL;
	const cJSON *node;
	int rc, ours;

	rc = tpuapi_call(&r->tc->api, "GET", r->path, NULL, NULL, 1, &qr, err);
	*rcp = 0;
	if (rc == TPU_E_NOTFOUND)
		return -1;
	if (rc != 0) {
		*rcp = rc;
		return 0;
	}
	node = cJSON_GetArrayItem(json_path(qr, "tpu.nodeSpec"), 0);
	ours =
	    node != NULL && strcmp(json_opt_string(node,
	                               "node.labels." TPUCMD_RUN_ID_LABEL, ""),
	                        r->run_id) == 0;
	cJSON_Delete(qr);
	return ours;
}

/* Delete (force) the queued resource this run created; bounded wait. */
static int
qr_cancel(struct qr_run *r, struct tpu_err *err)
{
	struct tpucmd_wait w;
	cJSON *op = NULL;
	int rc;

	tpucmd_wait_opts(r->ctx, r->tc, &w, tpu_now_ms() + 120 * 1000, NULL);
	w.api.zone = r->zone;
	w.quiet = 1;
	rc = tpuapi_call(
	    &r->tc->api, "DELETE", r->path, "force=true", NULL, 1, &op, err);
	if (rc == TPU_E_NOTFOUND)
		rc = 0;
	else if (rc == 0 && op != NULL)
		rc = tpuapi_op_wait(&r->tc->api,
		    json_opt_string(op, "name", ""), &w.api, NULL, err);
	if (rc == 0)
		nodecache_qr_drop(r->tc->project, r->zone, r->id);
	cJSON_Delete(op);
	return rc;
}

/*
 * The node cache learns the queued resource where it was created, so a
 * later command given its name without --zone finds it there: pending
 * while it is not ACTIVE (qr NULL), else its membership and its READY
 * nodes.  The cache is a hint: a failure is only logged.
 */
static void
qr_cache(struct qr_run *r, const cJSON *qr, const cJSON *nodes)
{
	struct tpu_err e;
	const cJSON *it;
	cJSON *ids;
	char **v = NULL;
	int i, n = 0;

	if (qr == NULL) {
		nodecache_qr_pending(r->tc->project, r->zone, r->id);
		return;
	}
	tpu_err_init(&e);
	if (sshsel_qr_nodes(qr, &v, &n, &e) != 0) {
		log_info("node cache: %s", e.msg);
		return;
	}
	ids = cJSON_CreateArray();
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(ids, cJSON_CreateString(v[i]));
	nodecache_qr_put(r->tc->project, r->zone, r->id, ids);
	cJSON_Delete(ids);
	sshsel_ids_free(v, n);
	cJSON_ArrayForEach(it, nodes)
	{
		nodecache_put(r->tc->project, r->zone,
		    tpuapi_basename(json_opt_string(it, "name", "")), it);
	}
}

/*
 * The wait was ended by Ctrl-C, SIGTERM or --timeout (rc): with
 * --cancel-on-interrupt, delete what this run created, then report.
 */
static int
qr_stopped(struct qr_run *r, int rc, struct tpu_err *err)
{
	struct tpu_err e2;
	sig_atomic_t sig = retry_interrupted;
	const char *why =
	    rc == TPU_E_TIMEOUT ? "timed out waiting" : "stopped waiting";
	int crc;

	if (!r->created || !r->o->cancel) {
		return tpu_error(err, (enum tpu_errc)rc,
		    "%s for queued resource '%s' in %s (nothing was "
		    "cancelled); check with 'tpuctl queued-resources describe "
		    "%s --zone %s'",
		    why, r->id, r->zone, r->id, r->zone);
	}
	/* Let the clean-up requests through; a second Ctrl-C stops them. */
	retry_interrupted = 0;
	if (!r->ctx->quiet)
		fprintf(stderr,
		    "tpuctl: %s; deleting queued resource '%s' in %s "
		    "(--cancel-on-interrupt)\n",
		    rc == TPU_E_TIMEOUT ? "timed out" : "interrupted", r->id,
		    r->zone);
	tpu_err_init(&e2);
	crc = qr_cancel(r, &e2);
	if (retry_interrupted == 0)
		retry_interrupted = sig;
	if (crc != 0)
		return tpu_error(err, (enum tpu_errc)rc,
		    "%s for queued resource '%s' in %s, and could not delete "
		    "it (%s): delete it with 'tpuctl queued-resources delete "
		    "%s --force --zone %s' so it holds no quota",
		    why, r->id, r->zone, e2.msg, r->id, r->zone);
	return tpu_error(err, (enum tpu_errc)rc,
	    "%s for queued resource '%s' in %s; deleted it so it cannot be "
	    "filled later and hold quota (--no-cancel-on-interrupt keeps it)",
	    why, r->id, r->zone);
}

/* Sleep until the next poll within the deadline. */
static int
qr_sleep(struct qr_run *r, int64_t *interval, struct tpu_err *err)
{
	int64_t wait = *interval, now = tpu_now_ms();

	if (r->deadline > 0) {
		if (now >= r->deadline)
			return tpu_error(err, TPU_E_TIMEOUT, "timed out");
		if (now + wait > r->deadline)
			wait = r->deadline - now;
	}
	*interval = *interval * 3 / 2;
	if (*interval > 15000)
		*interval = 15000;
	return retry_sleep(wait, err);
}

/* Progress: a spinner on a terminal, else one line per state change. */
static void
qr_progress(struct qr_run *r, const char *state, int64_t start, int *spun,
    char *last, size_t lastlen)
{
	static const char spin[] = "|/-\\";
	long long secs = (long long)((tpu_now_ms() - start) / 1000);

	if (r->ctx->quiet)
		return;
	if (isatty(STDERR_FILENO)) {
		fprintf(stderr,
		    "\r%c queued resource '%s' in %s: %s (%llds)\033[K",
		    spin[(*spun)++ % 4], r->id, r->zone, state, secs);
		fflush(stderr);
	} else if (strcmp(state, last) != 0) {
		fprintf(stderr,
		    "tpuctl: queued resource '%s' in %s: %s (%llds)\n", r->id,
		    r->zone, state, secs);
		snprintf(last, lastlen, "%s", state);
	}
}

/*
 * Poll the queued resource until ACTIVE.  FAILED gives TPU_E_OPERATION
 * with the reason (*stockout when code 8); SUSPENDED/SUSPENDING/DELETING
 * too.
 */
static int
qr_wait_active(struct qr_run *r, int *stockout, struct tpu_err *err)
{
	cJSON *qr = NULL;
	int64_t interval = 1000, start = tpu_now_ms();
	char last[64] = "";
	int rc, spun = 0;

	for (;;) {
		const char *state;

		if ((rc = tpuapi_call(&r->tc->api, "GET", r->path, NULL, NULL,
		         1, &qr, err)) != 0)
			break;
		state = json_opt_string(qr, "state.state", "STATE_UNSPECIFIED");
		if (strcmp(state, "ACTIVE") == 0)
			break;
		if (strcmp(state, "FAILED") == 0) {
			const cJSON *e =
			    json_path(qr, "state.failedData.error");
			long long code = json_opt_int64(e, "code", 2);

			*stockout = code == 8;
			rc = tpu_error(err, TPU_E_OPERATION,
			    "queued resource '%s' in zone %s FAILED: %s (code "
			    "%lld)",
			    r->id, r->zone,
			    json_opt_string(e, "message", "no reason given"),
			    code);
			break;
		}
		if (strcmp(state, "SUSPENDED") == 0 ||
		    strcmp(state, "SUSPENDING") == 0 ||
		    strcmp(state, "DELETING") == 0) {
			rc = tpu_error(err, TPU_E_OPERATION,
			    "queued resource '%s' in zone %s is %s (initiated "
			    "by %s) instead of ACTIVE; see 'tpuctl "
			    "queued-resources describe %s --zone %s'",
			    r->id, r->zone, state,
			    json_opt_string(qr, "state.stateInitiator", "?"),
			    r->id, r->zone);
			break;
		}
		qr_progress(r, state, start, &spun, last, sizeof last);
		cJSON_Delete(qr);
		qr = NULL;
		if ((rc = qr_sleep(r, &interval, err)) != 0)
			break;
	}
	if (spun > 0 && !r->ctx->quiet)
		fprintf(stderr, "\r\033[K");
	cJSON_Delete(qr);
	return rc;
}

/* The nodes the queued resource made, each READY with healthy workers. */
static int
qr_wait_nodes(struct qr_run *r, cJSON **nodesp, struct tpu_err *err)
{
	struct tpucmd_wait w;
	cJSON *all = NULL, *mine = cJSON_CreateArray(), *it, *node;
	char *parent, *full;
	int rc, want = r->o->node_id != NULL ? 1 : (int)r->o->count;

	*nodesp = NULL;
	parent = xasprintf("projects/%s/locations/%s", r->tc->project, r->zone);
	rc = tpuapi_list(&r->tc->api, parent, "nodes", "nodes", &all, err);
	full = xasprintf("%s/queuedResources/%s", parent, r->id);
	free(parent);
	if (rc != 0)
		goto out;
	tpucmd_wait_opts(r->ctx, r->tc, &w, r->deadline, NULL);
	w.api.zone = r->zone;
	cJSON_ArrayForEach(it, all)
	{
		const char *name = json_opt_string(it, "name", "");

		if (strcmp(json_opt_string(it, "queuedResource", ""), full) !=
		    0)
			continue;
		node = NULL;
		if ((rc = tpuapi_node_wait_ready(&r->tc->api, r->zone,
		         tpuapi_basename(name), &w.api, &node, err)) != 0)
			goto out;
		cJSON_AddItemToArray(mine, node);
	}
	if (cJSON_GetArraySize(mine) != want)
		log_warn("queued resource '%s' is ACTIVE with %d node(s); "
		         "%d were requested",
		    r->id, cJSON_GetArraySize(mine), want);
	*nodesp = mine;
	mine = NULL;
out:
	free(full);
	cJSON_Delete(all);
	cJSON_Delete(mine);
	return rc;
}

static int
qr_ours(void *arg, int *rcp, struct tpu_err *err)
{
	return qr_is_ours(arg, rcp, err);
}

/* The POST was ended by Ctrl-C, SIGTERM or --timeout: did it get
 * through before?  Then qr_stopped() deletes it. */
static int
qr_post_stopped(void *arg, int rc, struct tpu_err *err)
{
	struct qr_run *r = arg;
	sig_atomic_t sig = retry_interrupted;
	struct tpu_err e2;
	int rc2;

	retry_interrupted = 0;
	tpu_err_init(&e2);
	r->created = qr_is_ours(r, &rc2, &e2) == 1;
	if (retry_interrupted == 0)
		retry_interrupted = sig;
	return qr_stopped(r, rc, err);
}

/* Create in one zone and wait; *resultp the QR (or op with --async). */
static int
qr_create_in_zone(struct qr_run *r, const cJSON *body, cJSON **resultp,
    int *stockout, struct tpu_err *err)
{
	struct tpucmd_create c = {
		.kind = "queued resource",
		.id = r->id,
		.zone = r->zone,
		.ours = qr_ours,
		.stopped = qr_post_stopped,
		.arg = r,
	};
	struct tpucmd_wait w;
	cJSON *op = NULL, *nodes = NULL;
	char *parent, *query, *what;
	int rc, rc2;

	*stockout = 0;
	*resultp = NULL;
	r->created = 0;
	parent = xasprintf("projects/%s/locations/%s/queuedResources",
	    r->tc->project, r->zone);
	query = xasprintf("queuedResourceId=%s", r->id);
	what = xasprintf("creating queued resource '%s' in %s", r->id, r->zone);
	if ((rc = tpucmd_create_post(
	         r->tc, &c, parent, query, body, &op, err)) != 0)
		goto out;
	if (r->ctx->dry_run)
		goto out;
	r->created = 1;
	qr_cache(r, NULL, NULL);
	if (r->o->async) {
		rc = tpucmd_create_async(r->tc, r->path, &op, resultp, err);
		goto out;
	}
	if (op != NULL) {
		tpucmd_wait_opts(r->ctx, r->tc, &w, r->deadline, what);
		w.api.zone = r->zone;
		rc = tpuapi_op_wait(&r->tc->api,
		    json_opt_string(op, "name", ""), &w.api, NULL, err);
		if (rc == TPU_E_OPERATION) {
			struct tpu_err e2;

			*stockout = strstr(err->msg, "(code 8)") != NULL;
			tpu_err_init(&e2);
			if (qr_is_ours(r, &rc2, &e2) == 1 &&
			    qr_cancel(r, &e2) == 0)
				log_warn("deleted queued resource '%s' in %s "
				         "left by the failed creation",
				    r->id, r->zone);
			goto out;
		}
		if (tpucmd_is_stop(rc)) {
			rc = qr_stopped(r, rc, err);
			goto out;
		}
		if (rc != 0)
			goto out;
	}
	rc = qr_wait_active(r, stockout, err);
	if (rc == 0)
		rc = qr_wait_nodes(r, &nodes, err);
	if (tpucmd_is_stop(rc)) {
		rc = qr_stopped(r, rc, err);
		goto out;
	}
	if (rc != 0)
		goto out;
	rc = tpuapi_call(
	    &r->tc->api, "GET", r->path, NULL, NULL, 1, resultp, err);
	if (rc == 0)
		qr_cache(r, *resultp, nodes);
out:
	cJSON_Delete(nodes);
	cJSON_Delete(op);
	free(parent);
	free(query);
	free(what);
	return rc;
}

static int
qr_create(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		TPUCMD_NODE_OPTIONS,
		{ "async", no_argument, NULL, 'A' },
		{ "best-effort", no_argument, NULL, 'B' },
		{ "cancel-on-interrupt", no_argument, NULL, 'c' },
		{ "guaranteed", no_argument, NULL, 'g' },
		{ "max-run-duration", required_argument, NULL, 'D' },
		{ "min-duration", required_argument, NULL, 'm' },
		{ "no-cancel-on-interrupt", no_argument, NULL, 'C' },
		{ "node-count", required_argument, NULL, 'n' },
		{ "node-id", required_argument, NULL, 'i' },
		{ "node-prefix", required_argument, NULL, 'p' },
		{ "provisioning-model", required_argument, NULL, 'M' },
		{ "reservation", required_argument, NULL, 'R' },
		{ "reserved", no_argument, NULL, 'r' },
		{ "spot", no_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "valid-after-duration", required_argument, NULL, 'a' },
		{ "valid-after-time", required_argument, NULL, 'b' },
		{ "valid-until-duration", required_argument, NULL, 'u' },
		{ "valid-until-time", required_argument, NULL, 'v' },
		{ "workload-type", required_argument, NULL, 'W' },
		{ "zones", required_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	struct qr_opts o;
	struct qr_run r;
	struct tpucmd tc;
	cJSON *node = NULL, *body = NULL, *result = NULL, *zones = NULL;
	const cJSON *z;
	char run_id[17];
	int ch, rc, stockout = 0, nzones;

	memset(&o, 0, sizeof o);
	memset(&r, 0, sizeof r);
	memset(&tc, 0, sizeof tc);
	o.cancel = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = tpucmd_node_opt(&o.node, ch, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		switch (ch) {
		case 'A':
			o.async = 1;
			break;
		case 'B':
			o.best_effort = 1;
			break;
		case 'D':
			o.max_run = optarg;
			break;
		case 'M':
			o.provisioning_model = optarg;
			break;
		case 'c':
			o.cancel = 1;
			break;
		case 'C':
			o.cancel = 0;
			break;
		case 'g':
			o.guaranteed = 1;
			break;
		case 'm':
			o.min_duration = optarg;
			break;
		case 'n':
			o.node_count = optarg;
			break;
		case 'i':
			o.node_id = optarg;
			break;
		case 'p':
			o.node_prefix = optarg;
			break;
		case 'R':
			o.reservation = optarg;
			break;
		case 'r':
			o.reserved = 1;
			break;
		case 's':
			o.spot = 1;
			break;
		case 'T':
			o.timeout = optarg;
			break;
		case 'a':
			o.after_dur = optarg;
			break;
		case 'b':
			o.after_time = optarg;
			break;
		case 'u':
			o.until_dur = optarg;
			break;
		case 'v':
			o.until_time = optarg;
			break;
		case 'W':
			o.workload = optarg;
			break;
		case 'z':
			o.zones = optarg;
			break;
		default:
			return cmd_bad_option(argv, ch, err);
		}
	}
	argc -= optind;
	argv += optind;
	if ((rc = cmd_check_operands(&qr_children[0], argc, argv, err)) != 0)
		return rc;
	if ((rc = qr_validate(&o, argv[0], err)) != 0)
		return rc;
	if ((rc = tpucmd_deadline(o.timeout, &r.deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_run_id(run_id, err)) != 0)
		return rc;
	/* --reserved is the node's scheduling; --spot and --guaranteed are
	 * the queued resource's tier. */
	o.node.reserved = o.reserved;
	if ((node = tpucmd_node_body(&o.node, run_id, err)) == NULL)
		return err->code;
	if ((rc = tpucmd_create_zones(
	         ctx, &tc, o.zones, &o.node.acc, &zones, err)) != 0)
		goto out;
	/* bestEffort, provisioningModel, runDuration, workloadType,
	 * autocheckpointEnabled, bootDiskConfig: v2alpha1's */
	o.alpha = o.best_effort || o.flex || o.max_run != NULL ||
	          o.workload != NULL || o.node.alpha;
	if (o.alpha)
		tc.api.version = "v2alpha1";
	nzones = cJSON_GetArraySize(zones);
	r.ctx = ctx;
	r.tc = &tc;
	r.o = &o;
	r.id = argv[0];
	r.run_id = run_id;
	cJSON_ArrayForEach(z, zones)
	{
		r.zone = z->valuestring;
		free(r.path);
		r.path = qr_path(&tc, r.zone, r.id);
		cJSON_Delete(body);
		body = qr_body(&o, node, tc.project, r.zone);
		rc = qr_create_in_zone(&r, body, &result, &stockout, err);
		if (rc == 0 || !stockout || --nzones == 0)
			break;
		/* The next zone gets a fresh request: this one must not be
		 * filled later. */
		if (r.created) {
			struct tpu_err e2;

			tpu_err_init(&e2);
			if (qr_cancel(&r, &e2) != 0) {
				log_warn("%s", e2.msg);
				break;
			}
		}
		log_warn("%s; trying the next zone", err->msg);
	}
	if (rc == 0 && result != NULL) {
		int slices = o.node_id != NULL ? 1 : (int)o.count;

		if (!o.async && !ctx->quiet)
			fprintf(stderr,
			    "tpuctl: queued resource '%s' is ACTIVE in %s: "
			    "%d node%s of %s (%d worker%s each)\n",
			    r.id, r.zone, slices, slices == 1 ? "" : "s",
			    o.node.acc.type, o.node.acc.hosts,
			    o.node.acc.hosts == 1 ? "" : "s");
		if (o.async)
			rc = output_emit(&ctx->out, result, NULL, err);
		else
			rc = tpucmd_emit_result(ctx, result, err);
	}
out:
	tpucmd_close(&tc);
	free(r.path);
	cJSON_Delete(result);
	cJSON_Delete(zones);
	cJSON_Delete(body);
	cJSON_Delete(node);
	return rc;
}

/* list */

/* Table view: short name, zone, accelerator, node count, tier, state. */
static cJSON *
qr_view(const cJSON *list)
{
	cJSON *out = cJSON_CreateArray(), *row;
	const cJSON *it, *spec;
	char zone[128], buf[96];

	cJSON_ArrayForEach(it, list)
	{
		const char *name = json_opt_string(it, "name", "");
		const char *type = NULL, *tier = "-";
		long long nodes = 0;

		row = cJSON_CreateObject();
		cJSON_AddStringToObject(row, "name", tpuapi_basename(name));
		cJSON_AddStringToObject(
		    row, "zone", tpucmd_zone_of(name, zone, sizeof zone));
		cJSON_ArrayForEach(spec, json_path(it, "tpu.nodeSpec"))
		{
			const cJSON *n = json_path(spec, "node");
			const cJSON *ms = json_path(spec, "multisliceParams");

			if (ms == NULL) /* v2alpha1's name */
				ms = json_path(spec, "multiNodeParams");
			nodes +=
			    ms != NULL ? json_opt_int64(ms, "nodeCount", 0) : 1;
			if (type != NULL)
				continue;
			type = json_opt_string(n, "acceleratorType", NULL);
			if (type == NULL &&
			    json_path(n, "acceleratorConfig") != NULL) {
				snprintf(buf, sizeof buf, "%s %s",
				    json_opt_string(
				        n, "acceleratorConfig.type", "?"),
				    json_opt_string(
				        n, "acceleratorConfig.topology", "?"));
				type = buf;
			}
		}
		cJSON_AddStringToObject(
		    row, "acceleratorType", type != NULL ? type : "-");
		cJSON_AddNumberToObject(row, "nodes", (double)nodes);
		if (json_path(it, "spot") != NULL)
			tier = "spot";
		else if (json_path(it, "guaranteed") != NULL)
			tier = "guaranteed";
		else if (json_path(it, "reservationName") != NULL)
			tier = "reserved";
		cJSON_AddStringToObject(row, "tier", tier);
		cJSON_AddStringToObject(row, "state",
		    json_opt_string(it, "state.state", "STATE_UNSPECIFIED"));
		cJSON_AddItemToArray(out, row);
	}
	return out;
}

static int
qr_list(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct tpucmd_list l = {
		.collection = "queuedResources",
		.field = "queuedResources",
		.columns = QR_COLUMNS,
		.view = qr_view,
	};

	return tpucmd_list_run(ctx, &qr_children[1], &l, argc, argv, err);
}

/* describe, delete, reset */

/* getopt for the small verbs: 'a' --async, 'f' --force, 't' --timeout. */
static int
verb_opts(struct tpu_ctx *ctx, const struct cmd_entry *e, int argc, char **argv,
    int *async, int *force, const char **timeout, struct tpu_err *err)
{
	static const struct option all[] = {
		{ "async", no_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, i, rc;

	while ((ch = getopt_long(argc, argv, "", all, NULL)) != -1) {
		if (ch == 'a' && async != NULL)
			*async = 1;
		else if (ch == 'f' && force != NULL)
			*force = 1;
		else if (ch == 't' && timeout != NULL)
			*timeout = optarg;
		else if (ch == '?' || ch == ':')
			return cmd_bad_option(argv, ch, err);
		else {
			cmd_want_usage();
			return tpu_error(err, TPU_E_USAGE,
			    "unknown option '%s'", argv[optind - 1]);
		}
	}
	if ((rc = cmd_check_operands(e, argc - optind, argv + optind, err)) !=
	    0)
		return rc;
	for (i = optind; i < argc; i++) {
		const char *n = argv[i];

		if ((rc = tpucmd_name(ctx, TPUCMD_NAME_QR, &n, err)) != 0)
			return rc == TPU_E_USAGE && strchr(argv[i], '/') != NULL
			           ? rc
			           : tpu_error_prefix(
			                 err, "queued resource id");
		argv[i] += n - argv[i];
	}
	return 0;
}

static int
not_found(int rc, const char *id, const char *zone, struct tpu_err *err)
{
	if (rc == TPU_E_NOTFOUND)
		tpu_error(err, rc, "queued resource '%s' not found in zone %s",
		    id, zone);
	return rc;
}

static int
qr_describe(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	struct tpucmd tc;
	cJSON *qr = NULL;
	char *path;
	int rc;

	if ((rc = verb_opts(
	         ctx, &qr_children[2], argc, argv, NULL, NULL, NULL, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	path = qr_path(&tc, tc.zone, argv[optind]);
	rc = tpuapi_call(&tc.api, "GET", path, NULL, NULL, 1, &qr, err);
	if (rc == 0)
		rc = output_emit(&ctx->out, qr, NULL, err);
	else
		not_found(rc, argv[optind], tc.zone, err);
	cJSON_Delete(qr);
	free(path);
	tpucmd_close(&tc);
	return rc;
}

/* "q1 (ACTIVE, 2 nodes)" lines for the confirmation prompt. */
static int
delete_prompt(struct tpu_ctx *ctx, struct tpucmd *tc, int argc, char **argv,
    int force, struct tpu_err *err)
{
	char *q = xasprintf("Delete %d queued resource%s in %s%s?", argc,
	    argc == 1 ? "" : "s", tc->zone, force ? " and their nodes" : "");
	int i, rc;

	for (i = 0; i < argc; i++) {
		struct tpu_err e2;
		cJSON *qr = NULL, *view = NULL, *one;
		char *path = qr_path(tc, tc->zone, argv[i]), *n;

		tpu_err_init(&e2);
		if (tpuapi_call(
		        &tc->api, "GET", path, NULL, NULL, 1, &qr, &e2) == 0) {
			one = cJSON_CreateArray();
			cJSON_AddItemToArray(one, qr);
			view = qr_view(one);
			n = xasprintf("%s\n  %s (%s, %s, %d node%s)", q,
			    argv[i],
			    json_opt_string(
			        cJSON_GetArrayItem(view, 0), "state", "?"),
			    json_opt_string(cJSON_GetArrayItem(view, 0),
			        "acceleratorType", "?"),
			    (int)json_opt_int64(
			        cJSON_GetArrayItem(view, 0), "nodes", 0),
			    json_opt_int64(
			        cJSON_GetArrayItem(view, 0), "nodes", 0) == 1
			        ? ""
			        : "s");
			cJSON_Delete(one);
			cJSON_Delete(view);
		} else
			n = xasprintf("%s\n  %s", q, argv[i]);
		free(q);
		q = n;
		free(path);
	}
	rc = tpucmd_confirm(ctx, q, err);
	free(q);
	return rc;
}

static int
qr_delete(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	struct tpucmd_delete d = {
		.kind = "queued resource",
		.collection = "queuedResources",
		.timeout_stops = 1,
	};
	struct tpucmd tc;
	const char *timeout = NULL;
	int64_t deadline;
	int rc, async = 0, force = 0;

	if ((rc = verb_opts(ctx, &qr_children[3], argc, argv, &async, &force,
	         &timeout, err)) != 0)
		return rc;
	argc -= optind;
	argv += optind;
	if ((rc = tpucmd_deadline(timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	if (!ctx->quiet && ctx->interactive && !ctx->dry_run &&
	    (rc = delete_prompt(ctx, &tc, argc, argv, force, err)) != 0)
		goto out;
	d.query = force ? "force=true" : NULL;
	d.force_hint = !force;
	rc = tpucmd_delete_each(ctx, &tc, &d, argc, argv, async, deadline, err);
out:
	tpucmd_close(&tc);
	return rc;
}

static int
qr_reset(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	struct tpucmd_wait w;
	struct tpucmd tc;
	cJSON *op = NULL, *qr = NULL, *empty = NULL;
	const char *timeout = NULL, *id;
	char *path = NULL, *verb = NULL, *what = NULL;
	int64_t deadline;
	int rc, async = 0;

	if ((rc = verb_opts(ctx, &qr_children[4], argc, argv, &async, NULL,
	         &timeout, err)) != 0)
		return rc;
	id = argv[optind];
	if ((rc = tpucmd_deadline(timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_open(ctx, &tc, err)) != 0)
		return rc;
	path = qr_path(&tc, tc.zone, id);
	verb = xasprintf("%s:reset", path);
	empty = cJSON_CreateObject();
	if ((rc = tpuapi_call(
	         &tc.api, "POST", verb, NULL, empty, 0, &op, err)) != 0) {
		not_found(rc, id, tc.zone, err);
		goto out;
	}
	if (op == NULL) /* --dry-run */
		goto out;
	if (async) {
		rc = output_emit(&ctx->out, op, NULL, err);
		goto out;
	}
	what = xasprintf("resetting queued resource '%s'", id);
	tpucmd_wait_opts(ctx, &tc, &w, deadline, what);
	if ((rc = tpuapi_op_wait(&tc.api, json_opt_string(op, "name", ""),
	         &w.api, NULL, err)) != 0)
		goto out;
	if ((rc = tpuapi_call(&tc.api, "GET", path, NULL, NULL, 1, &qr, err)) !=
	    0)
		goto out;
	if (!ctx->quiet)
		fprintf(stderr,
		    "tpuctl: reset queued resource '%s': %s, queued again\n",
		    id, json_opt_string(qr, "state.state", "?"));
	rc = tpucmd_emit_result(ctx, qr, err);
out:
	cJSON_Delete(empty);
	cJSON_Delete(op);
	cJSON_Delete(qr);
	free(path);
	free(verb);
	free(what);
	tpucmd_close(&tc);
	return rc;
}

const struct cmd_entry cmd_queued_resources_entry = {
	.name = "queued-resources",
	.alias = NULL,
	.usage = "queued-resources create|list|describe|delete|reset ...",
	.summary = "request TPU capacity through queued resources",
	.min_args = 0,
	.max_args = -1,
	.flags = 0,
	.exec = NULL,
	.children = qr_children,
};
