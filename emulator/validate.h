/*
 * The emulator's own request rules: what Google documents that the Cloud
 * TPU API and Cloud Storage accept, written from the discovery documents
 * (tpu.v2.json, tpu.v2alpha1.json, storage.v1.json) and Google's
 * published limits, independently of tpuctl's validators (src/catalog.c,
 * src/tpuvalid.c, src/gcsurl.c).  A rule the client gets wrong must not
 * pass twice, so the emulator never calls those; `make lint` checks it.
 * Where tpuctl is deliberately stricter than Google (its ssh-keys line
 * format, ASCII-only labels) the emulator accepts what Google accepts.
 *
 * Every check returns 0, or -1 with a one-line message in msg naming the
 * value and the rule; the caller wraps it in Google's error shape.  No
 * state, no I/O: tests/unit/check_emu_validate.c drives the table.
 */
#ifndef TPUCTL_VALIDATE_H
#define TPUCTL_VALIDATE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define VALIDATE_NAME_MAX 63           /* RFC 1035 resource names */
#define VALIDATE_LABELS_MAX 64         /* labels per resource */
#define VALIDATE_LABEL_MAX 63          /* characters per key or value */
#define VALIDATE_MD_KEY_MAX 128        /* bytes per metadata key */
#define VALIDATE_MD_VALUE_MAX 262144   /* bytes per metadata value */
#define VALIDATE_MD_TOTAL_MAX 524288   /* bytes of all keys and values */
#define VALIDATE_DESCRIPTION_MAX 512   /* characters of Node.description */
#define VALIDATE_QR_ID_MAX 127         /* what tpu_path_parse can hold */
#define VALIDATE_BUCKET_MAX 63         /* without dots */
#define VALIDATE_BUCKET_DOTTED_MAX 222 /* with dots */
#define VALIDATE_OBJECT_MAX 1024       /* bytes of UTF-8 */

/* A node id (nodes.create nodeId, a nodeSpec's nodeId): RFC 1035. */
int validate_node_id(const char *, char *msg, size_t msglen);
/* A queued resource id: ^[A-Za-z0-9_.~+%-]+$ (tpu.v2.json). */
int validate_qr_id(const char *, char *msg, size_t msglen);
/* A network tag of Node.tags: RFC 1035, as Compute Engine's tags. */
int validate_tag(const char *, char *msg, size_t msglen);
/* Node.description: at most 512 characters. */
int validate_description(const char *, char *msg, size_t msglen);
/* Node.labels (NULL or JSON null: none). */
int validate_labels(const cJSON *, char *msg, size_t msglen);
/* Node.metadata, a map of strings (NULL or JSON null: none). */
int validate_metadata(const cJSON *, char *msg, size_t msglen);
/* A zone name in Compute Engine's form REGION-LETTER ("us-central2-b"). */
int validate_zone(const char *, char *msg, size_t msglen);
/* Node.cidrBlock (tpu.v2.json): "must be a /29 block; the Compute
 * Engine networks API forbids a smaller block, and using a larger block
 * would be wasteful": /29 or larger (the emulator's own nodes get a
 * /20), host bits zero. */
int validate_cidr_block(const char *, char *msg, size_t msglen);
/* CustomerEncryptionKey.kmsKeyName (tpu.v2alpha1.json): projects/P/
 * locations/L/keyRings/R/cryptoKeys/K[/cryptoKeyVersions/V]. */
int validate_kms_key(const char *, char *msg, size_t msglen);
/* A Cloud Storage bucket name (buckets.insert). */
int validate_bucket(const char *, char *msg, size_t msglen);
/* A Cloud Storage object name (any write that names a new object). */
int validate_object(const char *, char *msg, size_t msglen);

/* The request bodies validate_api_fields knows. */
enum validate_body {
	VALIDATE_BODY_NODE, /* nodes.create and nodes.patch: a Node */
	VALIDATE_BODY_QR,   /* queuedResources.create: a QueuedResource */
};

/*
 * The fields one API version's schemas have and the other's lack
 * (tpu.v2.json against tpu.v2alpha1.json, revision 20240208):
 * Node.autocheckpointEnabled and bootDiskConfig,
 * QueuedResource.bestEffort, Guaranteed.reserved and
 * NodeSpec.multiNodeParams are v2alpha1's; NodeSpec.multisliceParams is
 * v2's.  The first such field of body on the other version's route:
 * -1 with Google's message ('Invalid JSON payload received. Unknown name
 * "F" at 'queued_resource': Cannot find field.') in msg and the
 * proto path of the message holding it ("queued_resource.tpu.node_spec[0]")
 * in at; 0 when there is none.
 */
int validate_api_fields(const cJSON *body, int alpha, enum validate_body,
    char *at, size_t atlen, char *msg, size_t msglen);

#endif
