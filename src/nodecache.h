/*
 * A short-lived cache of node descriptions, so that "tpuctl ssh" or
 * "tpuctl scp" right after "tpuctl create" (or a second run against the
 * same node) makes no TPU API call.
 *
 * One file per node: $XDG_CACHE_HOME/tpuctl/nodes/<project>/<zone>/<node>.json
 * (else ~/.cache/...; TPUCTL_CACHE_DIR overrides the "tpuctl" directory),
 * directories 0700, files 0600 written atomically (fsutil).  The file holds
 * the node's API JSON and the time it was stored.  Entries are dropped
 * when a command changes the node (delete, stop, start, update) and must
 * be refreshed by a caller whose use of the entry failed (e.g. a worker
 * refused the connection): the cache is a hint, never a source of truth.
 * An entry whose node is not READY is never returned.  Cache errors are
 * never fatal: a failed read is a miss, a failed write is logged at -v.
 * Also a miss: a file that is corrupt, readable by group or others, a
 * symlink, or describes another node; an entry stored "in the future"
 * (the wall clock went back); names that are not one safe path component
 * ([A-Za-z0-9._:-], 1-128 characters, no leading '.'), which are never
 * written either.
 */
#ifndef TPUCTL_NODECACHE_H
#define TPUCTL_NODECACHE_H

#include <stdint.h>

#include <cjson/cJSON.h>

/* Default freshness of an entry for ssh/scp/forward: 10 minutes. */
#define NODECACHE_TTL_MS (10 * 60 * 1000)

/*
 * The cached description of node in project/zone if it was stored less
 * than max_age_ms ago and its state is READY: 0 with *node set (the
 * caller deletes it), -1 on a miss.
 */
int nodecache_get(const char *project, const char *zone, const char *node,
    int64_t max_age_ms, cJSON **out);

/* Store (replace) the description of a node; one with state other than
 * READY drops the entry instead. */
void nodecache_put(
    const char *project, const char *zone, const char *node, const cJSON *desc);

/* Forget a node (it changed or its cached use failed). */
void nodecache_drop(const char *project, const char *zone, const char *node);

/*
 * The membership of a queued resource: its node ids in slice order, so
 * that "tpuctl ssh QR" run again needs no queuedResources.get.  One file
 * per queued resource under .../qrs/<project>/<zone>/<name>.json, with
 * the same rules as the node entries (safe names, 0600, no symlinks,
 * freshness on the wall clock); only an ACTIVE queued resource is stored.
 * nodecache_qr_get: 0 with *ids (a JSON array of strings; the caller
 * deletes it), -1 on a miss.
 */
int nodecache_qr_get(const char *project, const char *zone, const char *qr,
    int64_t max_age_ms, cJSON **ids);
void nodecache_qr_put(
    const char *project, const char *zone, const char *qr, const cJSON *ids);
void nodecache_qr_drop(const char *project, const char *zone, const char *qr);
/*
 * Forget every cached node of project/zone whose description names queued
 * resource qr as its owner (its "queuedResource"), whatever the entry's
 * age: the nodes go with a deleted queued resource even when its
 * membership was never cached (submit's, reached by logs).
 */
void nodecache_qr_nodes_drop(
    const char *project, const char *zone, const char *qr);
/*
 * A queued resource just created that is not ACTIVE yet (create --async):
 * no membership, but its zone is known, so nodecache_zones finds it (a
 * pending entry is a miss for nodecache_qr_get).  An entry with
 * membership is replaced by it; it ages as the others.
 */
void nodecache_qr_pending(
    const char *project, const char *zone, const char *qr);

/*
 * For shell completion: the names of the cached nodes (qrs 0) or queued
 * resources (qrs 1) of project in zone, or in every cached zone when zone
 * is NULL or "-", whatever their age, sorted and unique.  A JSON array of
 * strings the caller deletes (empty when there is no cache).
 */
cJSON *nodecache_names(const char *project, const char *zone, int qrs);

/*
 * The zones of project whose cache holds a usable entry for name (a node,
 * or a queued resource when qrs is 1) stored less than max_age_ms ago,
 * sorted: a JSON array of strings the caller deletes (empty on a miss).
 * A name given without --zone is looked for there (tpucmd_name).
 */
cJSON *nodecache_zones(
    const char *project, const char *name, int qrs, int64_t max_age_ms);

/* How old a cache entry may be to say where a name lives: a day. */
#define NODECACHE_ZONE_TTL_MS (24 * 60 * 60 * 1000LL)

#endif
