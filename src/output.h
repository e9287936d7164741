/*
 * Results on stdout: --format=table|json|yaml|jsonl|value(f1,f2,...).
 * Commands build a cJSON result and call output_emit(); they never
 * printf results themselves.
 */
#ifndef TPUCTL_OUTPUT_H
#define TPUCTL_OUTPUT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "err.h"

enum output_format {
	OUTPUT_TABLE = 0,
	OUTPUT_JSON,
	OUTPUT_YAML,
	OUTPUT_JSONL,
	OUTPUT_VALUE,
};

struct output {
	enum output_format fmt;
	char **fields; /* value(...) or table(...) fields, dotted paths */
	int nfields;
	FILE *fp; /* stdout unless a test says otherwise */
};

void output_init(struct output *);
void output_release(struct output *);

/*
 * Parse a --format value: "table", "table(name,state)", "json", "yaml",
 * "jsonl", "value(name,state)"; fields are dotted paths
 * ("networkEndpoints.0.ipAddress").  Returns 0 or
 * TPU_E_USAGE with a message naming the value and the valid formats.
 */
int output_parse_format(struct output *, const char *, struct tpu_err *);

/*
 * Emit a result.  An array is a list (one row or record per element); an
 * object is one record.  columns gives the table layout as
 * "HEADER=path,..." (e.g. "NAME=name,STATE=state"); NULL renders records
 * as YAML in table mode, as gcloud's describe does; table(...) replaces
 * the columns.  value() prints one tab-separated line per record; lists
 * of scalars join with ';', objects print as compact JSON.  yaml prints
 * a list as a stream of documents separated by "---".  Returns 0 or
 * TPU_E_IO when stdout cannot be written.
 */
int output_emit(struct output *, const cJSON *result, const char *columns,
    struct tpu_err *);

#endif
