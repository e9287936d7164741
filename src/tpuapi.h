/*
 * The Cloud TPU API client (tpu.googleapis.com v2, as in
 * ../shared/api/tpu.v2.json) on top of src/http: resource names, node
 * and operation calls, page following, and waiting for long-running
 * operations the way RELIABILITY.md R5 asks (growing poll interval, a
 * deadline, SIGINT stops the wait and never cancels the operation).
 */
#ifndef TPUCTL_TPUAPI_H
#define TPUCTL_TPUAPI_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

struct http;

struct tpuapi {
	struct http *http; /* borrowed */
	char *base;        /* "https://tpu.googleapis.com/" */
	char *project;
	const char *version; /* "v2" */
};

/*
 * Set up a client for project on the base URL (endpoint_base's result,
 * copied).  The http handle is borrowed.
 */
void tpuapi_init(
    struct tpuapi *, struct http *, const char *base, const char *project);
void tpuapi_release(struct tpuapi *);

/* "projects/P/locations/Z/nodes/N"; the caller frees. */
char *tpuapi_node_path(
    const struct tpuapi *, const char *zone, const char *node);

/*
 * One call: method on path (relative to the version, e.g.
 * "projects/p/locations/z/nodes/n" or with a ":start" suffix), optional
 * query string (without '?') and JSON body.  GET and DELETE are retried as
 * idempotent; other methods only with idempotent set.  On success *out
 * (if not NULL) holds the parsed reply (caller deletes); with --dry-run a
 * mutating call returns 0 and *out NULL.
 */
int tpuapi_call(struct tpuapi *, const char *method, const char *path,
    const char *query, const cJSON *body, int idempotent, cJSON **out,
    struct tpu_err *);

/*
 * List a collection under parent ("projects/p/locations/z"), following
 * nextPageToken, and return one array of the items in field (e.g.
 * "nodes").  The caller deletes *out.
 */
int tpuapi_list(struct tpuapi *, const char *parent, const char *collection,
    const char *field, cJSON **out, struct tpu_err *);
/* The same with pageSize=page_size on every request (0: the server's). */
int tpuapi_list_paged(struct tpuapi *, const char *parent,
    const char *collection, const char *field, int page_size, cJSON **out,
    struct tpu_err *);

/* The zones of the project's locations (locations.list), as an array of
 * strings.  The caller deletes *out. */
int tpuapi_zones(struct tpuapi *, cJSON **out, struct tpu_err *);

/* What a wait hook is told (see struct tpuapi_wait). */
enum tpuapi_wait_event {
	TPUAPI_WAIT_BEGIN, /* the wait starts (state NULL) */
	TPUAPI_WAIT_STATE, /* a poll found it not done yet */
	TPUAPI_WAIT_END,   /* the wait is over, however it ended */
};
/* What is being waited for, for the resume hook. */
enum tpuapi_wait_kind {
	TPUAPI_WAIT_OPERATION, /* name: the operation's short id */
	TPUAPI_WAIT_NODE,      /* name: the node */
};

/*
 * How to wait.  src/ reports, the caller (cmd/) draws and words: the
 * hooks may be NULL, and both get arg.
 */
struct tpuapi_wait {
	int64_t deadline_ms; /* tpu_now_ms() value; 0: none */
	const char *zone;    /* named in an operation's failure; may be NULL */
	/*
	 * Progress: BEGIN once, STATE after every poll that is not final
	 * (state "running" for an operation, "STATE[, HEALTH]" for a node;
	 * elapsed_ms since BEGIN), END at least once when the wait ends.
	 */
	void (*progress)(void *arg, enum tpuapi_wait_event, const char *state,
	    int64_t elapsed_ms);
	/*
	 * The command line that resumes or checks the wait, named in the
	 * timeout and interrupt messages (zone: the wait's, may be NULL for
	 * an operation).  Caller-allocated, freed by tpuapi; NULL: no hint.
	 */
	char *(*resume)(void *arg, enum tpuapi_wait_kind, const char *name,
	    const char *zone);
	void *arg;
};

/*
 * Poll an operation until it is done: 1 s, then x1.5 up to 20 s, with
 * transient poll errors retried by the http layer.  On success *result is
 * the operation's "response" (may be NULL for Empty; caller deletes).
 * The operation's own error gives TPU_E_OPERATION with its code and
 * message; the deadline gives TPU_E_TIMEOUT, SIGINT TPU_E_INTERRUPTED, and
 * both messages name the operation and the resume hook's command.
 */
int tpuapi_op_wait(struct tpuapi *, const char *opname,
    const struct tpuapi_wait *, cJSON **result, struct tpu_err *);

/*
 * Wait until a node is READY and every worker healthy (health HEALTHY or
 * absent), polling like tpuapi_op_wait.  *node (if not NULL) gets the
 * final description.  A node that turns PREEMPTED, TERMINATED or STOPPED
 * while waiting is TPU_E_OPERATION.
 */
int tpuapi_node_wait_ready(struct tpuapi *, const char *zone, const char *name,
    const struct tpuapi_wait *, cJSON **node, struct tpu_err *);

/* The operation's short id ("operation-1700000000-abc") from its name. */
const char *tpuapi_basename(const char *);

#endif
