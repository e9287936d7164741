/*
 * Cloud Storage JSON API client primitives (storage/v1) on src/http.
 *
 * One struct gcs per thread: its own http handle (keep-alive connection)
 * and the base URL of the storage service (STORAGE_EMULATOR_HOST with or
 * without a scheme, api_endpoint_overrides/storage, or the default; see
 * endpoint.h).  Handles made by gcs_clone share one token source, which
 * is serialised by a mutex, so worker threads may refresh tokens safely.
 *
 * Retries follow RELIABILITY.md R1/R3 (http_request applies the policy);
 * reads and deletes/inserts that carry a precondition or are naturally
 * idempotent are sent with HTTP_F_IDEMPOTENT (R6).  Object names are
 * percent-encoded with gcs_pct_encode in every path.
 */
#ifndef TPUCTL_GCS_H
#define TPUCTL_GCS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "http.h"

struct gcs; /* opaque */

/*
 * A handle for the storage service at base (ending in '/', as
 * endpoint_base(ENDPOINT_STORAGE) gives it): its own http handle made
 * with the options (copied), bearer tokens from fn(token_arg), which the
 * handle and its clones call under one mutex (fn need not be thread
 * safe; token_arg must outlive them).  ctx_gcs_open opens one from the
 * per-invocation context.  0 or a negative errc.
 */
int gcs_open(const char *base, const struct http_opts *, http_token_fn,
    void *token_arg, struct gcs **, struct tpu_err *);
/* Another handle for a worker thread (own http handle, same auth). */
int gcs_clone(struct gcs *, struct gcs **, struct tpu_err *);
void gcs_close(struct gcs *);
/* The service base URL, ending in '/' (for upload URLs). */
const char *gcs_base(const struct gcs *);
/* The handle's http client. */
struct http *gcs_http(struct gcs *);

struct gcs_object { /* parsed object resource */
	char *bucket, *name, *content_type, *md5_b64, *crc32c_b64, *etag;
	int64_t size, generation, metageneration;
	uint32_t crc32c;
	int has_crc32c;
	char *updated; /* RFC 3339 */
	cJSON *json;   /* the API's JSON (a copy, owned) */
};
void gcs_object_release(struct gcs_object *);
/*
 * Fill obj from an object resource (name and bucket required; size,
 * generation and metageneration are decimal strings as the API sends
 * them).  0, or TPU_E_API naming the bad field.
 */
int gcs_object_from_json(const cJSON *, struct gcs_object *, struct tpu_err *);

/* objects.get metadata; TPU_E_NOTFOUND when absent. */
int gcs_stat(struct gcs *, const char *bucket, const char *name,
    int64_t generation /* 0: latest */, struct gcs_object *, struct tpu_err *);

/* objects.list, all pages; delimiter "/" gives prefixes. */
struct gcs_list_opts {
	const char *prefix, *delimiter;
	int versions;
	int page_size; /* maxResults per page; 0: TPUCTL_GCS_PAGE_SIZE from
	                  the environment (tests), else 1000 */
};
/* Called per object or prefix; a non-zero return stops the listing and
 * is returned by gcs_list (set err too). */
typedef int (*gcs_list_fn)(void *arg, const struct gcs_object *obj,
    const char *prefix /* set instead of obj for a "directory" */);
int gcs_list(struct gcs *, const char *bucket, const struct gcs_list_opts *,
    gcs_list_fn, void *arg, struct tpu_err *);

/* objects.delete; TPU_E_NOTFOUND when absent. */
int gcs_delete(struct gcs *, const char *bucket, const char *name,
    int64_t if_generation_match /* -1: none */, struct tpu_err *);
/* objects.delete of one generation, live or noncurrent (generation=N). */
int gcs_delete_version(struct gcs *, const char *bucket, const char *name,
    int64_t generation, struct tpu_err *);
/* buckets.delete; TPU_E_NOTFOUND when absent, TPU_E_CONFLICT when the
   bucket is not empty. */
int gcs_bucket_delete(struct gcs *, const char *bucket, struct tpu_err *);
/* buckets.insert; TPU_E_CONFLICT when the name is taken. */
int gcs_bucket_insert(struct gcs *, const char *project, const char *bucket,
    const char *location /* NULL: default */, struct tpu_err *);
/* buckets.list of project, every page: fn per bucket resource (a
 * non-zero return stops the listing and is returned, with err set). */
typedef int (*gcs_bucket_fn)(void *arg, const cJSON *bucket);
int gcs_bucket_list(struct gcs *, const char *project, gcs_bucket_fn, void *arg,
    struct tpu_err *);
/* buckets.get; *out is the bucket resource (caller cJSON_Delete). */
int gcs_bucket_get(
    struct gcs *, const char *bucket, cJSON **out, struct tpu_err *);
/* rewrite (server-side copy), looping on rewriteToken until done. */
int gcs_rewrite(struct gcs *, const char *sbucket, const char *sname,
    int64_t sgeneration, const char *dbucket, const char *dname,
    int64_t if_generation_match /* -1 none, 0 no-clobber */,
    struct gcs_object *out, struct tpu_err *);
/*
 * compose sources (<= 32) into dst, each pinned to generations[i] when
 * that is > 0 (generations may be NULL); out gets the result.
 */
int gcs_compose(struct gcs *, const char *bucket, const char *const *names,
    const int64_t *generations, size_t n, const char *dst,
    const char *content_type, int64_t if_generation_match,
    struct gcs_object *out, struct tpu_err *);
/*
 * The media URL of an object ("BASE/storage/v1/b/B/o/NAME?alt=media"),
 * pinned to a generation when it is > 0.  Caller frees.
 */
char *gcs_media_url(const struct gcs *, const char *bucket, const char *name,
    int64_t generation);
/* "BASE/storage/v1/b/B/o/NAME" for base (no query).  Caller frees. */
char *gcs_object_url(const char *base, const char *bucket, const char *name);

#endif
