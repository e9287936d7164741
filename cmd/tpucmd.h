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

#endif
