/*
 * Shared plumbing of the commands that talk to the Cloud TPU API: resolve
 * and validate project and zone before anything is sent (RELIABILITY.md
 * R12), open the API client, confirmation prompts and the --timeout /
 * --async handling of long-running operations.
 */
#ifndef TPUCTL_TPUCMD_H
#define TPUCTL_TPUCMD_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "catalog.h"
#include "ctx.h"
#include "err.h"
#include "tpuapi.h"

struct tpucmd {
	struct tpuapi api;
	const char *project;
	const char *zone; /* NULL when not needed; "-" for all zones */
	int opened;
};

/*
 * Validate project and zone from the configuration, as the running
 * command's entry declares (cmd_needs(): CMD_NEEDS_PROJECT, CMD_NEEDS_ZONE,
 * CMD_ZONE_ANY), then set up the HTTP client and the API.  Nothing is
 * sent.  0 or TPU_E_USAGE naming what is missing and how to set it.
 */
int tpucmd_open(struct tpu_ctx *, struct tpucmd *, struct tpu_err *);
void tpucmd_close(struct tpucmd *);

/*
 * Ask "question [y/N]" on a terminal; --quiet or a non-terminal stdin
 * answers yes (scripts and CI pass --quiet explicitly or run without a
 * terminal).  Returns 0 to go on, TPU_E_DECLINED (exit 1, not 130: no
 * signal came) when declined.
 */
int tpucmd_confirm(struct tpu_ctx *, const char *question, struct tpu_err *);

/* Parse --timeout into a monotonic deadline (tpu_now_ms() + value). */
int tpucmd_deadline(const char *arg, int64_t *deadline_ms, struct tpu_err *);

/*
 * A wait of a command: the API's options (pass &w.api to tpuapi_op_wait
 * and tpuapi_node_wait_ready) with the hooks that draw progress on stderr
 * (a spinner on a terminal, else one "tpuctl: WHAT: STATE (Ns)" line per
 * change; none with quiet or without what) and name the tpuctl command
 * that resumes the wait.  Not copied: api.arg points at it.
 */
struct tpucmd_wait {
	struct tpuapi_wait api;
	const char *what; /* "creating node 'n1'"; NULL: no progress */
	int tty;          /* 1: spinner, 0: state lines */
	int quiet;        /* no progress at all */
	char last[64];    /* the last state line drawn */
	unsigned spun;    /* spinner frames drawn in this wait */
};

/* Fill the wait options from the context. */
void tpucmd_wait_opts(struct tpu_ctx *, struct tpucmd *, struct tpucmd_wait *,
    int64_t deadline_ms, const char *what);

/*
 * For table output: a copy of a list of resources with "name" cut to its
 * last component and "zone" added from the name.  Other formats get the
 * API's JSON unchanged.  The caller deletes the result.
 */
cJSON *tpucmd_table_view(const cJSON *list);

/* The zone of a resource name "projects/p/locations/Z/..." into buf. */
const char *tpucmd_zone_of(const char *name, char *buf, size_t len);

/*
 * Print a mutating command's final resource: with --format json, yaml,
 * value(), table(...) and the like on stdout; with the default table
 * nothing (a summary goes to stderr instead).
 */
int tpucmd_emit_result(struct tpu_ctx *, const cJSON *, struct tpu_err *);

/* 1 when a --filter looks like tpuctl's old FIELD=VALUE,... form (a
 * warning says the form is gone). */
int tpucmd_old_filter(const char *);

/* What a full resource name given for a node or queued resource may be. */
enum tpucmd_name_kinds {
	TPUCMD_NAME_NODE = (1 << 0), /* projects/P/locations/Z/nodes/N */
	TPUCMD_NAME_QR = (1 << 1),   /* .../queuedResources/Q */
	/* A short name without --zone that the node cache knows in one
	 * other zone only is used there (one line on stderr says so). */
	TPUCMD_NAME_CACHED_ZONE = (1 << 2),
};

/*
 * The one place a node or queued-resource operand is resolved and
 * checked: a short name, or a full resource name (what --format
 * 'value(name)' prints) of one of kinds, which sets core/project and
 * compute/zone for the command (a --project or --zone that names another
 * is a usage error naming both) and *name is moved to its last
 * component.  Then the id is checked (catalog_node_name_validate).
 */
int tpucmd_name(
    struct tpu_ctx *, int kinds, const char **name, struct tpu_err *);

/*
 * 0 when a node of this state (NULL: unknown) can take SSH sessions
 * (READY), else TPU_E_PRECONDITION (exit 4) with one line naming the
 * state and what to do: "tpuctl start NODE" for a stopped node, wait for
 * one on its way, delete and recreate a preempted one.
 */
int tpucmd_node_ready(const char *name, const char *state, struct tpu_err *);

struct buf;
/*
 * Where else resource id of collection ("nodes", "queuedResources")
 * exists: one list of every zone (locations/-), the zones other than
 * not_in appended to out as "A, B".  The count of zones; 0 also when the
 * list failed (a hint for a "not found" message, never an error).
 */
int tpucmd_where(struct tpucmd *, const char *collection, const char *id,
    const char *not_in, struct buf *out);

/* 1 when rc ended a wait: --timeout, Ctrl-C or SIGTERM. */
int tpucmd_is_stop(int);

/*
 * Forget what the cache holds of queued resource qr: its membership and
 * the descriptions of its nodes (they go with it).
 */
void tpucmd_drop_qr_cache(
    const char *project, const char *zone, const char *qr);

struct cmd_entry;
/*
 * The start of "start", "stop" and "delete": --async and --timeout, the
 * operands (*argcp and *argvp moved past the options) checked as node
 * names, the deadline, then tpucmd_open() with a zone.
 */
int tpucmd_node_verb_open(struct tpu_ctx *, const struct cmd_entry *,
    int *argcp, char ***argvp, int *async, int64_t *deadline, struct tpucmd *,
    struct tpu_err *);

/*
 * "start"/"stop" NODE [--async] [--timeout d]: POST node:verb, wait for
 * the operation (and, for start, readiness).  e gives the usage.
 */
int tpucmd_node_verb(struct tpu_ctx *, const struct cmd_entry *,
    const char *verb, int argc, char **argv, struct tpu_err *);

/* What "delete" and "queued-resources delete" delete. */
struct tpucmd_delete {
	const char *kind;       /* "node": for the messages */
	const char *collection; /* "nodes": for the path */
	const char *query;      /* "force=true" or NULL */
	int node_cache;         /* drop the node cache entry first */
	int force_hint;         /* an error naming nodes suggests --force */
	int timeout_stops;      /* --timeout ends the loop, not only Ctrl-C */
};

/*
 * DELETE every resource of the zone, then (unless async) wait for all the
 * operations: they run side by side.  Ctrl-C, SIGTERM (and --timeout
 * with timeout_stops) stop sending; in the wait, the shared deadline too.
 * One summary line: "deleted node 'a'" or "deleted 3 nodes: a, b, c".
 * One resource keeps its own error; of several, each failure is logged
 * and err says "deleted 2 of 3 nodes (a, b); failed: c", TPU_E_PARTIAL
 * (or the first failure's code when none was deleted, the stop's code
 * when stopped).  With async the operations are printed.
 */
int tpucmd_delete_each(struct tpu_ctx *, struct tpucmd *,
    const struct tpucmd_delete *, int argc, char **argv, int async,
    int64_t deadline, struct tpu_err *);

/*
 * Call fn for the zone of tc (NULL when it has none), or, when that is
 * "-", for every zone of the project in turn (one request to list them);
 * stop at the first error.
 */
typedef int (*tpucmd_zone_fn)(
    struct tpucmd *, const char *zone, void *, struct tpu_err *);
int tpucmd_each_zone(struct tpucmd *, tpucmd_zone_fn, void *, struct tpu_err *);

/* A list command: what it lists and how a table shows it. */
struct tpucmd_list {
	const char *collection, *field; /* as tpuapi_list() takes them */
	const char *columns;            /* as output_emit() takes them */
	cJSON *(*view)(const cJSON *);  /* table rows; NULL: table_view */
};

/* The list flags, gcloud's, as usage strings and man pages show them. */
#define TPUCMD_LIST_USAGE                                                      \
	"[--uri] [--filter expression] [--flatten key,...] [--limit n] "       \
	"[--page-size n] [--sort-by [~]key,...]"

/*
 * "X list [--uri] [--filter expr] [--limit n] [--page-size n] [--sort-by
 * keys]": list the collection in the zone, in every zone (TPUCMD_ZONE_ANY
 * and --zone -) or in the project, following pages (pageSize n), keep the
 * items the gcloud filter expression selects, sort them, keep the first
 * n and print them (--uri: their URIs).  Every expression is checked
 * before any request.
 */
int tpucmd_list_run(struct tpu_ctx *, const struct cmd_entry *,
    const struct tpucmd_list *, int argc, char **argv, struct tpu_err *);

/* tpucmd_list_run() of a zone (zonal) or of the project. */
int tpucmd_list_collection(struct tpu_ctx *, const struct cmd_entry *,
    const char *collection, const char *field, const char *columns, int zonal,
    int argc, char **argv, struct tpu_err *);

/*
 * POST a creation; an ambiguous failure or a 409 is resolved by reading
 * the resource back (RELIABILITY.md R4), at most three attempts.  ours
 * returns 1 when it exists with this run's id, 0 when it is someone
 * else's, -1 when absent (other errors in *rcp).  stopped, when not NULL,
 * handles a POST ended by Ctrl-C, SIGTERM or --timeout.  *opp gets the
 * operation (NULL when the resource was found through R4 or --dry-run).
 */
struct tpucmd_create {
	const char *kind, *id, *zone; /* for the messages */
	int (*ours)(void *, int *rcp, struct tpu_err *);
	int (*stopped)(void *, int rc, struct tpu_err *);
	void *arg;
};
int tpucmd_create_post(struct tpucmd *, const struct tpucmd_create *,
    const char *parent, const char *query, const cJSON *body, cJSON **opp,
    struct tpu_err *);

/* The result of a creation with --async: the operation (*opp, taken), or
 * the resource at path when tpucmd_create_post() found it through R4. */
int tpucmd_create_async(struct tpucmd *, const char *path, cJSON **opp,
    cJSON **resultp, struct tpu_err *);

/*
 * The node flags "create" and "queued-resources create" share.  Options
 * of TPUCMD_NODE_OPTIONS return values from TPUCMD_OPT_BASE up, so they
 * never clash with a command's own single-letter values.
 */
#define TPUCMD_RUN_ID_LABEL "tpuctl-run-id"

struct tpucmd_node_opts {
	const char *accel, *gen, *topology, *version, *network, *subnetwork;
	const char *tags, *service_account, *scopes, *labels, *metadata;
	const char *metadata_files, *description;
	const char *disks[16];
	int ndisks, internal_ips, metadata_raw;
	/* --range (cidrBlock), --queue-count, --boot-disk, --network-config */
	const char *range, *queue_count, *boot_disk, *network_config;
	int secure_boot, autocheckpoint, nnetwork_configs;
	/* Set by tpucmd_node_body(): a field only tpu.v2alpha1 has
	 * (autocheckpointEnabled, bootDiskConfig): send to v2alpha1. */
	int alpha;
	/* schedulingConfig: set by the command ("create" has the flags). */
	int spot, preemptible, reserved;
	/* Filled by tpucmd_node_body(): the slice shape. */
	struct catalog_accel acc;
};

enum {
	TPUCMD_OPT_BASE = 0x400,
	TPUCMD_OPT_ACCEL = TPUCMD_OPT_BASE,
	TPUCMD_OPT_DISK,
	TPUCMD_OPT_DESCRIPTION,
	TPUCMD_OPT_INTERNAL_IPS,
	TPUCMD_OPT_LABELS,
	TPUCMD_OPT_METADATA,
	TPUCMD_OPT_METADATA_FILE,
	TPUCMD_OPT_METADATA_RAW,
	TPUCMD_OPT_NETWORK,
	TPUCMD_OPT_SCOPES,
	TPUCMD_OPT_SERVICE_ACCOUNT,
	TPUCMD_OPT_SUBNETWORK,
	TPUCMD_OPT_TAGS,
	TPUCMD_OPT_TOPOLOGY,
	TPUCMD_OPT_TYPE,
	TPUCMD_OPT_VERSION,
	TPUCMD_OPT_RANGE,
	TPUCMD_OPT_QUEUE_COUNT,
	TPUCMD_OPT_BOOT_DISK,
	TPUCMD_OPT_NETWORK_CONFIG,
	TPUCMD_OPT_SECURE_BOOT,
	TPUCMD_OPT_AUTOCHECKPOINT,
};

/* getopt_long entries of the node flags, for a command's option table. */
#define TPUCMD_NODE_OPTIONS                                                    \
	{ "accelerator-type", required_argument, NULL, TPUCMD_OPT_ACCEL },     \
	    { "autocheckpoint-enabled", no_argument, NULL,                     \
		    TPUCMD_OPT_AUTOCHECKPOINT },                               \
	    { "boot-disk", required_argument, NULL, TPUCMD_OPT_BOOT_DISK },    \
	    { "network-config", required_argument, NULL,                       \
		    TPUCMD_OPT_NETWORK_CONFIG },                               \
	    { "queue-count", required_argument, NULL,                          \
		    TPUCMD_OPT_QUEUE_COUNT },                                  \
	    { "range", required_argument, NULL, TPUCMD_OPT_RANGE },            \
	    { "shielded-secure-boot", no_argument, NULL,                       \
		    TPUCMD_OPT_SECURE_BOOT },                                  \
	    { "data-disk", required_argument, NULL, TPUCMD_OPT_DISK },         \
	    { "description", required_argument, NULL,                          \
		    TPUCMD_OPT_DESCRIPTION },                                  \
	    { "internal-ips", no_argument, NULL, TPUCMD_OPT_INTERNAL_IPS },    \
	    { "labels", required_argument, NULL, TPUCMD_OPT_LABELS },          \
	    { "metadata", required_argument, NULL, TPUCMD_OPT_METADATA },      \
	    { "metadata-from-file", required_argument, NULL,                   \
		    TPUCMD_OPT_METADATA_FILE },                                \
	    { "metadata-raw", no_argument, NULL, TPUCMD_OPT_METADATA_RAW },    \
	    { "network", required_argument, NULL, TPUCMD_OPT_NETWORK },        \
	    { "runtime-version", required_argument, NULL,                      \
		    TPUCMD_OPT_VERSION }, /* gcloud's name for --version */    \
	    { "scopes", required_argument, NULL, TPUCMD_OPT_SCOPES },          \
	    { "service-account", required_argument, NULL,                      \
		    TPUCMD_OPT_SERVICE_ACCOUNT },                              \
	    { "subnetwork", required_argument, NULL, TPUCMD_OPT_SUBNETWORK },  \
	    { "tags", required_argument, NULL, TPUCMD_OPT_TAGS },              \
	    { "topology", required_argument, NULL, TPUCMD_OPT_TOPOLOGY },      \
	    { "type", required_argument, NULL, TPUCMD_OPT_TYPE },              \
	{                                                                      \
		"version", required_argument, NULL, TPUCMD_OPT_VERSION         \
	}

/*
 * Take one getopt_long result: 1 when it was a node flag (stored in o),
 * 0 when it is not ours, a negative errc on a bad value (--data-disk
 * given too often).
 */
int tpucmd_node_opt(
    struct tpucmd_node_opts *, int ch, const char *optarg, struct tpu_err *);

/*
 * Build the v2 Node JSON from the flags; every check happens here,
 * before any request (accelerator type and topology against the catalog,
 * labels, metadata, disks).  run_id, when not NULL, becomes the
 * tpuctl-run-id label (the label is then reserved).  o->acc gets the
 * slice shape.  NULL with err set on a bad value.
 */
cJSON *tpucmd_node_body(
    struct tpucmd_node_opts *, const char *run_id, struct tpu_err *);

/*
 * --provisioning-model (gcloud: "One of [standard, spot,
 * reservation-bound]"; any case, '_' for '-'): sets *spot or *reserved
 * (standard: neither).  flex-start sets *flex (v2alpha1's
 * QueuedResource.provisioningModel FLEX_START); with flex NULL (a node,
 * whose SchedulingConfig.provisioningModel has no FLEX_START) it is
 * refused.
 */
int tpucmd_provisioning_model(
    const char *arg, int *spot, int *reserved, int *flex, struct tpu_err *);

/* A random 16-hex-digit id for the run-id label. */
int tpucmd_run_id(char id[17], struct tpu_err *);

/*
 * --zones "a,b,c": an array of validated zones (caller deletes).  The
 * first one stands in for --zone so tpucmd_open() finds one.
 */
int tpucmd_zones_parse(
    struct tpu_ctx *, const char *arg, cJSON **out, struct tpu_err *);

/* Every zone the catalog knows must offer the generation (R12); unknown
 * zones are left to the server. */
int tpucmd_zones_offer(
    const cJSON *zones, const struct catalog_accel *, struct tpu_err *);

/*
 * The zones a creation tries in turn: --zones (arg, may be NULL), else
 * the configured zone.  Opens tc (closed again on error); every zone
 * must offer acc's generation.  The caller deletes *zonesp.
 */
int tpucmd_create_zones(struct tpu_ctx *, struct tpucmd *, const char *arg,
    const struct catalog_accel *acc, cJSON **zonesp, struct tpu_err *);

/*
 * Create node name in zone from a v2 Node body (its tpuctl-run-id label
 * set here) by the path of "create" (R4, the cleanup of a failed
 * creation) and wait until it is READY, its description in *resultp.
 * *stockout (may be NULL) is set when the creation's operation ended in
 * a stockout (code 8, RESOURCE_EXHAUSTED), what create's --zones moves
 * on after.  Used by "run --max-restarts" to recreate a lost node.  In
 * create.c.
 */
int tpucmd_create_node(struct tpu_ctx *, struct tpucmd *, const char *zone,
    const char *name, cJSON *body, int64_t deadline, cJSON **resultp,
    int *stockout, struct tpu_err *);

#endif
