/*
 * The TPU catalog shared by tpuctl (local validation before any request)
 * and tpuctl-emulator (what the fake Cloud TPU API accepts): generations
 * and their chips, TensorCores and HBM, the accelerator-type naming rule,
 * topologies, zones and runtime versions, plus the validators for every
 * user-supplied value of RELIABILITY.md table 4F that is not a Cloud
 * Storage name (node name, zone, project, accelerator type, topology,
 * labels, metadata).  The tables are a snapshot of Google's published
 * TPU documentation; the server stays the authority.
 *
 * Validators return 0, or TPU_E_USAGE with a one-line message that names
 * the value, the rule, and what would be valid.
 */
#ifndef TPUCTL_CATALOG_H
#define TPUCTL_CATALOG_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

/* One TPU generation. */
struct catalog_gen {
	const char *name;            /* type prefix: "v4", "v5litepod" */
	const char *alias;           /* marketing name: "v5e", or NULL */
	const char *config_type;     /* AcceleratorConfig.type: "V5LITE_POD" */
	int config_type_num;         /* its proto number (enum-encoding=int) */
	int chips_per_host;          /* hosts of a multi-host slice */
	int max_host_chips;          /* largest single-host slice (8 on v5e) */
	int cores_per_chip;          /* TensorCores per chip */
	int hbm_gib;                 /* HBM per chip, GiB (whole chip) */
	int name_counts_cores;       /* 1: v4-8 counts cores; 0: counts chips */
	int topo_dims;               /* 2 (AxB) or 3 (AxBxC) */
	const char *const *runtimes; /* NULL-terminated; [0] is the default */
	const char *hbm_source;      /* where hbm_gib and chips_per_host
	                                come from (a URL) */
};

/* An accelerator type resolved against the catalog. */
struct catalog_accel {
	const struct catalog_gen *gen;
	int size; /* the number in the name */
	int chips;
	int cores;
	int hosts;         /* workers (TPU VMs) */
	char type[32];     /* canonical name: "v4-32" */
	char topology[32]; /* default topology: "2x2x4" */
};

/* A zone and the generations it offers. */
struct catalog_zone {
	const char *name;    /* "us-central2-b" */
	const char *gens[6]; /* NULL-terminated generation names */
};

/* Generations in catalog order; NULL past the end. */
const struct catalog_gen *catalog_gen_at(size_t);
/* By name or alias ("v5litepod" or "v5e"); NULL when unknown. */
const struct catalog_gen *catalog_gen_find(const char *);

/*
 * Resolve an accelerator type ("v4-32").  Rejects unknown generations,
 * malformed names, core counts that are not whole chips and sizes with
 * no valid slice.  Upper case or surrounding blanks are rejected with a
 * hint naming the canonical spelling.  0 or TPU_E_USAGE.
 */
int catalog_accel_parse(const char *, struct catalog_accel *, struct tpu_err *);

/*
 * Check a topology ("2x2x4") for a generation: the right number of
 * dimensions, positive integers, and a slice shape the generation builds.
 * On success, *chips (if not NULL) is the product.  0 or TPU_E_USAGE.
 */
int catalog_topology_check(
    const struct catalog_gen *, const char *, int *chips, struct tpu_err *);

/*
 * The accelerator type for (generation, topology), e.g. ("v4", "2x2x4")
 * -> v4-32 with that topology.  0 or TPU_E_USAGE.
 */
int catalog_accel_from_topology(const char *gen, const char *topology,
    struct catalog_accel *, struct tpu_err *);

/*
 * Check that topology is valid for a's generation and has a's chip count
 * (the --accelerator-type/--topology mismatch).  0 or TPU_E_USAGE.
 */
int catalog_accel_topology_match(
    const struct catalog_accel *, const char *topology, struct tpu_err *);

/*
 * Enumerate the valid sizes of a generation in ascending order: the
 * size at index i, or 0 past the end.
 */
int catalog_gen_size_at(const struct catalog_gen *, size_t);

/*
 * Enumerate the topologies of an accelerator type (the default first):
 * writes the i-th into out and returns 0, or -1 past the end.
 */
int catalog_accel_topology_at(
    const struct catalog_accel *, size_t, char *out, size_t outlen);

/* Zones in catalog order; NULL past the end. */
const struct catalog_zone *catalog_zone_at(size_t);
/* NULL when the zone is not in the snapshot. */
const struct catalog_zone *catalog_zone_find(const char *);
/* 1 when zone z offers generation g. */
int catalog_zone_offers(
    const struct catalog_zone *, const struct catalog_gen *);

/* 1 when runtime version rv is known for generation g. */
int catalog_runtime_known(const struct catalog_gen *, const char *rv);
/* Every distinct runtime version, in catalog order; NULL past the end. */
const char *catalog_runtime_at(size_t);

/* Node and queued-resource names: RFC 1035, 1-63 chars.  The _len form
 * also rejects embedded NUL bytes. */
int catalog_node_name_validate(const char *, struct tpu_err *);
int catalog_node_name_validate_len(const char *, size_t, struct tpu_err *);
/* Zone format region-location-letter ("us-central2-b"); not membership. */
int catalog_zone_validate(const char *, struct tpu_err *);
/* Project ids: 6-30 chars [a-z0-9-], letter first, no trailing '-';
 * optionally "domain.com:" scoped. */
int catalog_project_validate(const char *, struct tpu_err *);

/*
 * Labels (GCE rules): key ^[a-z][a-z0-9_-]{0,62}$, value
 * ^[a-z0-9_-]{0,63}$.
 */
int catalog_label_validate(
    const char *key, const char *value, struct tpu_err *);
/* A labels object: at most 64, unique keys, string values, each valid. */
int catalog_labels_validate(const cJSON *, struct tpu_err *);
/*
 * Parse "k=v,k2=v2" (as --labels takes) into a new object in *out (the
 * caller deletes it), validating every label, duplicates and the count.
 * 0 or TPU_E_USAGE (*out is NULL then).
 */
int catalog_labels_parse(const char *, cJSON **out, struct tpu_err *);

/*
 * One ssh-keys entry "user:ssh-ed25519 AAAA... [comment]": no CR or LF
 * (one entry must never become two), a valid user name, a key type and
 * base64 key material.  0 or TPU_E_USAGE.
 */
int catalog_ssh_key_entry_validate(const char *, struct tpu_err *);
/*
 * A metadata item.  Keys are [A-Za-z0-9_-]{1,128}; values at most 256 KiB;
 * ssh-keys values are LF-separated entries, each checked as above (no
 * CR anywhere).  Unless raw, the key must be one tpuctl knows
 * (startup-script, ssh-keys, ...).  0 or TPU_E_USAGE.
 */
int catalog_metadata_validate(
    const char *key, const char *value, int raw, struct tpu_err *);
/* Every item of a metadata object (string values only). */
int catalog_metadata_validate_obj(const cJSON *, int raw, struct tpu_err *);

#endif
