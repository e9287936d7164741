/*
 * The framework compatibility matrix (config/compat.json): which jax,
 * pytorch and tensorflow versions work on which TPU generation and
 * runtime version, the pip requirements tpuctl pins for each, the Python
 * they need and where pip finds them, with the source of every fact.
 * The refusals happen here, before anything runs on a worker: a
 * framework with no TPU backend, a version the matrix does not know or
 * that does not work on the node's generation or runtime, TensorFlow on
 * a runtime without TensorFlow, a runtime whose Python is too old.  Each
 * is one line (TPU_E_USAGE) with the reason and the nearest working
 * choice.
 *
 * The matrix is read from a directory (compat_config_dir): the
 * TPUCTL_CONFIG_DIR environment variable, else <bin>/../share/tpuctl
 * (make install), else <bin>/../config (the source tree), where <bin> is
 * the directory of the running tpuctl.  The recipes live there too:
 * recipes/<framework>.sh, the framework's own part (its name and hint),
 * and recipes/common.sh, the body every framework shares.
 */
#ifndef TPUCTL_COMPAT_H
#define TPUCTL_COMPAT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

struct compat {
	cJSON *root;
	char *dir; /* where compat.json was read, or NULL */
};

/* One resolved matrix entry; pointers borrowed from the matrix. */
struct compat_choice {
	const char *framework;      /* "jax" */
	const char *version;        /* "0.6.1" */
	const char *python_min;     /* "3.10" */
	const cJSON *requirements;  /* array of pip requirement strings */
	const cJSON *packages;      /* object: distribution -> version */
	const cJSON *find_links;    /* array of URLs (may be empty) */
	const char *runtime_python; /* the runtime's Python, or NULL */
};

/*
 * The configuration directory (see above) into buf; 0, or TPU_E_NOTFOUND
 * when no candidate has a compat.json.
 */
int compat_config_dir(char *buf, size_t len, struct tpu_err *);

/* Load dir/compat.json (dir NULL: compat_config_dir).  0 or an error. */
int compat_load(struct compat *, const char *dir, struct tpu_err *);
/* Load from a JSON text (tests).  0 or TPU_E_API/TPU_E_INVALID. */
int compat_load_text(struct compat *, const char *json, struct tpu_err *);
void compat_release(struct compat *);

/*
 * What can be checked before knowing the node: the framework has a TPU
 * backend and is in the matrix, and version (NULL: any) is one of its
 * versions.  0 or TPU_E_USAGE (one line, with the nearest choice).
 */
int compat_check_framework(const struct compat *, const char *framework,
    const char *version, struct tpu_err *);

/*
 * The entry for framework (and version, or NULL for the newest that
 * works) on generation gen ("v4", the catalog's name) and runtime
 * version runtime.  0 with *out filled, or TPU_E_USAGE with the reason
 * and the nearest working choice.
 */
int compat_resolve(const struct compat *, const char *framework,
    const char *version, const char *gen, const char *runtime,
    struct compat_choice *out, struct tpu_err *);

/*
 * The matrix as rows, one per (framework, version, generation, runtime):
 * a new array (caller deletes) for framework, or for every framework
 * when framework is "all".  TPU_E_USAGE for a framework the matrix lacks.
 */
int compat_rows(const struct compat *, const char *framework, cJSON **out,
    struct tpu_err *);

/*
 * The recipe of framework, as run on a worker: c->dir's
 * recipes/<framework>.sh followed by recipes/common.sh, into *out
 * (caller frees).  0, or an error naming the file that cannot be read.
 */
int compat_recipe(
    const struct compat *, const char *framework, char **out, struct tpu_err *);

/* Compare dotted numeric versions ("3.10" > "3.8"): <0, 0, >0. */
int compat_version_cmp(const char *, const char *);

#endif
