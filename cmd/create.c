/*
 * "tpuctl create NODE": create a TPU VM or pod slice and wait until it is
 * READY with every worker healthy.  Everything the user gave is checked
 * against the catalog before any request.  Safe to retry (RELIABILITY.md
 * R4): the node carries a tpuctl-run-id label, so an ambiguous failure or
 * a 409 is resolved by reading the node back.  With --zones, a stockout
 * in one zone moves on to the next; a node left behind by a failed
 * creation is deleted so it holds no quota.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "cmd.h"
#include "fsutil.h"
#include "json.h"
#include "log.h"
#include "tpucmd.h"
#include "util.h"
#include "xmalloc.h"

#define RUN_ID_LABEL "tpuctl-run-id"
#define MAX_METADATA_FILE (256 * 1024)

struct create_opts {
	const char *accel, *gen, *topology, *version, *network, *subnetwork;
	const char *tags, *service_account, *scopes, *labels, *metadata;
	const char *metadata_files, *description, *timeout, *zones;
	const char *disks[16];
	int ndisks, spot, preemptible, reserved, internal_ips, async;
	int metadata_raw;
};

static int
read_small_file(const char *path, char **out, struct tpu_err *err)
{
	struct buf b;
	int rc;

	buf_init(&b, MAX_METADATA_FILE);
	if ((rc = fsutil_read_file(path, 0, &b, NULL, err)) != 0) {
		buf_release(&b);
		if (rc == TPU_E_NOTFOUND || rc == TPU_E_IO)
			rc = err->code = TPU_E_USAGE;
		return tpu_error_prefix(err, "--metadata-from-file");
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

/* "k=v,k2=v2" (or k=FILE with from_file) into obj, validated. */
static int
parse_metadata(
    const char *arg, int from_file, int raw, cJSON *obj, struct tpu_err *err)
{
	char *copy = xstrdup(arg), *item, *save = NULL, *value = NULL;
	int rc = 0;

	for (item = strtok_r(copy, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (eq == NULL || eq == item) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "invalid %s item '%s': expected KEY=%s",
			    from_file ? "--metadata-from-file" : "--metadata",
			    item, from_file ? "FILE" : "VALUE");
			break;
		}
		*eq = '\0';
		if (from_file) {
			if ((rc = read_small_file(eq + 1, &value, err)) != 0)
				break;
		} else
			value = xstrdup(eq + 1);
		if ((rc = catalog_metadata_validate(item, value, raw, err)) !=
		    0)
			break;
		if (cJSON_GetObjectItemCaseSensitive(obj, item) != NULL) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "metadata key '%s' given twice", item);
			break;
		}
		cJSON_AddStringToObject(obj, item, value);
		free(value);
		value = NULL;
	}
	free(value);
	free(copy);
	return rc;
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

/* Build the Node body; every check happens here, before any request. */
static int
build_node(const struct create_opts *o, const char *run_id,
    struct catalog_accel *acc, cJSON **out, struct tpu_err *err)
{
	cJSON *node = cJSON_CreateObject(), *labels = NULL, *md, *x;
	const char *version;
	int rc, i;

	*out = NULL;
	if (o->accel != NULL && (o->gen != NULL || o->topology != NULL) &&
	    o->topology == NULL) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "--type goes with --topology, not --accelerator-type");
		goto fail;
	}
	if (o->accel != NULL) {
		if ((rc = catalog_accel_parse(o->accel, acc, err)) != 0)
			goto fail;
		if (o->topology != NULL && (rc = catalog_accel_topology_match(
		                                acc, o->topology, err)) != 0)
			goto fail;
	} else if (o->gen != NULL && o->topology != NULL) {
		if ((rc = catalog_accel_from_topology(
		         o->gen, o->topology, acc, err)) != 0)
			goto fail;
	} else {
		rc = tpu_error(err, TPU_E_USAGE,
		    "missing slice shape: pass --accelerator-type TYPE (e.g. "
		    "v4-32) or --type GENERATION --topology AxBxC");
		goto fail;
	}
	if (o->spot + o->preemptible + o->reserved > 1) {
		rc = tpu_error(err, TPU_E_USAGE,
		    "--spot, --preemptible and --reserved exclude each other");
		goto fail;
	}
	version = o->version != NULL ? o->version : acc->gen->runtimes[0];
	if (o->version == NULL)
		log_info(
		    "no --version given: using %s for %s", version, acc->type);
	else if (!catalog_runtime_known(acc->gen, version))
		log_warn("runtime version '%s' is not known for %s; sending it "
		         "anyway (the server decides)",
		    version, acc->gen->name);

	if (o->topology != NULL) {
		x = cJSON_AddObjectToObject(node, "acceleratorConfig");
		cJSON_AddStringToObject(x, "type", acc->gen->config_type);
		cJSON_AddStringToObject(x, "topology", o->topology);
	} else
		cJSON_AddStringToObject(node, "acceleratorType", acc->type);
	cJSON_AddStringToObject(node, "runtimeVersion", version);
	if (o->description != NULL)
		cJSON_AddStringToObject(node, "description", o->description);
	if (o->network != NULL || o->subnetwork != NULL || o->internal_ips) {
		x = cJSON_AddObjectToObject(node, "networkConfig");
		if (o->network != NULL)
			cJSON_AddStringToObject(x, "network", o->network);
		if (o->subnetwork != NULL)
			cJSON_AddStringToObject(x, "subnetwork", o->subnetwork);
		cJSON_AddBoolToObject(x, "enableExternalIps", !o->internal_ips);
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
		if ((rc = catalog_labels_parse(o->labels, &labels, err)) != 0)
			goto fail;
		if (cJSON_GetObjectItemCaseSensitive(labels, RUN_ID_LABEL)) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "label '%s' is reserved for tpuctl", RUN_ID_LABEL);
			goto fail;
		}
	} else
		labels = cJSON_CreateObject();
	cJSON_AddStringToObject(labels, RUN_ID_LABEL, run_id);
	if ((rc = catalog_labels_validate(labels, err)) != 0)
		goto fail;
	cJSON_AddItemToObject(node, "labels", labels);
	labels = NULL;
	if (o->metadata != NULL || o->metadata_files != NULL) {
		md = cJSON_AddObjectToObject(node, "metadata");
		if (o->metadata != NULL && (rc = parse_metadata(o->metadata, 0,
		                                o->metadata_raw, md, err)) != 0)
			goto fail;
		if (o->metadata_files != NULL &&
		    (rc = parse_metadata(
		         o->metadata_files, 1, o->metadata_raw, md, err)) != 0)
			goto fail;
	}
	if (o->ndisks > 0) {
		x = cJSON_AddArrayToObject(node, "dataDisks");
		for (i = 0; i < o->ndisks; i++)
			if ((rc = parse_disk(o->disks[i], x, err)) != 0)
				goto fail;
	}
	*out = node;
	return 0;
fail:
	cJSON_Delete(labels);
	cJSON_Delete(node);
	return rc;
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
	struct tpuapi_wait w;
	cJSON *op = NULL;
	char *parent, *query, *what;
	int rc, attempt, ours;

	*stockout = 0;
	*resultp = NULL;
	parent = xasprintf("projects/%s/locations/%s/nodes", tc->project, zone);
	query = xasprintf("nodeId=%s", name);
	what = xasprintf("creating node '%s' in %s", name, zone);
	tpucmd_wait_opts(ctx, tc, &w, deadline, what);
	w.zone = zone;
	for (attempt = 1;; attempt++) {
		rc = tpuapi_call(
		    &tc->api, "POST", parent, query, body, 0, &op, err);
		if (rc == 0)
			break;
		if (rc != TPU_E_CONFLICT && rc != TPU_E_TRANSIENT &&
		    rc != TPU_E_API)
			goto out;
		/* Ambiguous, or the node exists: was it us (R4)? */
		ours = node_is_ours(tc, zone, name, run_id, &rc, err);
		if (rc != 0)
			goto out;
		if (ours == 1) {
			log_info("node '%s' exists with this run's id: the "
			         "creation went through",
			    name);
			break;
		}
		if (ours == 0) {
			rc = tpu_error(err, TPU_E_CONFLICT,
			    "node '%s' already exists in zone %s and was not "
			    "created by this run",
			    name, zone);
			goto out;
		}
		if (attempt >= 3) {
			rc = tpu_error(err, TPU_E_TRANSIENT,
			    "could not create node '%s' in %s after %d "
			    "attempts",
			    name, zone, attempt);
			goto out;
		}
	}
	if (ctx->dry_run)
		goto out;
	if (o->async) {
		if (op == NULL) {
			/* Resolved through R4: report the node instead. */
			char *path = tpuapi_node_path(&tc->api, zone, name);

			rc = tpuapi_call(
			    &tc->api, "GET", path, NULL, NULL, 1, resultp, err);
			free(path);
		} else {
			*resultp = op;
			op = NULL;
		}
		goto out;
	}
	if (op != NULL) {
		rc = tpuapi_op_wait(
		    &tc->api, json_opt_string(op, "name", ""), &w, NULL, err);
		if (rc == TPU_E_OPERATION) {
			*stockout = strstr(err->msg, "(code 8)") != NULL;
			cleanup_node(tc, zone, name, run_id, &w);
			goto out;
		}
		if (rc != 0)
			goto out;
	}
	rc = tpuapi_node_wait_ready(&tc->api, zone, name, &w, resultp, err);
out:
	cJSON_Delete(op);
	free(parent);
	free(query);
	free(what);
	return rc;
}

/* A random 16-hex-digit id for the run-id label. */
static int
make_run_id(char id[17], struct tpu_err *err)
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

static int
create_exec(struct tpu_ctx *ctx, int argc, char **argv, struct tpu_err *err)
{
	static const struct option opts[] = {
		{ "accelerator-type", required_argument, NULL, 'a' },
		{ "async", no_argument, NULL, 'A' },
		{ "data-disk", required_argument, NULL, 'D' },
		{ "description", required_argument, NULL, 'd' },
		{ "internal-ips", no_argument, NULL, 'i' },
		{ "labels", required_argument, NULL, 'l' },
		{ "metadata", required_argument, NULL, 'm' },
		{ "metadata-from-file", required_argument, NULL, 'M' },
		{ "metadata-raw", no_argument, NULL, 'R' },
		{ "network", required_argument, NULL, 'n' },
		{ "preemptible", no_argument, NULL, 'p' },
		{ "reserved", no_argument, NULL, 'r' },
		{ "scopes", required_argument, NULL, 'S' },
		{ "service-account", required_argument, NULL, 's' },
		{ "spot", no_argument, NULL, 'P' },
		{ "subnetwork", required_argument, NULL, 'N' },
		{ "tags", required_argument, NULL, 'g' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "topology", required_argument, NULL, 'o' },
		{ "type", required_argument, NULL, 't' },
		{ "version", required_argument, NULL, 'v' },
		{ "zones", required_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	struct create_opts o;
	struct catalog_accel acc;
	struct tpucmd tc;
	cJSON *body = NULL, *result = NULL, *zones = NULL;
	const cJSON *z;
	char run_id[17];
	int64_t deadline;
	const char *zone = NULL;
	int ch, rc, stockout = 0, nzones;

	memset(&o, 0, sizeof o);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			o.accel = optarg;
			break;
		case 'A':
			o.async = 1;
			break;
		case 'D':
			if (o.ndisks == (int)nitems(o.disks))
				return tpu_error(err, TPU_E_USAGE,
				    "at most %zu --data-disk options",
				    nitems(o.disks));
			o.disks[o.ndisks++] = optarg;
			break;
		case 'd':
			o.description = optarg;
			break;
		case 'i':
			o.internal_ips = 1;
			break;
		case 'l':
			o.labels = optarg;
			break;
		case 'm':
			o.metadata = optarg;
			break;
		case 'M':
			o.metadata_files = optarg;
			break;
		case 'R':
			o.metadata_raw = 1;
			break;
		case 'n':
			o.network = optarg;
			break;
		case 'p':
			o.preemptible = 1;
			break;
		case 'r':
			o.reserved = 1;
			break;
		case 'S':
			o.scopes = optarg;
			break;
		case 's':
			o.service_account = optarg;
			break;
		case 'P':
			o.spot = 1;
			break;
		case 'N':
			o.subnetwork = optarg;
			break;
		case 'g':
			o.tags = optarg;
			break;
		case 'T':
			o.timeout = optarg;
			break;
		case 'o':
			o.topology = optarg;
			break;
		case 't':
			o.gen = optarg;
			break;
		case 'v':
			o.version = optarg;
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
	if ((rc = catalog_node_name_validate(argv[0], err)) != 0)
		return rc;
	if ((rc = tpucmd_deadline(o.timeout, &deadline, err)) != 0)
		return rc;
	if ((rc = make_run_id(run_id, err)) != 0)
		return rc;
	if ((rc = build_node(&o, run_id, &acc, &body, err)) != 0)
		return rc;
	if (o.zones != NULL) {
		zones = cJSON_CreateArray();
		{
			char *copy = xstrdup(o.zones), *it, *save = NULL;

			for (it = strtok_r(copy, ",", &save); it != NULL;
			     it = strtok_r(NULL, ",", &save)) {
				if ((rc = catalog_zone_validate(it, err)) != 0)
					break;
				cJSON_AddItemToArray(
				    zones, cJSON_CreateString(it));
			}
			free(copy);
		}
		if (rc != 0)
			goto out;
		if (cJSON_GetArraySize(zones) == 0) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "--zones needs at least one zone");
			goto out;
		}
		/* --zones stands in for --zone: tpucmd_open needs one. */
		config_set_flag(ctx->cfg, "compute/zone",
		    cJSON_GetArrayItem(zones, 0)->valuestring);
	}
	if ((rc = tpucmd_open(ctx, &tc, TPUCMD_ZONE, err)) != 0)
		goto out;
	if (zones == NULL) {
		zones = cJSON_CreateArray();
		cJSON_AddItemToArray(zones, cJSON_CreateString(tc.zone));
	}
	nzones = cJSON_GetArraySize(zones);
	/* A zone the catalog knows must offer the generation (R12); an
	 * unknown zone is left to the server. */
	cJSON_ArrayForEach(z, zones)
	{
		const struct catalog_zone *cz =
		    catalog_zone_find(z->valuestring);

		if (cz != NULL && !catalog_zone_offers(cz, acc.gen)) {
			rc = tpu_error(err, TPU_E_USAGE,
			    "zone %s does not offer %s TPUs (accelerator type "
			    "%s); see 'tpuctl accelerator-types list --zone "
			    "%s'",
			    z->valuestring, acc.gen->name, acc.type,
			    z->valuestring);
			goto close;
		}
	}
	cJSON_ArrayForEach(z, zones)
	{
		zone = z->valuestring;
		rc = create_in_zone(ctx, &tc, z->valuestring, argv[0], body,
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
			    argv[0], acc.type, acc.hosts,
			    acc.hosts == 1 ? "" : "s", zone);
		if (o.async)
			rc = output_emit(&ctx->out, result, NULL, err);
		else
			rc = tpucmd_emit_result(ctx, result, err);
	}
close:
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
	    "create [--async] [--internal-ips] [--metadata-raw] "
	    "[--preemptible | --reserved | --spot] "
	    "[--accelerator-type type | --type generation --topology AxBxC] "
	    "[--data-disk source=disk,mode=mode] [--description text] "
	    "[--labels k=v,...] [--metadata k=v,...] "
	    "[--metadata-from-file k=file,...] [--network network] "
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
