/*
 * "tpuctl create NODE": create a TPU VM or pod slice and wait until it is
 * READY with every worker healthy.  Everything the user gave is checked
 * against the catalog before any request.  Safe to retry (RELIABILITY.md
 * R4): the node carries a tpuctl-run-id label, so an ambiguous failure or
 * a 409 is resolved by reading the node back.  With --zones, a stockout
 * in one zone moves on to the next; a node left behind by a failed
 * creation is deleted so it holds no quota.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "config.h"
#include "cmd.h"
#include "json.h"
#include "nodecache.h"
#include "log.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

#define RUN_ID_LABEL TPUCMD_RUN_ID_LABEL

struct create_opts {
	struct tpucmd_node_opts node;
	const char *timeout, *zones, *provisioning_model, *reservation;
	int async;
};

/*
 * --reservation (gcloud: the name, or projects/P/reservations/R when not in
 * the default project): v2alpha1's SchedulingConfig.reservationName.
 */
static int
check_reservation(const char *arg, struct tpu_err *err)
{
	struct tpu_err e2;
	char project[128], id[128], tail;

	tpu_err_init(&e2);
	if (strchr(arg, '/') == NULL) {
		if (catalog_node_name_validate(arg, &e2) == 0)
			return 0;
	} else if (sscanf(arg,
	               "projects/%127[a-z0-9:.-]/reservations/"
	               "%127[a-z0-9-]%c",
	               project, id, &tail) == 2 &&
	           catalog_node_name_validate(id, &e2) == 0)
		return 0;
	return tpu_error(err, TPU_E_USAGE,
	    "invalid --reservation '%s': a reservation id (lowercase letters, "
	    "digits, '-') or projects/PROJECT/reservations/ID",
	    arg);
}

/* 1 if the node exists and carries our run id, 0 if not ours, -1 absent;
 * negative errc on other errors (as *rcp). */
static int
node_is_ours(struct tpucmd *tc, const char *zone, const char *name,
    const char *run_id, int *rcp, struct tpu_err *err)
{
	struct tpu_err e2;
	cJSON *node = NULL;
	char *path = tpuapi_node_path(&tc->api, zone, name);
	int rc, ours;

	tpu_err_init(&e2);
	rc = tpuapi_call(&tc->api, "GET", path, NULL, NULL, 1, &node, &e2);
	free(path);
	*rcp = 0;
	if (rc == TPU_E_NOTFOUND)
		return -1;
	if (rc != 0) {
		*err = e2;
		*rcp = rc;
		return 0;
	}
	ours = strcmp(json_opt_string(node, "labels." RUN_ID_LABEL, ""),
	           run_id) == 0;
	cJSON_Delete(node);
	return ours;
}

/* Delete a node this run created but that cannot serve (failed create). */
static void
cleanup_node(struct tpucmd *tc, const char *zone, const char *name,
    const char *run_id, const struct tpuapi_wait *w)
{
	struct tpu_err e2;
	cJSON *op = NULL;
	char *path;
	int rc;

	tpu_err_init(&e2);
	if (node_is_ours(tc, zone, name, run_id, &rc, &e2) != 1)
		return;
	log_warn("deleting node '%s' in %s left by the failed creation, so it "
	         "holds no quota",
	    name, zone);
	path = tpuapi_node_path(&tc->api, zone, name);
	if (tpuapi_call(&tc->api, "DELETE", path, NULL, NULL, 1, &op, &e2) ==
	        0 &&
	    op != NULL)
		tpuapi_op_wait(
		    &tc->api, json_opt_string(op, "name", ""), w, NULL, &e2);
	cJSON_Delete(op);
	free(path);
}

struct create_run {
	struct tpucmd *tc;
	const char *zone, *name, *run_id;
};

static int
create_ours(void *arg, int *rcp, struct tpu_err *err)
{
	struct create_run *cr = arg;

	return node_is_ours(cr->tc, cr->zone, cr->name, cr->run_id, rcp, err);
}

/*
 * The newest "create" operation on node name (operations.list of the zone,
 * by metadata target and verb), for a creation resolved by reading the
 * node back (R4): its outcome (a stockout, code 8) is the creation's, and
 * waiting on the node alone sees it vanish as "not found".  NULL when
 * none is listed or the list fails (the node wait then decides).
 */
static cJSON *
find_create_op(struct tpucmd *tc, const char *zone, const char *name)
{
	struct tpu_err e2;
	cJSON *ops = NULL, *op, *best = NULL;
	char *parent = xasprintf("projects/%s/locations/%s", tc->project, zone);
	char *target = xasprintf("%s/nodes/%s", parent, name);
	const char *bt = "";

	tpu_err_init(&e2);
	if (tpuapi_list(
	        &tc->api, parent, "operations", "operations", &ops, &e2) == 0) {
		cJSON_ArrayForEach(op, ops)
		{
			const char *t =
			    json_opt_string(op, "metadata.target", "");
			const char *v =
			    json_opt_string(op, "metadata.verb", "");
			const char *ct =
			    json_opt_string(op, "metadata.createTime", "");

			if (strcmp(t, target) == 0 &&
			    strcmp(v, "create") == 0 &&
			    (best == NULL || strcmp(ct, bt) >= 0)) {
				best = op;
				bt = ct;
			}
		}
	}
	if (best != NULL)
		best = cJSON_Duplicate(best, 1);
	cJSON_Delete(ops);
	free(parent);
	free(target);
	return best;
}

/*
 * Create in one zone.  Returns 0 (node ready in *nodep, or *opp with
 * --async), or an errc; a stockout sets *stockout.
 */
static int
create_in_zone(struct tpu_ctx *ctx, struct tpucmd *tc, const char *zone,
    const char *name, const cJSON *body, const char *run_id,
    const struct create_opts *o, int64_t deadline, cJSON **resultp,
    int *stockout, struct tpu_err *err)
{
	struct create_run cr = {
		.tc = tc,
		.zone = zone,
		.name = name,
		.run_id = run_id,
	};
	struct tpucmd_create c = {
		.kind = "node",
		.id = name,
		.zone = zone,
		.ours = create_ours,
		.arg = &cr,
	};
	struct tpucmd_wait w;
	cJSON *op = NULL;
	char *parent, *query, *what;
	int rc;

	*stockout = 0;
	*resultp = NULL;
	parent = xasprintf("projects/%s/locations/%s/nodes", tc->project, zone);
	query = xasprintf("nodeId=%s", name);
	what = xasprintf("creating node '%s' in %s", name, zone);
	tpucmd_wait_opts(ctx, tc, &w, deadline, what);
	w.api.zone = zone;
	if ((rc = tpucmd_create_post(tc, &c, parent, query, body, &op, err)) !=
	    0)
		goto out;
	if (ctx->dry_run)
		goto out;
	if (op == NULL && !o->async) /* resolved through R4 */
		op = find_create_op(tc, zone, name);
	if (o->async) {
		char *path = tpuapi_node_path(&tc->api, zone, name);

		rc = tpucmd_create_async(tc, path, &op, resultp, err);
		free(path);
		goto out;
	}
	if (op != NULL) {
		rc = tpuapi_op_wait(&tc->api, json_opt_string(op, "name", ""),
		    &w.api, NULL, err);
		if (rc == TPU_E_OPERATION) {
			*stockout = strstr(err->msg, "(code 8)") != NULL;
			cleanup_node(tc, zone, name, run_id, &w.api);
			goto out;
		}
		if (rc != 0)
			goto out;
	}
	rc = tpuapi_node_wait_ready(&tc->api, zone, name, &w.api, resultp, err);
	if (rc == 0) /* ssh right after create needs no API call */
		nodecache_put(tc->project, zone, name, *resultp);
out:
	cJSON_Delete(op);
	free(parent);
	free(query);
	free(what);
	return rc;
}

int
tpucmd_create_node(struct tpu_ctx *ctx, struct tpucmd *tc, const char *zone,
    const char *name, cJSON *body, int64_t deadline, cJSON **resultp,
    int *stockout, struct tpu_err *err)
{
	struct create_opts o;
	cJSON *labels;
	char run_id[17];
	int rc, so = 0;

	if (stockout == NULL)
		stockout = &so;
	*stockout = 0;
	memset(&o, 0, sizeof o);
	if ((rc = tpucmd_run_id(run_id, err)) != 0)
		return rc;
	labels = cJSON_GetObjectItemCaseSensitive(body, "labels");
	if (labels == NULL)
		labels = cJSON_AddObjectToObject(body, "labels");
	cJSON_DeleteItemFromObject(labels, RUN_ID_LABEL);
	cJSON_AddStringToObject(labels, RUN_ID_LABEL, run_id);
	return create_in_zone(ctx, tc, zone, name, body, run_id, &o, deadline,
	    resultp, stockout, err);
}

static int
create_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		TPUCMD_NODE_OPTIONS,
		{ "async", no_argument, NULL, 'A' },
		{ "preemptible", no_argument, NULL, 'p' },
		{ "provisioning-model", required_argument, NULL, 'M' },
		{ "reservation", required_argument, NULL, 'R' },
		{ "reserved", no_argument, NULL, 'r' },
		{ "spot", no_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "zones", required_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	struct create_opts o;
	struct tpucmd tc;
	cJSON *body = NULL, *result = NULL, *zones = NULL;
	const cJSON *z;
	char run_id[17];
	int64_t deadline;
	const char *zone = NULL, *name;
	int ch, rc, stockout = 0, nzones;

	memset(&o, 0, sizeof o);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((rc = tpucmd_node_opt(&o.node, ch, optarg, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		switch (ch) {
		case 'A':
			o.async = 1;
			break;
		case 'p':
			o.node.preemptible = 1;
			break;
		case 'M':
			o.provisioning_model = optarg;
			break;
		case 'R':
			o.reservation = optarg;
			break;
		case 'r':
			o.node.reserved = 1;
			break;
		case 'P':
			o.node.spot = 1;
			break;
		case 'T':
			o.timeout = optarg;
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
	if ((rc = cmd_check_operands(&cmd_create_entry, argc, argv, err)) != 0)
		return rc;
	/* a full resource name sets project and zone (one zone: no --zones) */
	name = argv[0];
	if ((rc = tpucmd_name(ctx, TPUCMD_NAME_NODE, &name, err)) != 0)
		return rc;
	if (name != argv[0] && o.zones != NULL)
		return tpu_error(err, TPU_E_USAGE,
		    "--zones does not go with a full resource name ('%s' "
		    "names its zone)",
		    argv[0]);
	if (o.provisioning_model != NULL) {
		if (o.node.spot || o.node.preemptible || o.node.reserved)
			return tpu_error(err, TPU_E_USAGE,
			    "--provisioning-model excludes --spot, "
			    "--preemptible and --reserved");
		if ((rc = tpucmd_provisioning_model(o.provisioning_model,
		         &o.node.spot, &o.node.reserved, NULL, err)) != 0)
			return rc;
	}
	if (o.reservation != NULL && !o.node.reserved)
		return tpu_error(err, TPU_E_USAGE,
		    "--reservation goes with --reserved or "
		    "--provisioning-model reservation-bound");
	if (o.reservation != NULL &&
	    (rc = check_reservation(o.reservation, err)) != 0)
		return rc;
	if ((rc = tpucmd_deadline(o.timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = tpucmd_run_id(run_id, err)) != 0)
		return rc;
	if ((body = tpucmd_node_body(&o.node, run_id, err)) == NULL)
		return err->code;
	if ((rc = tpucmd_create_zones(
	         ctx, &tc, o.zones, &o.node.acc, &zones, err)) != 0)
		goto out;
	if (o.reservation != NULL) { /* v2alpha1's, as is the full name */
		char *r = strchr(o.reservation, '/') != NULL
		              ? xstrdup(o.reservation)
		              : xasprintf("projects/%s/reservations/%s",
		                    tc.project, o.reservation);

		cJSON_AddStringToObject(
		    cJSON_GetObjectItemCaseSensitive(body, "schedulingConfig"),
		    "reservationName", r);
		free(r);
	}
	/* autocheckpointEnabled, bootDiskConfig and
	 * schedulingConfig.reservationName are v2alpha1's only */
	if (o.node.alpha || o.reservation != NULL)
		tc.api.version = "v2alpha1";
	nzones = cJSON_GetArraySize(zones);
	cJSON_ArrayForEach(z, zones)
	{
		zone = z->valuestring;
		rc = create_in_zone(ctx, &tc, z->valuestring, name, body,
		    run_id, &o, deadline, &result, &stockout, err);
		if (rc == 0 || !stockout)
			break;
		if (--nzones > 0)
			log_warn("%s; trying the next zone", err->msg);
	}
	if (rc == 0 && result != NULL) {
		if (!o.async && !ctx->quiet)
			fprintf(stderr,
			    "tpuctl: created node '%s' (%s, %d "
			    "worker%s) in %s\n",
			    name, o.node.acc.type, o.node.acc.hosts,
			    o.node.acc.hosts == 1 ? "" : "s", zone);
		if (o.async)
			rc = output_emit(&ctx->out, result, NULL, err);
		else
			rc = tpucmd_emit_result(ctx, result, err);
	}
	tpucmd_close(&tc);
out:
	cJSON_Delete(result);
	cJSON_Delete(zones);
	cJSON_Delete(body);
	return rc;
}

const struct cmd_entry cmd_create_entry = {
	.name = "create",
	.alias = NULL,
	.usage =
	    "create [--async] [--autocheckpoint-enabled] [--internal-ips] "
	    "[--metadata-raw] [--shielded-secure-boot] "
	    "[--preemptible | --reserved | --spot | "
	    "--provisioning-model model] [--reservation name] "
	    "[--accelerator-type type | --type generation --topology AxBxC] "
	    "[--boot-disk confidential-compute=bool,kms-key=key] "
	    "[--data-disk source=disk,mode=mode] [--description text] "
	    "[--labels k=v,...] [--metadata k=v,...] "
	    "[--metadata-from-file k=file,...] [--network network] "
	    "[--network-config network=n,subnetwork=s,external-ips=bool] "
	    "[--queue-count n] [--range cidr] "
	    "[--scopes scope,...] [--service-account email] "
	    "[--subnetwork subnetwork] [--tags tag,...] "
	    "[--timeout duration] [--version runtime] [--zone zone] "
	    "[--zones zone,...] node",
	.summary = "create a TPU VM or pod slice and wait until it is ready",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_AUTH | CMD_NEEDS_ZONE,
	.exec = create_exec,
};
