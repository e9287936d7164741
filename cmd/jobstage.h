/*
 * The workdir archive in the staging bucket, shared by "tpuctl run
 * --stage" and "tpuctl submit": the archive uploaded once to
 * gs://BUCKET/PREFIX/HASH.tar (kept when an object of that name and size
 * is there: the name is the content's hash), and the media URL the
 * workers pull it from with their own metadata token (src/jobs.h).
 */
#ifndef TPUCTL_JOBSTAGE_H
#define TPUCTL_JOBSTAGE_H

#include "ctx.h"
#include "err.h"
#include "gcsurl.h"

/*
 * Stage tar (whose sha256 is hash) under u.  *media_url gets the URL of
 * the object's generation; *object (when not NULL) its name in the
 * bucket, and *created 1 when this call uploaded it (0: it was there).
 * Errors are prefixed with what ("--stage", "stage").  0 or an errc.
 */
int jobstage_upload(struct tpu_ctx *, const char *tar, const char *hash,
    const struct gcs_url *u, const char *what, char **media_url, char **object,
    int *created, struct tpu_err *);

/* Delete object name of bucket (a staged archive nothing uses). */
int jobstage_remove(
    struct tpu_ctx *, const char *bucket, const char *name, struct tpu_err *);

#endif
