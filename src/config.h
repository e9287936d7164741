/*
 * Configuration with gcloud-compatible precedence, highest first:
 *   flags > environment (TPUCTL_*, CLOUDSDK_*, a few aliases) > tpuctl's
 *   config file ($XDG_CONFIG_HOME/tpuctl/config, INI, [profile NAME]
 *   sections) > gcloud's active configuration > built-in defaults.
 * Keys are gcloud-style "section/name": "core/project", "compute/zone".
 * The known keys, their defaults and value rules live in one table in
 * config.c (config_keys()); "tpuctl config set" accepts only those.
 */
#ifndef TPUCTL_CONFIG_H
#define TPUCTL_CONFIG_H

#include <stddef.h>

#include "err.h"

struct config;

enum config_layer {
	CONFIG_UNSET = -1,
	CONFIG_DEFAULT = 0,
	CONFIG_GCLOUD,
	CONFIG_FILE,
	CONFIG_ENV,
	CONFIG_FLAG,
};

/* What a key's value must look like (see config_validate()). */
enum config_kind {
	CONFIG_K_STRING = 0, /* anything on one line */
	CONFIG_K_PROJECT,    /* 6-30 of [a-z0-9-], a letter first */
	CONFIG_K_ZONE,       /* us-central2-b */
	CONFIG_K_FORMAT,     /* an --format value */
	CONFIG_K_BOOL,       /* true/false/yes/no/on/off/1/0 */
	CONFIG_K_INT,        /* decimal in [min, max] */
	CONFIG_K_ENDPOINT,   /* http(s)://host[:port]/... or host:port */
	CONFIG_K_PATH,       /* a file name; "~/" is the home dir */
	CONFIG_K_ACCOUNT,    /* a service-account e-mail */
	CONFIG_K_PROFILE,    /* [A-Za-z0-9_-], 1-64 chars */
};

struct config_key {
	const char *key;  /* "compute/zone" */
	const char *dflt; /* built-in default, or NULL */
	const char *desc; /* one line, for "config list --all" and docs */
	enum config_kind kind;
	long long min, max; /* CONFIG_K_INT only */
	const char *flag;   /* the global flag that sets it, or NULL */
};

/* The known keys, sorted by key; *n receives the count. Borrowed. */
const struct config_key *config_keys(size_t *n);
/* The entry for key, or NULL when the key is unknown. */
const struct config_key *config_key_find(const char *key);

/*
 * Check that key is known and value obeys its rule.  Returns 0, or
 * TPU_E_INVALID with a message naming the key, the value and the rule (an
 * unknown key's message lists the valid keys).
 */
int config_validate(const char *key, const char *value, struct tpu_err *);

struct config *config_new(void);
void config_free(struct config *);

/* Set a value in the flag layer (the highest); copies both strings. */
void config_set_flag(struct config *, const char *key, const char *value);

/*
 * Read the environment, tpuctl's config file (the profile named by the
 * "core/profile" flag, TPUCTL_PROFILE or [core] profile) and gcloud's
 * active configuration, then validate the flag, environment and file
 * values.  A missing file is not an error; an unreadable or malformed one
 * is (TPU_E_INVALID naming file and line).  Unknown sections and keys in
 * tpuctl's file are warned about once.  Call it once.
 */
int config_load(struct config *, struct tpu_err *);

/* The winning value, or NULL when unset at every layer. Borrowed. */
const char *config_get(const struct config *, const char *key);

/* The layer the winning value came from, or CONFIG_UNSET. */
enum config_layer config_layer_of(const struct config *, const char *key);

/*
 * Where the winning value came from, for "tpuctl config list": e.g.
 * "flag --zone", "env CLOUDSDK_COMPUTE_ZONE", "file /h/.config/tpuctl/config
 * [profile ci]", "gcloud configuration default (/h/.config/gcloud/...)",
 * "default".  NULL if unset.  Borrowed.
 */
const char *config_source(const struct config *, const char *key);

/*
 * The value of a path key with a leading "~/" replaced by $HOME, or NULL
 * when unset.  The caller frees the result.
 */
char *config_get_path(const struct config *, const char *key);

/* tpuctl's config file name (it may not exist). Borrowed. */
const char *config_file_path(const struct config *);

/* The selected profile, or NULL for the default one. Borrowed. */
const char *config_profile(const struct config *);

/*
 * config_load() does not warn about a selected profile that the file
 * does not define: the command decides ("config set" defines it).  This
 * logs that warning, once; nothing when the profile is defined.
 */
void config_warn_profile(struct config *);

/*
 * Set (value != NULL) or remove (value == NULL) key in tpuctl's config
 * file, in the selected profile's section ("section/name = value" under
 * [profile NAME]) or in [section] otherwise; core/profile always goes to
 * [core].  Other lines and comments are kept.  The file is replaced
 * atomically (temporary file in the same directory, fsync, rename), the
 * directory created 0700 and the file 0600.  The value is validated
 * first.  Returns 0, 1 when removing a key the file did not have, or a
 * negative errc (TPU_E_INVALID, TPU_E_IO).  The loaded values are not
 * updated.
 */
int config_file_update(
    struct config *, const char *key, const char *value, struct tpu_err *);

/*
 * Parse INI text as tpuctl's config file would be parsed, for tests and
 * the fuzzer: file names the text in messages, profile selects a
 * [profile NAME] section (or NULL).  Values land in the file layer.
 */
int config_load_string(struct config *, const char *text, const char *file,
    const char *profile, struct tpu_err *);

#endif
