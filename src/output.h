/*
 * Results on stdout in gcloud's --format language (gcloud topic formats):
 * table[ATTRS](KEYS), value(KEYS), get(KEYS), csv[ATTRS](KEYS), json,
 * yaml, flattened/text, list, default, none, and tpuctl's jsonl.  The
 * expression is parsed by resproj; commands build a cJSON result and call
 * output_emit(); they never printf results themselves.
 */
#ifndef TPUCTL_OUTPUT_H
#define TPUCTL_OUTPUT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "resproj.h"

enum output_format {
	OUTPUT_TABLE = 0, /* also the default: the command's table */
	OUTPUT_JSON,
	OUTPUT_YAML,
	OUTPUT_JSONL,
	OUTPUT_VALUE, /* value() and get() */
	OUTPUT_CSV,
	OUTPUT_FLAT, /* flattened, text */
	OUTPUT_LIST,
	OUTPUT_NONE, /* none, disable */
};

struct output {
	enum output_format fmt;
	struct resproj proj;
	int nfields; /* keys of the projection (proj.ncols) */
	FILE *fp;    /* stdout unless a test says otherwise */
};

void output_init(struct output *);
void output_release(struct output *);

/*
 * Parse a --format value; TPU_E_USAGE with a message naming the bad part
 * and the rule (unknown format or transform, empty key part, ...).
 */
int output_parse_format(struct output *, const char *, struct tpu_err *);

/*
 * Emit a result.  An array is a list (one row or record per element); an
 * object is one record.  columns gives the command's table as
 * "HEADER=key,..." (e.g. "NAME=name,STATE=state"); NULL renders records
 * as YAML in table mode, as gcloud's describe does; a projection given
 * with --format replaces the columns, attributes alone ("[box]") apply
 * to them.  Returns 0 or TPU_E_IO when stdout cannot be written.
 */
int output_emit(struct output *, const cJSON *result, const char *columns,
    struct tpu_err *);

#endif
