/*
 * Configuration with gcloud-compatible precedence, highest first:
 *   flags > environment (TPUCTL_*, CLOUDSDK_*) > tpuctl's config file
 *   ($XDG_CONFIG_HOME/tpuctl/config, INI, [profile NAME] sections)
 *   > gcloud's active configuration (core/project, compute/zone ...)
 *   > built-in defaults.
 * Keys are gcloud-style "section/name": "core/project", "compute/zone".
 */
#ifndef TPUCTL_CONFIG_H
#define TPUCTL_CONFIG_H

#include "err.h"

struct config;

enum config_layer {
	CONFIG_DEFAULT = 0,
	CONFIG_GCLOUD,
	CONFIG_FILE,
	CONFIG_ENV,
	CONFIG_FLAG,
};

struct config *config_new(void);
void config_free(struct config *);

/* Set a value in the flag layer (the highest); copies both strings. */
void config_set_flag(struct config *, const char *key, const char *value);

/*
 * Read the environment, tpuctl's config file (the profile named by the
 * "core/profile" flag or TPUCTL_PROFILE) and gcloud's active
 * configuration.  A missing file is not an error; an unreadable or
 * malformed one is (TPU_E_USAGE naming file and line).
 */
int config_load(struct config *, struct tpu_err *);

/* The winning value, or NULL when unset at every layer. Borrowed. */
const char *config_get(const struct config *, const char *key);

/*
 * Where the winning value came from, for "tpuctl config list": e.g.
 * "flag --zone", "env CLOUDSDK_COMPUTE_ZONE", "file /h/.config/tpuctl/config
 * [profile ci]", "gcloud configuration default", "default".  NULL if unset.
 */
const char *config_source(const struct config *, const char *key);

#endif
