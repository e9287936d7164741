/*
 * Validation of the node fields that several commands take from the
 * command line ("create", "queued-resources create", "update"): metadata
 * items (KEY=VALUE or KEY=FILE), key lists (--remove-labels,
 * --remove-metadata) and descriptions.  The rules themselves live in
 * catalog.h (shared with the emulator); this module parses flag values
 * onto them.  Every function returns 0, or TPU_E_USAGE with a one-line
 * message naming the flag, the value and the rule.
 */
#ifndef TPUCTL_TPUVALID_H
#define TPUCTL_TPUVALID_H

#include <cjson/cJSON.h>

#include "err.h"

/* The largest --metadata-from-file file (the metadata value limit). */
#define TPUVALID_MAX_METADATA_FILE (256 * 1024)

/* The API's limit on Node.description, in bytes. */
#define TPUVALID_MAX_DESCRIPTION 2048

/*
 * Add "k=v,k2=v2" (--metadata) or, with from_file, "k=FILE,..."
 * (--metadata-from-file: the value is the file's contents) to obj.
 * Every item is checked with catalog_metadata_validate (raw: any
 * well-formed key); empty items, a missing '=' or key, a key given twice
 * (also across calls on the same obj) and unreadable files are errors.
 * On error obj may hold the items before the bad one.
 */
int tpuvalid_metadata_parse(
    const char *arg, int from_file, int raw, cJSON *obj, struct tpu_err *);

enum tpuvalid_keys {
	TPUVALID_LABEL_KEYS,    /* label key rule */
	TPUVALID_METADATA_KEYS, /* metadata key rule (any well-formed key) */
};

/*
 * "k1,k2" (--remove-labels, --remove-metadata) into a new array of
 * unique strings in *out (the caller deletes it; NULL on error).  flag
 * names the option in messages.  Empty items are errors; a key given
 * twice is kept once.
 */
int tpuvalid_keys_parse(const char *flag, const char *arg,
    enum tpuvalid_keys kind, cJSON **out, struct tpu_err *);

/* A description: at most TPUVALID_MAX_DESCRIPTION bytes of UTF-8 text,
 * no control characters other than tab and newline. */
int tpuvalid_description(const char *, struct tpu_err *);

/*
 * gcloud's boolean values (true/false, yes/no, 1/0, on/off; any case)
 * for "KEY=VALUE" items: *out 1 or 0.  flag and key name the item in
 * the message.
 */
int tpuvalid_bool(const char *flag, const char *key, const char *val, int *out,
    struct tpu_err *);

/*
 * --range: Node.cidrBlock, "This CIDR block must be a /29 block"
 * (tpu.v2.json): A.B.C.D/29 with the last three address bits zero.
 */
int tpuvalid_cidr29(const char *flag, const char *arg, struct tpu_err *);

/* A Cloud KMS key: projects/P/locations/L/keyRings/R/cryptoKeys/K. */
int tpuvalid_kms_key(const char *flag, const char *arg, struct tpu_err *);

/*
 * --boot-disk confidential-compute=BOOL,kms-key=KEY into a new
 * BootDiskConfig (tpu.v2alpha1.json) in *out (the caller deletes it):
 * enableConfidentialCompute and customerEncryptionKey.kmsKeyName.
 * Confidential compute needs a KMS key ("CMEK layer is required").
 */
int tpuvalid_boot_disk(const char *arg, cJSON **out, struct tpu_err *);

/*
 * --network-config network=N,subnetwork=S,external-ips=BOOL into a new
 * NetworkConfig in *out (the caller deletes it): network or subnetwork
 * is required; enableExternalIps is false unless external-ips is true
 * (gcloud's default for this flag: internal addresses only).
 */
int tpuvalid_network_config(const char *arg, cJSON **out, struct tpu_err *);

#endif
