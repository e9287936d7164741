/*
 * What the emulated metadata server tells a TPU worker (emulator/md.c):
 * the worker's VM name (also its UTS hostname: the fleet calls
 * emu_md_hostname), instance id, the chip and host bounds of an
 * accelerator type, and the rendering of worker-network-endpoints and
 * tpu-env.  Pure functions of their arguments, so the unit tests and the
 * fleet can call them; they use the base utilities only (no catalog).
 */
#ifndef TPUCTL_EMU_MD_H
#define TPUCTL_EMU_MD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "emu.h"

/* Bytes enough for a hostname or an instance id. */
#define EMU_MD_NAME_MAX 64

/*
 * "t1v-n-<8 hex>-w-<worker>": the 8 hex digits are the CRC-32C of
 * "<node_key>\n<node_id>" (the node's full name and numeric id), so a
 * node keeps them across emulator restarts and a node recreated under
 * the same name (new id) gets new ones, as a new VM would.
 */
void emu_md_hostname(const char *node_key, const char *node_id, int worker,
    char *out, size_t len);
/* The worker's instance/id: 19 decimal digits, stable like the name. */
void emu_md_instance_id(const char *node_key, const char *node_id, int worker,
    char *out, size_t len);

/* Chip geometry of a slice: x,y,z (z 1 for 2-D generations). */
struct emu_md_bounds {
	int ndims;             /* 2 (v2, v3, v5e, v6e) or 3 (v4, v5p) */
	int topo[3];           /* chips of the slice, "2x2x4" */
	int chips_per_host[3]; /* CHIPS_PER_HOST_BOUNDS */
	int hosts[3];          /* HOST_BOUNDS */
};

/*
 * The bounds of accel ("v4-32", "v5litepod-16", "v6e-8") with topology
 * ("2x2x4", or NULL/"" for the default shape of that size).  0, or -1
 * for a type or topology the table does not know.
 */
int emu_md_bounds(
    const char *accel, const char *topology, struct emu_md_bounds *out);

/*
 * An accelerator type ("v4-32") from an AcceleratorConfig (type "V4",
 * topology "2x2x4") into out.  0, or -1 when unknown.
 */
int emu_md_accel_from_config(
    const char *type, const char *topology, char *out, size_t len);

/* The inputs of a worker's rendering. */
struct emu_md_worker {
	const char *node_key;
	const char *node_id;
	const char *accel;
	const char *topology; /* NULL or "" */
	const char *zone;
	int worker;
	int nworkers;
	const char *const *addrs; /* nworkers worker addresses, in order */
	int slice;                /* MEGASCALE_SLICE_ID */
	int nslices;              /* 0: not a multislice node */
	const char *coordinator;  /* slice 0 worker 0 address (multislice) */
};

/* MEGASCALE_PORT, and the port of MEGASCALE_COORDINATOR_ADDRESS. */
#define EMU_MD_MEGASCALE_PORT 8080

/* "t1v-n-X-w-0:ID:ADDR,t1v-n-X-w-1:ID:ADDR,...": the caller frees. */
char *emu_md_endpoints(const struct emu_md_worker *);
/* tpu-env, one "KEY: 'value'" line each, sorted: the caller frees. */
char *emu_md_tpu_env(const struct emu_md_worker *);

/*
 * tpu.c: the metadata view of a node, a new object (the caller frees)
 * or NULL for an unknown node: {"id","accel","topology","zone",
 * "metadata":{...},"preempted":bool,"maintenance":"NONE|TERMINATE_ON_
 * HOST_MAINTENANCE","addrs":[...],"slice":N,"slices":N,
 * "coordinator":"addr"}.  emu->lock held.
 */
cJSON *tpu_md_view(struct emu *, const char *node_key);

#endif
