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

enum tpucmd_flags {
	TPUCMD_ZONE = (1 << 0),     /* a zone is required */
	TPUCMD_ZONE_ANY = (1 << 1), /* "-" (every zone) is allowed */
};

/*
 * Validate project and zone from the configuration, then set up the HTTP
 * client and the API.  Nothing is sent.  0 or TPU_E_USAGE naming what is
 * missing and how to set it.
 */
int tpucmd_open(struct tpu_ctx *, struct tpucmd *, int flags, struct tpu_err *);
void tpucmd_close(struct tpucmd *);

/*
 * Ask "question [y/N]" on a terminal; --quiet or a non-terminal stdin
 * answers yes (scripts and CI pass --quiet explicitly or run without a
 * terminal).  Returns 0 to go on, TPU_E_INTERRUPTED when declined.
 */
int tpucmd_confirm(struct tpu_ctx *, const char *question, struct tpu_err *);

/* Parse --timeout into a monotonic deadline (tpu_now_ms() + value). */
int tpucmd_deadline(const char *arg, int64_t *deadline_ms, struct tpu_err *);

/* Fill the wait options from the context. */
void tpucmd_wait_opts(struct tpu_ctx *, struct tpucmd *, struct tpuapi_wait *,
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
 * jsonl or value() on stdout; in table mode nothing (a summary goes to
 * stderr instead).
 */
int tpucmd_emit_result(struct tpu_ctx *, const cJSON *, struct tpu_err *);

/* --filter "field=value,labels.env=prod": check the syntax (before any
 * request), then match items (every term must equal, dotted paths). */
int tpucmd_filter_check(const char *, struct tpu_err *);
int tpucmd_filter_match(const cJSON *, const char *);

struct cmd_entry;
/*
 * "start"/"stop" NODE [--async] [--timeout d]: POST node:verb, wait for
 * the operation (and, for start, readiness).  e gives the usage.
 */
int tpucmd_node_verb(struct tpu_ctx *, const struct cmd_entry *,
    const char *verb, int argc, char **argv, struct tpu_err *);

/*
 * "X list [--filter f=v]": list a collection of the zone (zonal) or of
 * the project, following pages; table columns as output_emit takes them.
 */
int tpucmd_list_collection(struct tpu_ctx *, const struct cmd_entry *,
    const char *collection, const char *field, const char *columns, int zonal,
    int argc, char **argv, struct tpu_err *);

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
};

/* getopt_long entries of the node flags, for a command's option table. */
#define TPUCMD_NODE_OPTIONS                                                    \
	{ "accelerator-type", required_argument, NULL, TPUCMD_OPT_ACCEL },     \
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

#endif
