/*
 * The emulator's own Cloud TPU offering: generations (chips, TensorCores,
 * hosts), accelerator types and their topologies, zones and runtime
 * versions, as Google's documentation lists them.  It answers
 * acceleratorTypes, runtimeVersions and locations, judges the
 * acceleratorType / acceleratorConfig / runtimeVersion of a request, and
 * gives the metadata server (md.c) the chip and host geometry.  It is
 * not tpuctl's src/catalog.c (DESIGN.md: a client bug must not hide in a
 * shared rule) and uses the base utilities only.
 */
#ifndef EMU_OFFER_H
#define EMU_OFFER_H

#include <stddef.h>

/* One TPU generation. */
struct offer_gen {
	const char *name;       /* accelerator type prefix: "v4" */
	const char *alias;      /* what people also write: "v5e", or NULL */
	const char *config;     /* AcceleratorConfig.type: "V4" */
	int config_num;         /* its proto number (enum-encoding=int) */
	int cores_per_chip;     /* TensorCores per chip */
	int ndims;              /* topology dimensions: 2 or 3 */
	int counts_cores;       /* 1: "v4-8" counts cores, 0: chips */
	int single_host_max;    /* chips of the largest one-host slice */
	int chips_per_host;     /* hosts of a multi-host slice */
	int max_dim;            /* 3-D: largest dimension */
	int max_chips;          /* 3-D: the whole pod */
	const char *const *rvs; /* runtime versions, [0] the default */
};

/* An accelerator type resolved against the offering. */
struct offer_accel {
	const struct offer_gen *gen;
	int size; /* the number in the name */
	int chips;
	int hosts;         /* workers (TPU VMs) */
	char type[32];     /* "v4-32" */
	char topology[32]; /* the default topology, or the one asked for */
};

/* A zone and the generations it offers. */
struct offer_zone {
	const char *name;
	const char *gens[6]; /* NULL-terminated generation names */
};

/* Generations in order; NULL past the end. */
const struct offer_gen *offer_gen_at(size_t);
/* By name or alias; NULL when unknown. */
const struct offer_gen *offer_gen_find(const char *);
/* By AcceleratorConfig.type, as a name ("V4") or, when name is NULL, as
 * its number; NULL when unknown. */
const struct offer_gen *offer_gen_by_config(const char *name, int num);

/*
 * Resolve an accelerator type ("v4-32").  0, or -1 with a one-line
 * message in msg that names the value and what would be valid.
 */
int offer_accel_parse(const char *, struct offer_accel *, char *, size_t);
/* The type of generation g with that topology; 0 or -1 with msg. */
int offer_accel_from_topology(const struct offer_gen *, const char *topology,
    struct offer_accel *, char *msg, size_t);
/* Check that topology is one of a's shapes, and make it a's topology;
 * 0 or -1 with msg. */
int offer_accel_set_topology(
    struct offer_accel *, const char *topology, char *msg, size_t);

/* The sizes of g in ascending order: the i-th, or 0 past the end. */
int offer_size_at(const struct offer_gen *, size_t);
/* The topologies of a (the default first): 0, or -1 past the end. */
int offer_topology_at(
    const struct offer_accel *, size_t, char *out, size_t outlen);

/* Zones; NULL past the end.  find: NULL when not offered anywhere. */
const struct offer_zone *offer_zone_at(size_t);
const struct offer_zone *offer_zone_find(const char *);
/* 1 when zone z offers generation g. */
int offer_zone_has(const struct offer_zone *, const struct offer_gen *);

/* Every distinct runtime version; NULL past the end. */
const char *offer_runtime_at(size_t);
/* 1 when runtime version rv is offered for g. */
int offer_runtime_known(const struct offer_gen *, const char *rv);

#endif
