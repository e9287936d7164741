/*
 * Typed access to cJSON trees.  The getters return borrowed pointers (they
 * live as long as the tree) and fail with a clear error that names the
 * missing or mistyped field, so a malformed server reply becomes
 * "node reply: field 'state' is missing" rather than a crash.
 */
#ifndef TPUCTL_JSON_H
#define TPUCTL_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

/*
 * Parse exactly len bytes as one JSON value (trailing garbage is an error).
 * Returns a tree the caller frees with cJSON_Delete, or NULL with err set
 * (TPU_E_API) naming what: "what: invalid JSON at offset N".
 */
cJSON *json_parse(const char *, size_t, const char *what, struct tpu_err *);

/*
 * Look up a dotted path ("metadata.ssh-keys", "networkEndpoints.0.ipAddress";
 * numeric parts index arrays).  Returns NULL when any part is missing.
 */
const cJSON *json_path(const cJSON *, const char *);

/* Required fields: NULL (or -1) with err set when missing or mistyped. */
const char *json_req_string(const cJSON *, const char *path, struct tpu_err *);
const cJSON *json_req_object(const cJSON *, const char *path, struct tpu_err *);
const cJSON *json_req_array(const cJSON *, const char *path, struct tpu_err *);
int json_req_int64(
    const cJSON *, const char *path, long long *, struct tpu_err *);

/* Optional fields: the default when missing or of another type. */
const char *json_opt_string(const cJSON *, const char *path, const char *dflt);
long long json_opt_int64(const cJSON *, const char *path, long long dflt);
int json_opt_bool(const cJSON *, const char *path, int dflt);

/*
 * Google sends int64 fields as JSON strings ("size": "1024"); accept both
 * forms.  Returns 0, or -1 when the value is not an integer in range.
 */
int json_as_int64(const cJSON *, long long *);

/* Serialise compactly or indented; the caller frees with cJSON_free. */
char *json_print(const cJSON *, int pretty);

#endif
