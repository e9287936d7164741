/*
 * The declarative slice and job spec of "tpuctl apply", "tpuctl diff" and
 * (later) "tpuctl submit": a YAML or JSON document whose keys are the
 * kebab-case flag names of "create", "queued-resources create" and "run"
 * (schema: tpuctl-submit(5)).  spec_parse() reads the document and checks
 * every field with the client's own validators (catalog.h, tpuvalid.h,
 * gcsurl.h, util.h) before anything is sent; an error names the field by
 * its path ("slice.accelerator-type") and the rule, as TPU_E_USAGE.
 * spec_diff() compares a spec with a node (or queued resource) as the API
 * returns it: what differs, and what the API cannot change in place.
 * Nothing here knows about commands or sends requests.
 */
#ifndef TPUCTL_SPEC_H
#define TPUCTL_SPEC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "catalog.h"
#include "err.h"

/* The largest spec file. */
#define SPEC_MAX_SIZE (1024 * 1024)
/* The most slices of a multislice (queued-resources create). */
#define SPEC_MAX_SLICES 256
/* The largest max-restarts. */
#define SPEC_MAX_RESTARTS 1000

/* The label tpuctl keeps on what it creates; never part of a spec. */
#define SPEC_RUN_ID_LABEL "tpuctl-run-id"

/*
 * A parsed, validated spec.  Every pointer is borrowed from root and
 * lives until spec_release(); NULL (or 0) when the key is absent.
 */
struct spec {
	cJSON *root;        /* the document, as JSON (YAML converted) */
	const char *origin; /* for messages: the file name */
	const char *name;   /* node, or queued resource, id */

	/* slice */
	const char *accel, *gen, *topology, *version, *description;
	const char *network, *subnetwork, *service_account;
	const char *node_prefix, *valid_until;
	const cJSON *labels;        /* object of strings */
	const cJSON *metadata;      /* object of strings */
	const cJSON *zones;         /* array of strings */
	const cJSON *tags, *scopes; /* arrays of strings */
	int spot, preemptible, reserved, guaranteed, internal_ips;
	int metadata_raw;
	int node_count; /* 0: one node, else a multislice of that many */
	struct catalog_accel acc; /* the slice shape, resolved */

	/* job (for submit; apply and diff only validate them) */
	/* workdir: as resolved from the spec file's directory */
	const char *framework, *framework_version, *workdir, *stage;
	const cJSON *env;     /* object of strings */
	const cJSON *command; /* a string (shell line) or array of strings */
	long long max_restarts, timeout_secs;
	long long restart_backoff_secs; /* restart-backoff, 0 without */
	int has_max_restarts;           /* max-restarts is given (even 0) */
	int restart_on_failure;         /* restart-on-failure: true */
	const char *checkpoint;         /* gs://BUCKET[/PREFIX], or NULL */
	int delete_after;
	int has_job; /* a command is given */
};

/*
 * Parse text (len bytes, not necessarily NUL-terminated) as a spec: JSON
 * when its first non-blank byte is '{', else YAML (one document; no
 * aliases, anchors or duplicate keys).  Every field is checked: unknown
 * keys (with a suggestion), types, and each value's rule.  A relative
 * workdir is taken from dir (the spec file's directory; NULL: the current
 * one) and must be a directory.  origin names the spec in messages and
 * must outlive s.  0, or TPU_E_USAGE with s released.
 */
int spec_parse(struct spec *s, const char *text, size_t len, const char *origin,
    const char *dir, struct tpu_err *);

/* Read file path ("-": stdin) and spec_parse() it.  0 or an errc. */
int spec_load(struct spec *s, const char *path, struct tpu_err *);

void spec_release(struct spec *s);

/* 1 when the spec needs a queued resource: a multislice, spot, reserved,
 * guaranteed or a valid-until-duration. */
int spec_queued(const struct spec *);

/*
 * The node ids of the spec into a new array (the caller deletes it):
 * name for one node (also through a queued resource), else
 * PREFIX-0 ... PREFIX-(N-1).
 */
cJSON *spec_node_ids(const struct spec *);

/* The job's command as one shell line (a list's items shell-quoted and
 * joined by blanks), NULL without one.  Caller frees. */
char *spec_command_line(const struct spec *);

/*
 * What differs between the spec and node (the API's v2 Node JSON).
 * Appends one object per difference to changes:
 *   { "op": "~"|"+"|"-", "field": "labels.env", "from": ..., "to": ...,
 *     "immutable": "reason" (only when the API cannot change it in place),
 *     "node": node_id }
 * Labels, metadata and description are compared only when the spec gives
 * them; the tpuctl-run-id label, and ssh-keys metadata the spec does not
 * name (tpuctl ssh adds it), are never differences.  qr, when not NULL,
 * is the queued resource the node belongs to (its tier and node count
 * are compared once, with node_id NULL).  Returns the number of
 * differences appended.
 */
int spec_diff(const struct spec *, const cJSON *node, const char *node_id,
    cJSON *changes);
int spec_diff_qr(const struct spec *, const cJSON *qr, cJSON *changes);

#endif
