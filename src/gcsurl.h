/*
 * Cloud Storage names: gs:// URLs, bucket and object name rules, the
 * percent-encoding object names need in JSON API paths, and the mapping of
 * object names onto local paths that can never escape the destination
 * directory (RELIABILITY.md S7, S8, table 4F).
 */
#ifndef TPUCTL_GCSURL_H
#define TPUCTL_GCSURL_H

#include "err.h"

struct gcs_url {
	char *bucket; /* never NULL after a successful parse */
	char *object; /* "" for gs://bucket and gs://bucket/ */
};

/*
 * Parse "gs://bucket[/object]".  The bucket is validated; the object is
 * kept as written (it may be a prefix or end with '/').  Returns 0, or
 * TPU_E_USAGE naming the value and the rule.
 */
int gcs_url_parse(const char *, struct gcs_url *, struct tpu_err *);
void gcs_url_release(struct gcs_url *);
/* 1 if s starts with "gs://". */
int gcs_is_url(const char *);

/* Bucket names: 3-63 chars (222 with dots, 63 per part), [a-z0-9._-],
 * starting and ending with a letter or digit, not an IPv4 address, no
 * "goog" prefix, no "google".  0 or TPU_E_USAGE. */
int gcs_bucket_validate(const char *, struct tpu_err *);

/* Object names: 1-1024 bytes of valid UTF-8, no CR or LF, not "." or
 * "..".  0 or TPU_E_USAGE. */
int gcs_object_validate(const char *, struct tpu_err *);

/*
 * Percent-encode everything but the RFC 3986 unreserved characters, so
 * "a/b?c" becomes "a%2Fb%3Fc" as a JSON API path segment.  The caller
 * frees the result.
 */
char *gcs_pct_encode(const char *);

/*
 * The local path for object name obj copied under dir, after stripping
 * prefix (which obj must start with): dir + "/" + rest.  Refuses
 * (TPU_E_INVALID) names that would leave dir: ".." components, absolute
 * remainders, backslashes, empty components.  A name ending in '/' (a
 * "folder" placeholder) is refused too: callers skip those.  Returns a string
 * the caller frees, or NULL with err set.
 */
char *gcs_local_path(
    const char *dir, const char *prefix, const char *obj, struct tpu_err *);

/*
 * Wildcards in object names, as gsutil and gcloud storage read them: '*'
 * matches any run of characters but '/', "**" any run including '/', '?'
 * one character but '/'.  gcs_has_wildcard: 1 when obj holds one.
 * gcs_wildcard_prefix: the length of obj before its first wildcard (the
 * prefix a listing needs).  gcs_wildcard_match: 1 when name matches the
 * whole pattern.  A literal '*' or '?' in a name is matched by itself.
 */
int gcs_has_wildcard(const char *obj);
size_t gcs_wildcard_prefix(const char *obj);
int gcs_wildcard_match(const char *pattern, const char *name);

/*
 * Recursive wildcards (rm -r, cp -r): a pattern also matches "directories",
 * the prefixes of a name that end before one of its '/'.  Returns the
 * length of the shortest such prefix of name the pattern matches (name is
 * then under that "directory"), else strlen(name) when the whole name
 * matches, else 0 (no match; an empty name never matches).
 */
size_t gcs_wildcard_root(const char *pattern, const char *name);

#endif
