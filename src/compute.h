/*
 * A client of the Compute Engine API (compute.googleapis.com v1), the
 * part an SSH client needs: a project's common instance metadata (GET
 * projects/PROJECT, Project.commonInstanceMetadata.items[] {key,
 * value}), where OS Login is turned on for every VM of a project that
 * does not set enable-oslogin itself.
 */
#ifndef TPUCTL_COMPUTE_H
#define TPUCTL_COMPUTE_H

#include <stddef.h>

#include "err.h"

struct http;

/*
 * The value of key in a Project JSON's commonInstanceMetadata.items
 * (the first item of that key): 0 with *value (caller frees) or NULL
 * when there is no such item; TPU_E_API for a reply that is no Project
 * (not an object, items not an array, an item without a string key).
 */
int compute_metadata_value(const char *body, size_t len, const char *key,
    char **value, struct tpu_err *);

/*
 * GET base (ending in '/', ".../compute/v1/") projects/PROJECT and the
 * value of key in its common instance metadata, as
 * compute_metadata_value.  A read: sent under --dry-run too.  Errors as
 * http_request returns them (TPU_E_PERMISSION for 403, TPU_E_NOTFOUND
 * for 404).
 */
int compute_project_metadata(struct http *, const char *base,
    const char *project, const char *key, char **value, struct tpu_err *);

#endif
