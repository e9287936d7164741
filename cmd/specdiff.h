/*
 * What "tpuctl diff" and "tpuctl apply" share: load and validate a spec
 * (src/spec.h), find the node or queued resource it names in its zones,
 * and list what differs (spec_diff), before anything is changed.
 */
#ifndef TPUCTL_SPECDIFF_H
#define TPUCTL_SPECDIFF_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "ctx.h"
#include "err.h"
#include "spec.h"
#include "tpucmd.h"

struct specdiff {
	struct spec spec;
	struct tpucmd tc;
	int opened;
	cJSON *zones;     /* the zones to look in (and create in), in order */
	const char *zone; /* where it was found, else the first zone */
	cJSON *qr;        /* the queued resource, when the spec needs one */
	cJSON *ids;       /* the node ids (spec_node_ids) */
	cJSON *nodes;     /* id -> node, for the nodes that exist */
	cJSON *changes;   /* spec_diff() entries */
	int found;        /* the node or queued resource exists */
	int immutable;    /* changes the API cannot make in place */
};

/*
 * Load the spec at path, open the API with its zones (or the configured
 * zone), read what exists (GETs only) and fill d->changes.  0, or an errc
 * (TPU_E_USAGE for a bad spec, before any request).  specdiff_close()
 * in every case.
 */
int specdiff_open(
    struct tpu_ctx *, const char *path, struct specdiff *, struct tpu_err *);
void specdiff_close(struct specdiff *);

/*
 * The differences on stdout: one line each in table mode
 * ("~ labels.env: dev -> prod"), else the entries through output_emit.
 */
int specdiff_print(struct tpu_ctx *, const struct specdiff *, struct tpu_err *);

/* The same lines on fp, each after prefix. */
void specdiff_lines(FILE *, const char *prefix, const struct specdiff *);

/* "node 'n1'" or "queued resource 'q1'" into buf. */
const char *specdiff_what(const struct specdiff *, char *buf, size_t len);

/*
 * Create what d's spec describes through "create" (one node) or
 * "queued-resources create" (a spec that needs one, or any spec with
 * SPECDIFF_CREATE_QR), with d->zones and every slice field of the spec
 * (metadata values passed through private files).  SPECDIFF_CREATE_ASYNC:
 * return once the queued resource is accepted (--async).  Defined in
 * apply.c.
 */
enum {
	SPECDIFF_CREATE_QR = 1 << 0,
	SPECDIFF_CREATE_ASYNC = 1 << 1,
};
int specdiff_create(
    struct tpu_ctx *, const struct specdiff *, int flags, struct tpu_err *);

#endif
