/*
 * The pure logic of ssh, scp and forward (cmd/sshcmd.h), kept here so the
 * unit tests and the fuzzer can reach it: the --worker and --node
 * selection parsers, the slices of a queued resource, the merge of a key
 * into the "ssh-keys" metadata value, and the output prefix.
 *
 * Selections, both flags: "all", or comma-separated items with no blanks
 * and no empty item; a number, or a range "a-b" with a <= b; duplicates
 * and overlaps are allowed (a set).  --node items may also be node ids
 * (RFC 1035 names: they start with a letter, so "p-1" is a node id and
 * "0-1" a range).  Numbers are below SSHSEL_MAX.
 */
#ifndef TPUCTL_SSHSEL_H
#define TPUCTL_SSHSEL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

/* Workers of a node, and slices of a queued resource: at most this many. */
#define SSHSEL_MAX 4096

/*
 * Parse a --worker selection against n workers: sel[0..n-1] set to 1 for
 * the chosen ones (the others are left alone).  n < 0 checks the syntax
 * only (sel unused).  0 or TPU_E_USAGE naming spec and the rule.
 */
int sshsel_workers(
    const char *spec, int n, unsigned char *sel, struct tpu_err *);

/*
 * Parse a --node selection against the n slices of a queued resource
 * whose node ids are ids[0..n-1] (slice order): sel[i] set to 1 for the
 * chosen slices.  n < 0 checks the syntax only (ids and sel unused).
 * 0 or TPU_E_USAGE naming spec and the rule, the missing slice or the
 * unknown node id (with the queued resource's nodes).
 */
int sshsel_nodes(const char *spec, const char *const *ids, int n,
    unsigned char *sel, struct tpu_err *);

/*
 * The node ids of a queued resource (API JSON), in slice order: each
 * tpu.nodeSpec[] gives its nodeId, or nodeIdPrefix-0 .. -(nodeCount-1)
 * from multisliceParams.  *ids is an array of *n strings (free with
 * sshsel_ids_free).  0, or TPU_E_API when the description holds no
 * valid node id.
 */
int sshsel_qr_nodes(const cJSON *qr, char ***ids, int *n, struct tpu_err *);
void sshsel_ids_free(char **ids, int n);

/*
 * 1 when the "ssh-keys" metadata value keys holds entry's key on a line
 * of its own: "user:type base64" compared, comments ignored, CRLF lines
 * accepted.  keys may be NULL.
 */
int sshsel_keys_has(const char *keys, const char *entry);

/*
 * The "ssh-keys" value without the lines holding entry's key
 * ("user:type base64" compared, as sshsel_keys_has does), the other
 * lines kept in order (CR dropped); "" when none is left.  keys may be
 * NULL.  The caller frees the result.
 */
char *sshsel_keys_drop(const char *keys, const char *entry);

/*
 * The "ssh-keys" value with entry ("user:type base64 comment") appended
 * on a line of its own, every existing line kept; NULL when keys already
 * holds the key (sshsel_keys_has).  The caller frees the result.
 */
char *sshsel_keys_add(const char *keys, const char *entry);

/*
 * The output prefix of a target into buf: "[w3] " for a node's worker
 * (slice < 0), "[s1/w3] " for worker 3 of slice 1 of a queued resource.
 * Truncated to fit (never overflows); returns buf.
 */
char *sshsel_prefix(char *buf, size_t size, int slice, int worker);

#endif
