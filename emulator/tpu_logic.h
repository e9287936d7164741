/*
 * The pure parts of the emulator's Cloud TPU API (emulator/tpu.c): URL
 * paths, enum encodings, page tokens, fault specs, request validation
 * and Google's error texts.  No server, no state, no clock: unit-tested
 * by tests/unit/check_emu_tpu.c.
 */
#ifndef TPUCTL_TPU_LOGIC_H
#define TPUCTL_TPU_LOGIC_H

#include <stddef.h>

#include <cjson/cJSON.h>

enum tpu_api {
	TPU_API_V2,
	TPU_API_V2ALPHA1,
};

/*
 * A parsed request path:
 *   /v2/projects/P/locations                       (zone "")
 *   /v2/projects/P/locations/Z[:verb]
 *   /v2/projects/P/locations/Z/COLL                (id "")
 *   /v2/projects/P/locations/Z/COLL/ID[:verb]
 */
struct tpu_path {
	enum tpu_api api;
	char project[128];
	char zone[64];
	char coll[32];
	char id[128];
	char verb[48];
};

/* 0, or -1 when the path is not a Cloud TPU resource path. */
int tpu_path_parse(const char *, struct tpu_path *);

/* "v2" or "v2alpha1". */
const char *tpu_api_name(enum tpu_api);

/*
 * Replace the enum strings of a Node, QueuedResource, Operation,
 * AcceleratorType or list reply by their proto numbers, for clients that
 * ask for "$alt=json;enum-encoding=int".  Unknown values are kept.
 */
void tpu_enums_to_int(cJSON *);
/* The reverse, for request bodies: numbers back to names. */
void tpu_enums_to_str(cJSON *);
/* The proto number of an enum value of field ("state", "health", ...),
 * or -1.  ctx is the parent key ("acceleratorConfig", "state", ""). */
int tpu_enum_num(const char *ctx, const char *field, const char *value);

/* Remove the emulator's private "_" keys from a tree, recursively. */
void tpu_strip_private(cJSON *);

/* Page tokens: an opaque string for an offset, and back (-1 if bad). */
void tpu_page_token(size_t off, char *, size_t);
long tpu_page_token_parse(const char *);

/* "lro-pending-N" / "lro-pending-inf" / "lro-error-CODE". */
enum tpu_lro_kind {
	TPU_LRO_NONE,
	TPU_LRO_PENDING,
	TPU_LRO_ERROR,
};
/* The kind; *n is the poll count (-1 forever) or the error code. */
enum tpu_lro_kind tpu_lro_spec(const char *, long *n);

/* The canonical name of a google.rpc.Code ("RESOURCE_EXHAUSTED"). */
const char *tpu_code_name(int);
/*
 * The error message an operation fails with for code: for 8 Google's
 * stockout text naming the zone, with eid as the EID.
 */
void tpu_op_error_message(
    int code, const char *zone, unsigned long long eid, char *, size_t);

/*
 * Validate and normalise a Node body for nodes.create in zone: accelerator
 * type or config (filled in both ways), runtime version, labels, metadata,
 * scheduling.  0, or -1 with a Google-style INVALID_ARGUMENT message.
 * *nworkers receives the number of hosts.
 */
int tpu_node_check(
    cJSON *node, const char *zone, int *nworkers, char *, size_t);

/* nodes.patch updateMask paths, as bits. */
#define TPU_MASK_DESCRIPTION 0x01u
#define TPU_MASK_LABELS 0x02u
#define TPU_MASK_METADATA 0x04u
#define TPU_MASK_TAGS 0x08u
#define TPU_MASK_EXTERNAL_IPS 0x10u /* network_config.enable_external_ips */

/*
 * The updateMask of nodes.patch: 0 with the TPU_MASK_* bits it names in
 * *fields (when not NULL), or -1 with a message.
 */
int tpu_update_mask_check(const char *, unsigned *, char *, size_t);

/*
 * The node ids a queued resource's nodeSpec entry asks for: nodeId, or
 * multisliceParams (v2) / multiNodeParams (v2alpha1) {nodeCount,
 * nodeIdPrefix} giving prefix-0 .. prefix-(N-1).  Returns a new array
 * of strings, or NULL with a message.
 */
cJSON *tpu_qr_node_ids(const cJSON *spec, enum tpu_api, char *, size_t);

/* Parse a google-duration "3600s" / "1.5s" into ms; -1 if invalid. */
long long tpu_duration_ms(const char *);
/* Parse an RFC 3339 UTC time into unix ms; -1 if invalid. */
long long tpu_time_ms(const char *);

#endif
